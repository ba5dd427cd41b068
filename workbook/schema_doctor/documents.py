"""Anti-pattern 2, bloated documents: big against what the hot read needs, near the limit, or mostly binary."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from workbook.schema_doctor.collections import to_mongosh
from workbook.schema_doctor.context import Context
from workbook.schema_doctor.lessons import BLOATED_DOCUMENTS
from workbook.schema_doctor.observe import Observation
from workbook.schema_doctor.report import Finding, Severity

WHY = (
    "The server reads and caches whole documents: a projection saves network bytes, not cache. Documents much "
    "bigger than what the hot path reads push the working set out of RAM, and reads start going to disk."
)


def check_documents(ctx: Context, observations: list[Observation]) -> Iterator[Finding]:
    """Findings per collection: hot reads far smaller than the average document, huge documents, binary payloads."""
    for collection in ctx.examined():
        ctx.budget.check()
        yield from _sampled(ctx, collection)
        finding = _against_workload(ctx, collection, observations)
        if finding is not None:
            yield finding


def _sampled(ctx: Context, collection: str) -> list[Finding]:
    sample = ctx.sample(collection)
    limits = ctx.thresholds
    findings = []
    huge = [d for d in sample.documents if d.bytes >= limits.large_document_bytes]
    if huge:
        biggest = max(huge, key=lambda d: d.bytes)
        findings.append(
            Finding(
                BLOATED_DOCUMENTS,
                Severity.CRITICAL,
                collection,
                f"{len(huge):,} of {len(sample.documents):,} documents read are over "
                f"{limits.large_document_bytes / 1e6:.0f} MB; the biggest ({biggest.id!r}) is {biggest.bytes:,} bytes",
                {
                    "documents_over": len(huge),
                    "threshold_bytes": limits.large_document_bytes,
                    "biggest_id": biggest.id,
                    "biggest_bytes": biggest.bytes,
                    "largest_field": biggest.largest.name if biggest.largest else None,
                    "documents_read": len(sample.documents),
                    "whole_collection": sample.whole_collection,
                },
                WHY + " Past 16 MiB the write fails.",
                "Split the document along access lines: keep the fields the hot path reads, move the rest (or the "
                "growing part) to a collection that shares the _id.",
                _split_command(collection, [biggest.largest.name] if biggest.largest else ["<cold fields>"]),
            )
        )
    floor = limits.binary_field_bytes  # no field is bigger than its document: smaller ones are not looked into
    largest = [field for d in sample.documents if d.bytes >= floor and (field := d.largest) is not None]
    binary = [field for field in largest if field.type == "binData" and field.bytes >= floor]
    if binary:
        fields = sorted({field.name for field in binary})
        average = sum(field.bytes for field in binary) / len(binary)
        findings.append(
            Finding(
                BLOATED_DOCUMENTS,
                Severity.WARNING,
                f"{collection}.{fields[0]}",
                f"in {len(binary):,} of {len(sample.documents):,} documents read the largest field is a binary "
                f"({', '.join(fields)}), {average:,.0f} bytes on average",
                {
                    "fields": fields,
                    "documents": len(binary),
                    "avg_binary_bytes": round(average),
                    "threshold_bytes": limits.binary_field_bytes,
                },
                WHY + " Binary payloads are the least likely part of a document to be needed on every read.",
                "Store the binary in object storage or GridFS and keep its URL or file id in the document.",
                binary_move_command(collection, fields[0]),
            )
        )
    return findings


def _against_workload(ctx: Context, collection: str, observations: list[Observation]) -> Finding | None:
    """The hottest operation that fetches documents of ``collection``: bytes per document against avgObjSize."""
    limits = ctx.thresholds
    for observation in sorted(observations, key=lambda o: -o.per_second):
        sent = [
            s
            for call in observation.calls
            for s in call
            if s.collection == collection and s.name in ("find", "getMore")
        ]
        returned_docs = sum(s.reply_docs for s in sent)
        if not returned_docs:
            continue
        per_document = sum(s.reply_bytes for s in sent) / returned_docs
        stats = ctx.stats(collection)
        average = float(stats.get("avgObjSize", 0) or 0)
        ratio = average / per_document if per_document else 0.0
        if ratio < limits.bloat_ratio or average < limits.bloat_min_bytes:
            return None
        projected = {k for s in sent for k in (s.projection or {})}
        fields = _cold_fields(ctx, collection, projected)
        return Finding(
            BLOATED_DOCUMENTS,
            Severity.WARNING,
            collection,
            f"{observation.operation} ({observation.per_second:g}/s, the hottest read of {collection}) gets "
            f"{per_document:,.0f} bytes per document; the average document is {average:,.0f} bytes ({ratio:,.0f}x)",
            {
                "operation": observation.operation,
                "per_second": observation.per_second,
                "bytes_per_document_returned": round(per_document),
                "avg_obj_size": round(average),
                "ratio": round(ratio, 1),
                "threshold_ratio": limits.bloat_ratio,
                "documents": stats.get("count"),
                "cold_fields": fields,
            },
            WHY,
            f"Keep what {observation.operation} reads in {collection}; move the cold fields "
            f"({', '.join(fields) or 'the rest'}) to {collection}_details with the same _id.",
            _split_command(collection, fields or ["<cold fields>"]),
        )
    return None


def _cold_fields(ctx: Context, collection: str, projected: set[str]) -> list[str]:
    """Fields the hot read leaves out, biggest first (from the sample)."""
    if not projected:
        return []
    sizes: dict[str, int] = {}
    for document in ctx.sample(collection).documents:
        for f in document.fields:
            top = f.name
            if top != "_id" and not any(p == top or p.startswith(top + ".") for p in projected):
                sizes[top] = sizes.get(top, 0) + f.bytes
    return [name for name, _ in sorted(sizes.items(), key=lambda item: -item[1])][:5]


def split_pipeline(collection: str, fields: list[str]) -> list[dict[str, Any]]:
    """The printed fix's first step: copy ``fields`` (with ``_id``) to ``<collection>_details``."""
    return [
        {"$project": {field: 1 for field in fields}},
        {"$merge": {"into": f"{collection}_details", "on": "_id"}},
    ]


