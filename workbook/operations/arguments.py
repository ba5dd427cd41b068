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

from workbook.errors import ArgumentTypeError, WorkbookError

MINIMUMS = {"page": 0, "page_size": 1, "limit": 1, "top": 1}
"""Whole-number parameters with a lower bound, by name."""

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


def _matches(value: Any, hint: Any) -> tuple[bool, Any]:
    """Whether ``value`` fits ``hint``, and the value to pass on (an iterable becomes a list)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True, value
    if origin in (UnionType, typing.Union):
        for option in args:
            ok, checked = _matches(value, option)
            if ok:
                return True, checked
        return False, value
    if hint is NoneType:
        return value is None, value
    if hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
        return ok, value
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool), value
    if origin is tuple:
        if not isinstance(value, tuple | list) or len(value) != len(args):
            return False, value
        return all(_matches(v, a)[0] for v, a in zip(value, args, strict=True)), tuple(value)
    if origin in (Iterable, list):
        if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
            return False, value
        items = list(value)
        checked = [_matches(item, args[0]) for item in items] if args else [(True, i) for i in items]
        return all(ok for ok, _ in checked), [item for _, item in checked]
    if isinstance(hint, type):
        return isinstance(value, hint), value
    return True, value  # anything fancier is the operation's own business


def check_arguments(function: Callable[..., Any], declared: Callable[..., Any], operation: str) -> Callable[..., Any]:
    """``function`` with its arguments checked against ``declared``'s signature and type hints."""
    signature = inspect.signature(declared)
    hints: dict[str, Any] | None = None

    @functools.wraps(function)
    def checked(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal hints
        if hints is None:
            hints = typing.get_type_hints(declared)
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as error:
            raise WorkbookError(
                f"{operation}() was called with the wrong arguments ({error}).",
                fix=f"Call it as {operation}{_shown(signature)}.",
            ) from None
        for name, value in list(bound.arguments.items())[1:]:
            hint = hints.get(name, Any)
            ok, passed = _matches(value, hint)
            if not ok:
                raise ArgumentTypeError(
                    f"{operation}()'s {name}",
                    value,
                    describe(hint),
                    fix=f"Call it as {operation}{_shown(signature)}; ids are plain strings such as 'prod-000013'.",
                )
            minimum = MINIMUMS.get(name)
            if minimum is not None and isinstance(passed, int) and passed < minimum:
                raise ArgumentTypeError(
                    f"{operation}()'s {name}",
                    value,
                    f"a whole number >= {minimum}",
                    fix=f"Call it as {operation}{_shown(signature)}.",
                )
            bound.arguments[name] = passed
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
