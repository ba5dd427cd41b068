"""The planner model's refusals: a query it does not cover, a hint naming no index."""

from __future__ import annotations

from collections.abc import Iterable

from workbook.errors import InvalidQueryError, UnknownHintError, UnsupportedByModelError

SUPPORTED = (
    "filters: field equality (also to whole arrays), $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $not, $exists, "
    "$regex, $mod, $and, $or (index-union plans), $nor, $elemMatch, $all, $size, $type, $comment; "
    "projection: field inclusion/exclusion and {$meta: 'sortKey'}; "
    "sort, limit, skip, hint, collation; aggregate: leading $match/$sort/$skip/$limit/$project, then "
    "$lookup with localField/foreignField; explain of one update or delete statement"
)

RUN_ON_A_SERVER = (
    "Run the query on a real MongoDB server: `docker compose up -d`, then set MONGODB_URI "
    "(or pass the URI to workbook.connect) and explain again."
)


def not_modelled(what: str) -> UnsupportedByModelError:
    """The refusal for a query that needs ``what``, which the model does not cover."""
    return UnsupportedByModelError(
        f"The offline planner model does not cover {what}. It supports {SUPPORTED}.", fix=RUN_ON_A_SERVER
    )


def unknown_hint(hint: object, visible: Iterable[str]) -> UnknownHintError:
    """MongoDB's refusal of a hint that names no existing (visible) index, with the valid choices."""
    return UnknownHintError(
        "error processing query: planner returned error :: caused by :: "
        f"hint provided does not correspond to an existing index (hint: {hint!r})",
        fix=f"Hint one of: {', '.join(visible)} (by name, or by its key list), or drop the hint. "
        "Hidden indexes cannot be hinted.",
    )


def invalid_query(message: str, code: int = 2) -> InvalidQueryError:
    """MongoDB's refusal of a filter it cannot parse (BadValue, or the code given), worded as the server words it."""
    error = InvalidQueryError(message, fix=f"Correct the query: MongoDB refuses it with this message (code {code}).")
    error.code = code
    return error
