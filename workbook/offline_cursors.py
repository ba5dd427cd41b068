"""The offline server's cursors, batched as MongoDB batches them: at most 16 MiB of documents a batch,
each batch's documents projected when it is sent.

mongoeco's cursor store cuts batches by count alone, and a ``getMore`` without a ``batchSize`` (what
pymongo sends) took every document left. Reading 60,000 documents of 1 KB failed in pymongo
(``ProtocolError: Message length (61744868) is larger than server max message size (48000000)``),
and a large read decoded its whole remainder at once in the kernel. MongoDB ends a batch before the
document that would take it past 16 MiB, always sending at least one (``FindCommon::haveSpaceForNext``,
src/mongo/db/query/find_common.cpp); the count rules (101 first, then what fits) stay as they were.

A find the workbench answers (:mod:`workbook.offline_reads`) hands over its documents unprojected, with
the projection: a cursor keeps references to the stored documents, and each batch is projected as it
goes. Projecting the whole result first held every projected document until the last ``getMore``:
127 MiB more in notebook 02's kernel for ``{"parts.partId": 1, "parts.name": 1}`` over 40,000 products.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mongoeco.wire.cursors import WireCursorStore

from workbook.facts import MAX_BSON_SIZE
from workbook.offline_limits import engine_bson_size

BATCH_BYTES = MAX_BSON_SIZE
"""The most document bytes one batch carries (MongoDB's ``kMaxBytesToReturnToClientAtOnce``, 16 MiB)."""

Projector = Callable[[Any], Any]
"""A find's projection, applied to one stored document."""


def batch_of(
    documents: Sequence[Any], wanted: int | None, project: Projector | None = None, limit: int = BATCH_BYTES
) -> list[Any]:
    """The first batch of ``documents`` (each projected by ``project``, if given): at most ``wanted`` (all when
    None), no more than fit in ``limit`` bytes, but always one."""
    count = len(documents) if not wanted else min(wanted, len(documents))
    if count <= 1:  # one document is always sent, whatever its size: nothing to measure (a find_one)
        return [document if project is None else project(document) for document in documents[:count]]
    batch: list[Any] = []
    total = 0
    for number in range(count):
        document = documents[number] if project is None else project(documents[number])
        size = engine_bson_size(document)
        if number and total + size > limit:
            break
        total += size
        batch.append(document)
    return batch


def _requested(value: Any) -> int | None:
    """A batch size the command asks for, or None (none, or a malformed one mongoeco refuses by its own words)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class SizedCursors(WireCursorStore):
    """mongoeco's cursor store, with each batch cut at 16 MiB as well as at its count, and projected as sent."""

    def __init__(self) -> None:
        super().__init__()
        self._projections: dict[int, Projector] = {}

    def clear(self) -> None:
        super().clear()
        self._projections.clear()

    def materialize_command_result(
        self,
        command_document: dict[str, Any],
        result: dict[str, Any],
        *,
        lsid: Any = None,
        connection: Any = None,
        project: Projector | None = None,
    ) -> dict[str, Any]:
        """mongoeco's, with the first batch cut at 16 MiB; ``project``: each document's projection, for a
        find whose ``firstBatch`` holds the stored documents (applied to each batch as it is sent)."""
        cursor = result.get("cursor")
        documents = cursor.get("firstBatch") if isinstance(cursor, dict) else None
        spec = command_document.get("cursor")
        asked = command_document.get("batchSize", spec.get("batchSize") if isinstance(spec, dict) else None)
        if not isinstance(cursor, dict) or not isinstance(documents, list) or not documents:
            return super().materialize_command_result(command_document, result, lsid=lsid, connection=connection)
        if asked == 0 and type(asked) is int:  # MongoDB: an empty first batch and a cursor over everything
            held = {**result, "cursor": {**cursor, "firstBatch": [None, *documents]}}  # mongoeco keeps all but one
            reply = super().materialize_command_result(
                {**command_document, "batchSize": 1}, held, lsid=lsid, connection=connection
            )
            reply["cursor"]["firstBatch"] = []
            if project is not None:
                self._projections[reply["cursor"]["id"]] = project
            return reply
        if asked is not None and _requested(asked) is None:  # malformed: mongoeco's refusal, in its words
            cursor["firstBatch"] = documents if project is None else [project(document) for document in documents]
            return super().materialize_command_result(command_document, result, lsid=lsid, connection=connection)
        batch = batch_of(documents, _requested(asked), project)
        if len(batch) < len(documents):
            command_document = {**command_document, "batchSize": len(batch)}
        reply = super().materialize_command_result(command_document, result, lsid=lsid, connection=connection)
        reply["cursor"]["firstBatch"] = batch
        if project is not None and reply["cursor"]["id"]:
            self._projections[reply["cursor"]["id"]] = project
        return reply

    def get_more(
        self, command_document: dict[str, Any], *, db_name: str, lsid: Any = None, connection: Any = None
    ) -> dict[str, Any]:
        cursor_id = command_document.get("getMore")
        state = self._state.get(cursor_id) if isinstance(cursor_id, int) else None
        asked = command_document.get("batchSize")
        if state is None or not isinstance(cursor_id, int) or (asked not in (None, 0) and _requested(asked) is None):
            return super().get_more(command_document, db_name=db_name, lsid=lsid, connection=connection)
        remaining = state.remaining_batch
        batch = batch_of(remaining, _requested(asked), self._projections.get(cursor_id))
        reply = super().get_more(
            {**command_document, "batchSize": len(batch)}, db_name=db_name, lsid=lsid, connection=connection
        )  # checked as mongoeco checks it (namespace, session, user); then the batch made here is sent
        reply["cursor"]["nextBatch"] = batch
        if not reply["cursor"]["id"]:
            self._projections.pop(cursor_id, None)
        return reply

    def kill_cursors(
        self, command_document: dict[str, Any], *, db_name: str, lsid: Any = None, connection: Any = None
    ) -> dict[str, Any]:
        reply = super().kill_cursors(command_document, db_name=db_name, lsid=lsid, connection=connection)
        for cursor_id in reply.get("cursorsKilled") or []:
            self._projections.pop(cursor_id, None)
        return reply
