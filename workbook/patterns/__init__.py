"""Schema-design patterns the lessons build and measure: subset and computed (the product page), keyset
paging, the outlier and bucket patterns (followers), hot/cold splits and MongoDB's hard limits.

Each module is one idea; every function takes what ``workbook.load()`` returned (or a database) and
returns numbers measured the same way on real MongoDB and on the offline default: round trips and
bytes from command monitoring, keys and documents examined from explain. Nothing runs at import.
"""
