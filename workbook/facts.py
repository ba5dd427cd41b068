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

MAX_BLOCKING_SORT_BYTES = 100 * 1024 * 1024
"""Memory a blocking (in-memory) sort may use before it must spill to disk or fail: 100 MiB
(``internalQueryMaxBlockingSortMemoryUsageBytes``, explain's ``memLimit``); beyond it the server fails
with :data:`QUERY_EXCEEDED_MEMORY_LIMIT` unless ``allowDiskUse`` is on (the default since 6.0)."""

TRANSIENT_TRANSACTION_ERROR = "TransientTransactionError"
"""The error label that tells drivers (``with_transaction``) to retry the whole transaction."""

# MongoDB's error codes (src/mongo/base/error_codes.yml), by the name the server gives them.
BAD_VALUE = 2
"""A value of the right type that is not allowed (``BadValue``)."""
UNAUTHORIZED = 13
"""A command the caller is not authorised to run (``Unauthorized``)."""
TYPE_MISMATCH = 14
"""A value of the wrong type (``TypeMismatch``)."""
OVERFLOW = 15
"""A document nested deeper than :data:`MAX_NESTING_DEPTH` levels (``Overflow``)."""
NAMESPACE_NOT_FOUND = 26
"""A collection or database that does not exist (``NamespaceNotFound``)."""
NAMESPACE_EXISTS = 48
"""A collection created where one already exists (``NamespaceExists``)."""
DOLLAR_PREFIXED_FIELD = 52
"""A field name starting with ``$`` where none is allowed (``DollarPrefixedFieldName``)."""
CANNOT_CREATE_INDEX = 67
"""An index that cannot be added, e.g. the 65th (``CannotCreateIndex``)."""
INVALID_OPTIONS = 72
"""Options that do not go together (``InvalidOptions``)."""
WRITE_CONFLICT = 112
"""A write that collided with another transaction's (``WriteConflict``)."""
VALIDATION_FAILED = 121
"""A write the collection's validator refused (``DocumentValidationFailure``)."""
VIEW_WRITE_REFUSED = 166
"""A write or index sent to a view (``CommandNotSupportedOnView``)."""
PARALLEL_ARRAYS = 171
"""A compound index over two arrays of one document (``CannotIndexParallelArrays``)."""
NO_SUCH_TRANSACTION = 251
"""A transaction number the server does not know, or one already aborted (``NoSuchTransaction``)."""
QUERY_EXCEEDED_MEMORY_LIMIT = 292
"""A blocking sort over :data:`MAX_BLOCKING_SORT_BYTES` without ``allowDiskUse``."""
TOO_LARGE_ON_INSERT = BAD_VALUE
"""Inserting a document over :data:`MAX_BSON_SIZE`: ``BadValue``, "object to insert too large" (jstests
core/max_doc_size.js)."""
BSON_OBJECT_TOO_LARGE = 10334
"""A document the server makes over its limit, an aggregation result among them (``BSONObjectTooLarge``)."""
DUPLICATE_KEY = 11000
"""A second document with the same key in a unique index (``DuplicateKey``)."""
TOO_MANY_COMPOUND_KEYS = 13103
"""A compound index of more than :data:`MAX_COMPOUND_INDEX_FIELDS` fields ("too many compound keys")."""
TOO_LARGE_AFTER_UPDATE = 17419
"""An update whose resulting document is over :data:`MAX_BSON_SIZE`."""
TOO_LARGE_TO_UPSERT = 17420
"""An upsert whose inserted document is over :data:`MAX_BSON_SIZE` (jstests core/max_doc_size.js)."""


def bson_size(document: Mapping[str, Any]) -> int:
    """Size in bytes of ``document`` encoded as BSON, as ``$bsonSize`` reports it."""
    return len(bson.encode(document))
