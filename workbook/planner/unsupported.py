"""The error raised when a query uses something the planner model does not cover."""

from __future__ import annotations

SUPPORTED = (
    "filters: field equality, $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists, $regex, $and; "
    "projection: field inclusion/exclusion; sort, limit, skip, hint, collation; "
    "aggregate: leading $match/$sort/$skip/$limit/$project, then $lookup with localField/foreignField"
)


class UnsupportedByModel(ValueError):
    """Raised when a query needs a MongoDB feature the offline planner model does not cover."""

    def __init__(self, what: str) -> None:
        super().__init__(
            f"The offline planner model does not cover {what}. It supports {SUPPORTED}. "
            "Run the query on a real MongoDB server (set MONGODB_URI) to see its own explain."
        )


class UnknownHint(ValueError):
    """Raised, as MongoDB does, when a hint names no existing (visible) index."""

    def __init__(self, hint: object) -> None:
        super().__init__(
            f"error processing query: planner returned error :: caused by :: "
            f"hint provided does not correspond to an existing index (hint: {hint!r})"
        )
