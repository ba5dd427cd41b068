"""MongoDB's limits and defaults that lessons and code rely on, in one pure module (like ``bson``'s constants).

Values are MongoDB 8.0's, from the manual's "MongoDB Limits and Thresholds" page and the server's
``hello`` reply (``maxBsonObjectSize``, ``maxMessageSizeBytes``, ``maxWriteBatchSize``). Nothing here
talks to a server: the offline default, loading, sizes and charts import these instead of their own copies.

>>> MAX_BSON_SIZE == 16 * 1024 * 1024
True
>>> bson_size({"_id": 1})
14
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import bson

MAX_BSON_SIZE = 16 * 1024 * 1024
"""The hard limit on one document: 16 MiB (``maxBsonObjectSize``); writes of a bigger document fail."""

TIMESERIES_MEASUREMENT_MB = 4
"""The largest measurement (one document inserted) a time-series collection takes: 4 MB, by the manual's
"Time Series Collection Limitations"."""

MAX_NESTING_DEPTH = 100
"""Levels of nested documents and arrays a document may have."""

MAX_INDEXES_PER_COLLECTION = 64
"""Indexes a collection may have, ``_id`` included."""

MAX_COMPOUND_INDEX_FIELDS = 32
"""Fields one compound index may list."""

FIRST_BATCH_DOCUMENTS = 101
"""Documents in a cursor's first batch unless the query says otherwise (then 16 MiB per ``getMore``)."""

MAX_MESSAGE_BYTES = 48_000_000
"""The largest wire-protocol message (``maxMessageSizeBytes``)."""

MAX_WRITE_BATCH = 100_000
"""Writes in one ``insert``/``update``/``delete`` command (``maxWriteBatchSize``); drivers split bigger batches."""

MAX_DATABASE_NAME_BYTES = 63
"""Bytes in a database name (names are limited to fewer than 64 characters)."""


def bson_size(document: Mapping[str, Any]) -> int:
    """Size in bytes of ``document`` encoded as BSON, as ``$bsonSize`` reports it."""
    return len(bson.encode(document))
