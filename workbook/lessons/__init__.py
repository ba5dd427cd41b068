"""Helpers behind the course's part-2 lessons (indexes, case-insensitive search, validation).

One module per lesson; notebooks call them in one or two lines and assert what they return.
"""
