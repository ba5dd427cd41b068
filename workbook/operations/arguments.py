"""Operation arguments checked against their declared types before anything reaches the database.

An id is a string: ``product_page({"$ne": None})`` would otherwise be sent as a query operator and
return some product, and ``change_price({"$exists": True}, 1.0)`` would reprice an arbitrary one.
Each operation's parameters are declared once, with type hints, on the dataset's base class
(``StoreOperations.product_page(self, product_id: str)``); every shape's implementation is checked
against that declaration.
"""

from __future__ import annotations

import functools
import inspect
import math
import typing
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from types import NoneType, UnionType
from typing import Any

from workbook.errors import ArgumentOutOfRangeError, ArgumentTypeError, WorkbookError

MINIMUMS = {"page": 0, "page_size": 1, "limit": 1, "top": 1}
"""Whole-number parameters with a lower bound, by name."""

MAX_WHOLE = 2**31 - 1
"""The largest whole number an operation takes (a page, a limit, a quantity): the largest 32-bit BSON int.
Past it a count is no real count, and a quantity of 10**30 cannot even be stored (BSON ints stop at 2**63)."""


def _out_of_range(value: Any) -> int | None:
    """The first whole number in ``value`` (or its pairs and lists) beyond +-:data:`MAX_WHOLE`, else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if abs(value) > MAX_WHOLE else None
    if isinstance(value, tuple | list):
        return next((found for item in value if (found := _out_of_range(item)) is not None), None)
    return None


_NAMES = {str: "a string", int: "a whole number", float: "a number", datetime: "a datetime", bool: "True or False"}


def describe(hint: Any) -> str:
    """A type hint in words: ``str`` -> 'a string', ``int | None`` -> 'a whole number or None'."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (UnionType, typing.Union):
        return " or ".join("None" if a is NoneType else describe(a) for a in args)
    if origin is tuple:
        return "a pair (" + ", ".join(describe(a) for a in args) + ")"
    if origin in (Iterable, list):
        item = typing.get_args(args[0]) if args else ()
        if args and typing.get_origin(args[0]) is tuple:
            return "a list of (" + ", ".join(describe(a).removeprefix("a ") for a in item) + ") pairs"
        return f"a list of {describe(args[0]).removeprefix('a ')}s" if args else "a list"
    return _NAMES.get(hint, getattr(hint, "__name__", str(hint)))


Check = Callable[[Any], tuple[bool, Any]]
"""A compiled type check: whether a value fits, and the value to pass on (an iterable becomes a list)."""


def _accept(value: Any) -> tuple[bool, Any]:
    return True, value


def compile_check(hint: Any) -> Check:
    """The check for one type hint, built once per parameter (calls only run the returned function)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return _accept
    if origin in (UnionType, typing.Union):
        options = [compile_check(option) for option in args]

        def union(value: Any) -> tuple[bool, Any]:
            for option in options:
                ok, checked = option(value)
                if ok:
                    return True, checked
            return False, value

        return union
    if hint is NoneType:
        return lambda value: (value is None, value)
    if hint is float:
        return lambda value: (
            isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value),
            value,
        )
    if hint is int:
        return lambda value: (isinstance(value, int) and not isinstance(value, bool), value)
    if origin is tuple:
        parts = [compile_check(a) for a in args]

        def pair(value: Any) -> tuple[bool, Any]:
            if not isinstance(value, tuple | list) or len(value) != len(parts):
                return False, value
            return all(part(v)[0] for part, v in zip(parts, value, strict=True)), tuple(value)

        return pair
    if origin in (Iterable, list):
        item = compile_check(args[0]) if args else _accept

        def listed(value: Any) -> tuple[bool, Any]:
            if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
                return False, value
            checked = [item(v) for v in value]
            return all(ok for ok, _ in checked), [v for _, v in checked]

        return listed
    if isinstance(hint, type):
        return lambda value: (isinstance(value, hint), value)
    return _accept  # anything fancier is the operation's own business


def check_arguments(function: Callable[..., Any], declared: Callable[..., Any], operation: str) -> Callable[..., Any]:
    """``function`` with its arguments checked against ``declared``'s signature and type hints."""
    signature = inspect.signature(declared)
    parameters = list(signature.parameters.values())[1:]
    positional = [p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD]
    required = sum(1 for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty)
    checks: dict[str, Check] = {}
    hints: dict[str, Any] = {}

    def check(name: str, value: Any) -> Any:
        if not checks:  # type hints are strings until first use (``from __future__ import annotations``)
            hints.update(typing.get_type_hints(declared))
            checks.update({p.name: compile_check(hints.get(p.name, Any)) for p in parameters})
        ok, passed = checks[name](value)
        huge = _out_of_range(passed) if ok else None
        if huge is not None:
            raise ArgumentOutOfRangeError(
                f"{operation}()'s {name} holds {huge:,}, beyond the largest whole number an operation takes "
                f"({MAX_WHOLE:,}, the largest 32-bit BSON int): no page, limit or quantity is that large.",
                fix=f"Call it as {operation}{_shown(signature)} with a realistic number.",
            )
        if not ok:
            raise ArgumentTypeError(
                f"{operation}()'s {name}",
                value,
                describe(hints.get(name, Any)),
                fix=f"Call it as {operation}{_shown(signature)}; ids are plain strings such as 'prod-000013'.",
            )
        minimum = MINIMUMS.get(name)
        if minimum is not None and passed < minimum:
            raise ArgumentTypeError(
                f"{operation}()'s {name}",
                value,
                f"a whole number >= {minimum}",
                fix=f"Call it as {operation}{_shown(signature)}.",
            )
        return passed

    @functools.wraps(function)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and required <= len(args) <= len(positional):  # the usual call: no binding needed
            return function(self, *[check(name, value) for name, value in zip(positional, args, strict=False)])
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as error:
            raise WorkbookError(
                f"{operation}() was called with the wrong arguments ({error}).",
                fix=f"Call it as {operation}{_shown(signature)}.",
            ) from None
        for name, value in list(bound.arguments.items())[1:]:
            bound.arguments[name] = check(name, value)
        return function(*bound.args, **bound.kwargs)

    return checked


def _shown(signature: inspect.Signature) -> str:
    """The parameters as a learner writes them: ``(product_id, page=0)``, without type hints."""
    shown = []
    for parameter in list(signature.parameters.values())[1:]:
        if parameter.kind is parameter.KEYWORD_ONLY and "*" not in shown:
            shown.append("*")
        default = "" if parameter.default is parameter.empty else f"={parameter.default!r}"
        shown.append(parameter.name + default)
    return "(" + ", ".join(shown) + ")"