def split_unset(fields: list[str]) -> dict[str, Any]:
    """The printed fix's last step, once reads have moved: the update that removes ``fields`` from the parent."""
    return {"$unset": {field: "" for field in fields}}


FILE_ID = "fileId"
"""The placeholder the printed GridFS fix names the uploaded file's id by."""


def binary_move_update(field: str, file_id: Any) -> dict[str, Any]:
    """The printed GridFS fix's update for one document: keep the uploaded file's id, remove the payload."""
    return {"$set": {f"{field}FileId": file_id}, "$unset": {field: ""}}


def binary_move_command(collection: str, field: str) -> str:
    """The printed GridFS fix: upload each payload, then the update of :func:`binary_move_update`.

    >>> print(binary_move_command("files", "data"))
    // upload each payload to GridFS (mongofiles / a driver's GridFSBucket), then, with its file id:
    db.files.updateOne({_id: id}, {$set: {dataFileId: fileId}, $unset: {data: ""}})
    """
    update = to_mongosh(binary_move_update(field, FILE_ID)).replace(f'"{FILE_ID}"', FILE_ID)
    return (
        "// upload each payload to GridFS (mongofiles / a driver's GridFSBucket), then, with its file id:\n"
        f"db.{collection}.updateOne({{_id: id}}, {update})"
    )


def _split_command(collection: str, fields: list[str]) -> str:
    return (
        f"db.{collection}.aggregate({to_mongosh(split_pipeline(collection, fields))})\n"
        f"// switch the reads that need them to {collection}_details, then:\n"
        f"db.{collection}.updateMany({{}}, {to_mongosh(split_unset(fields))})"
    )
