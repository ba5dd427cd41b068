"""The aggregation rules of MongoDB that mongoeco 4.11.0 answers differently, installed as small
wrappers of its functions (issue 19; ported from MongoDB's jstests in tests/test_jstests_aggregation.py).

Each installer wraps one mongoeco function and, where other modules imported it by name, rebinds it
there; every private name touched is registered in :data:`workbook.engine_compat.PRIVATE_NAMES`.
The pure rules (projection trees, computed paths, $lookup's local values) are in
:mod:`workbook.offline_aggregation`. Notes for mongoeco's maintainers: patches/aggregation-semantics.md
and patches/object-expression-missing.md. Nothing is imported from mongoeco at import time.
"""

from __future__ import annotations

import copy
import dataclasses
import datetime
import importlib
import operator
import threading
import weakref
from collections import OrderedDict
from typing import Any

from bson import ObjectId

from workbook.engine_compat import (
    _ACCUMULATOR_USERS,
    _BUCKET_USERS,
    _EXPRESSION_USERS,
    _PATH_USERS,
    _PROJECT_USERS,
    _UNION_USERS,
    _UNWIND_USERS,
    to_pymongo,
)
from workbook.offline_commands import DROP_LISTENERS, dropped
from workbook.wire_form import INT64

_OBJECT_MISSING_INSTALLED = False


def _rebind(modules: tuple[str, ...], name: str, original: Any, replacement: Any) -> None:
    """Point ``name`` in each of ``modules`` (which imported it by name) at ``replacement``, where it is
    still mongoeco's ``original``: the fix then reaches every caller, and a second install changes nothing."""
    for module in modules:
        target = importlib.import_module(module)
        if getattr(target, name, None) is original:
            setattr(target, name, replacement)


def _is_object_literal(expression: Any) -> bool:
    """Whether an aggregation expression is an object literal (``{a: "$a"}``), not an operator."""
    return (
        isinstance(expression, dict)
        and bool(expression)
        and not any(isinstance(key, str) and key.startswith("$") for key in expression)
    )


def group_id_with_null(expression: Any) -> Any:
    """A ``$group`` ``_id`` as MongoDB evaluates it: an object of one field turns a missing value
    into null (``{a: "$a"}`` groups ``{a: null}`` and ``{}`` as ``{a: null}``, SERVER-21992), while an
    object of several fields omits missing ones, like any object expression."""
    if _is_object_literal(expression) and len(expression) == 1:
        ((name, value),) = expression.items()
        return {name: {"$ifNull": [value, None]}}
    return expression


def field_path_value(document: dict[str, Any], expression: str) -> Any:
    """A field path expression's value (``"$items.price"``) where only subdocuments lie on the path: what
    mongoeco's ``evaluate_expression`` returns for it (null when missing), without the evaluation
    environment it builds first (speed: most of a ``$group``'s time over unwound documents). ``_ENGINE``
    for anything else: a variable, a literal, an array or other value part way (mongoeco then decides).

    >>> field_path_value({"a": {"b": 2}}, "$a.b"), field_path_value({"a": 1}, "$x")
    (2, None)
    >>> field_path_value({"a": [1]}, "$a.b") is _ENGINE, field_path_value({"a": 1}, "$$ROOT") is _ENGINE
    (True, True)
    """
    if len(expression) < 2 or expression[0] != "$" or expression[1] == "$":
        return _ENGINE
    path, value = expression[1:], document
    while path:
        if type(value) is not dict:
            return _ENGINE
        head, _, path = path.partition(".")
        if head not in value:
            return None
        value = value[head]
    return value


def _plain_fold(adding: bool, left: Any, right: Any) -> Any:
    """``left`` + (or ×) ``right`` for plain ``int``/``float`` operands, as mongoeco's ``bson_add`` /
    ``bson_multiply`` compute them (two ints stay an int, any float makes a float); ``_ENGINE`` when
    an int leaves int64 (mongoeco's overflow error)."""
    if type(left) is int and type(right) is int:
        result = left + right if adding else left * right
        return result if INT64[0] <= result <= INT64[1] else _ENGINE
    return float(left) + float(right) if adding else float(left) * float(right)


def plain_arithmetic(document: dict[str, Any], expression: dict[str, Any]) -> Any:
    """``{$add|$multiply: [...]}`` of field paths and literals whose values are all plain ``int`` or
    ``float``: what mongoeco's evaluator returns for it (folded left to right, an int pair as an int, any
    float as a float; null if an operand is null or missing), without its evaluation environment (speed:
    a ``$group``'s revenue, ``{$multiply: ["$price", "$quantity"]}``). ``_ENGINE`` for anything else (a
    date, a long, a decimal, an int64 overflow, a nested expression): mongoeco then decides.

    >>> plain_arithmetic({"p": 1.5, "q": 2}, {"$multiply": ["$p", "$q"]}), plain_arithmetic({}, {"$add": ["$x", 1]})
    (3.0, None)
    >>> plain_arithmetic({"q": "2"}, {"$add": ["$q", 1]}) is _ENGINE
    True
    """
    ((operator, spec),) = expression.items()
    if (operator != "$add" and operator != "$multiply") or type(spec) is not list or len(spec) < 2:
        return _ENGINE
    low, high = INT64
    values: list[Any] = []
    null = False
    for operand in spec:
        if type(operand) is str:
            operand = field_path_value(document, operand)
            if operand is _ENGINE:
                return _ENGINE
        kind = type(operand)
        if operand is None:
            null = True
        elif kind is float or (kind is int and low <= operand <= high):
            values.append(operand)
        else:
            return _ENGINE
    if null:
        return None
    result = values[0]
    for value in values[1:]:
        result = _plain_fold(operator == "$add", result, value)
        if result is _ENGINE:
            return _ENGINE
    return result


def short_arithmetic(expression: Any) -> Any:
    """``$add``/``$multiply`` with fewer than two operands, as MongoDB evaluates them: none is 0 (or 1),
    one (or a bare operand) is that operand (nested_dotted_common_prefix.js: ``{$add: [1]}``); a
    ``$concat`` of nothing is "".

    >>> short_arithmetic({"$add": [1]}), short_arithmetic({"$multiply": []}), short_arithmetic({"$add": "$a"})
    ({'$add': [1, 0]}, 1, {'$add': ['$a', 0]})
    """
    if not isinstance(expression, dict) or len(expression) != 1:
        return expression
    ((operator, spec),) = expression.items()
    if operator == "$concat" and spec == []:
        return ""  # concat.js: the concatenation of nothing is the empty string
    if operator not in ("$add", "$multiply"):
        return expression
    identity = 0 if operator == "$add" else 1
    operands = spec if isinstance(spec, list) else [spec]
    if not operands:
        return identity
    return {operator: [operands[0], identity]} if len(operands) == 1 else expression


def _server_error(message: str, code: int) -> Exception:
    from mongoeco.core.server_errors import server_error

    return server_error(message, code=code)


def _check_operator_fields(expression: Any) -> None:
    """MongoDB's errors for an object mixing an operator with other fields: 15983 when the operator
    comes first, 16410 (a field path may not start with '$') when a plain field does (group_by_expr.js)."""
    if not isinstance(expression, dict) or len(expression) < 2:
        return
    keys = [k for k in expression if isinstance(k, str)]
    if not any(k.startswith("$") for k in keys):
        return
    if keys and keys[0].startswith("$"):
        raise _server_error(
            f"an expression specification must contain exactly one field, the name of the expression. "
            f"Found {len(expression)} fields",
            15983,
        )
    raise _server_error("FieldPath field names may not start with '$'.", 16410)


_ENGINE = object()
"""An operator rule's answer meaning: let mongoeco evaluate the expression."""
_OMITTED = object()
"""An operator rule's answer meaning: the value is missing (the field is left out)."""


def _require_args(operator: str, spec: Any, count: int) -> list[Any]:
    if not isinstance(spec, list) or len(spec) != count:
        found = len(spec) if isinstance(spec, list) else 1
        raise _server_error(f"Expression {operator} takes exactly {count} arguments. {found} were passed in.", 16020)
    return spec


def _array_elem_at(spec: Any, evaluate: Any) -> Any:
    """``$arrayElemAt`` as MongoDB evaluates it: an integral double or decimal index works, an index
    out of range is missing (not null), and 28689/28690/28691 name what is wrong (array_elem_at.js)."""
    array_arg, index_arg = _require_args("$arrayElemAt", spec, 2)
    array, index = evaluate(array_arg), evaluate(index_arg)
    if array is None or index is None:
        return None
    if not isinstance(array, list):
        raise _server_error("$arrayElemAt's first argument must be an array", 28689)
    number = _plain_number(index)
    if number is None:
        raise _server_error("$arrayElemAt's second argument must be a numeric value", 28690)
    if number != int(number) or not -(2**31) <= number < 2**31:
        raise _server_error("$arrayElemAt's second argument must be representable as a 32-bit integer", 28691)
    position = int(number)
    if position >= len(array) or position < -len(array):
        return _OMITTED
    return array[position]


def _plain_number(value: Any) -> float | None:
    import decimal

    raw = to_pymongo(value)
    if type(raw).__name__ == "Decimal128":
        raw = raw.to_decimal()
    if isinstance(raw, bool) or not isinstance(raw, int | float | decimal.Decimal):
        return None
    return float(raw)


def _in_rules(spec: Any, evaluate: Any) -> Any:
    """``$in``: two arguments (16020), the second an array (40081), as MongoDB checks (in.js)."""
    _, array_arg = _require_args("$in", spec, 2)
    if not isinstance(evaluate(array_arg), list):
        raise _server_error("$in requires an array as a second argument", 40081)
    return _ENGINE


def _cond_rules(spec: Any, evaluate: Any) -> Any:
    """``$cond``: three arguments (16020), or an object with exactly if/then/else (17080-17083; cond.js)."""
    if isinstance(spec, dict):
        unknown = [k for k in spec if k not in ("if", "then", "else")]
        if unknown:
            raise _server_error(f"Unrecognized parameter to $cond: {unknown[0]}", 17083)
        for key, code in (("if", 17080), ("then", 17081), ("else", 17082)):
            if key not in spec:
                raise _server_error(f"Missing '{key}' parameter to $cond", code)
        return _ENGINE
    _require_args("$cond", spec, 3)
    return _ENGINE


def _let_rules(spec: Any, evaluate: Any) -> Any:
    """``$let`` variable names as MongoDB parses them: a lowercase or non-ASCII first character, then
    letters, digits and underscores (ROOT may not be rebound): FailedToParse (9; let.js). Rebinding
    CURRENT is refused by name: mongoeco would answer it wrongly."""
    variables = spec.get("vars") if isinstance(spec, dict) else None
    for name in variables if isinstance(variables, dict) else ():
        if name == "CURRENT":  # mongoeco would still read field paths from the original document
            raise _server_error(
                "The offline default does not run a $let that rebinds CURRENT. Fix: run it on a real MongoDB "
                "server (docker compose up -d, then set MONGODB_URI), or name the subdocument in the paths "
                "('$nested.four' instead of rebinding CURRENT to '$nested').",
                168,
            )
        first_ok = bool(name) and (name[0].islower() or ord(name[0]) > 127)
        if not first_ok or not all(ch.isalnum() or ch == "_" or ord(ch) > 127 for ch in name):
            raise _server_error(f"'{name}' starts with an invalid character for a user variable name", 9)
    return _ENGINE


def _index_of_array_rules(spec: Any, evaluate: Any) -> Any:
    """``$indexOfArray``: the array (40090), then integral (40096) non-negative (40097) start and end,
    checked with MongoDB's codes (indexof_array.js); mongoeco then finds the index."""
    if not isinstance(spec, list) or not 2 <= len(spec) <= 4:
        return _ENGINE
    array = evaluate(spec[0])
    if array is None:
        return None
    if not isinstance(array, list):
        raise _server_error("$indexOfArray requires an array as a first argument", 40090)
    for bound in spec[2:]:
        number = _plain_number(evaluate(bound))
        if number is None or number != int(number):
            raise _server_error("$indexOfArray requires an integral starting and ending index", 40096)
        if number < 0:
            raise _server_error("$indexOfArray requires a nonnegative starting and ending index", 40097)
    return _ENGINE


def _variable_name_error(name: Any) -> Exception | None:
    """MongoDB's FailedToParse (9) for a user variable name it refuses, or None when the name is valid."""
    text = str(name)
    first_ok = bool(text) and (text[0].islower() or ord(text[0]) > 127)
    if not first_ok or not all(ch.isalnum() or ch == "_" or ord(ch) > 127 for ch in text):
        return _server_error(f"'{text}' starts with an invalid character for a user variable name", 9)
    return None


def _rebinding_current(operator: str) -> Exception:
    return _server_error(
        f"The offline default does not run a {operator} that rebinds CURRENT. Fix: run it on a real MongoDB "
        "server (docker compose up -d, then set MONGODB_URI), or name the variable ('as': 'item', then '$$item.a').",
        168,
    )


def _map_rules(spec: Any, evaluate: Any) -> Any:
    """``$map``: exactly input, as, in (16879, 16880, 16882), a valid ``as`` name (9), an array input
    (16883), as MongoDB parses it (map.js); ``as: "CURRENT"`` is refused by name."""
    if not isinstance(spec, dict):
        return _ENGINE
    unknown = [k for k in spec if k not in ("input", "as", "in")]
    if unknown:
        raise _server_error(f"Unrecognized parameter to $map: {unknown[0]}", 16879)
    if "input" not in spec:
        raise _server_error("Missing 'input' parameter to $map", 16880)
    if "in" not in spec:
        raise _server_error("Missing 'in' parameter to $map", 16882)
    name = spec.get("as", "this")
    if name == "CURRENT":
        raise _rebinding_current("$map")
    error = _variable_name_error(name)
    if error is not None:
        raise error
    items = evaluate(spec["input"])
    if items is not None and not isinstance(items, list):
        raise _server_error("input to $map must be an array not " + type(items).__name__, 16883)
    return _ENGINE


def _switch_rules(spec: Any, evaluate: Any) -> Any:
    """``$switch``: the first branch whose case is true, else the default; a missing result is left
    out, not null (switch.js). Malformed specs and no match without a default: the engine's errors."""
    branches = spec.get("branches") if isinstance(spec, dict) else None
    if not isinstance(branches, list) or not all(isinstance(b, dict) and {"case", "then"} == set(b) for b in branches):
        return _ENGINE
    for branch in branches:
        if evaluate({"$cond": [branch["case"], True, False]}) is True:
            return evaluate(branch["then"], keep_missing=True)
    return evaluate(spec["default"], keep_missing=True) if "default" in spec else _ENGINE


def _array_end(which: str) -> Any:
    def rule(spec: Any, evaluate: Any) -> Any:
        """``$first``/``$last`` of an array expression: null for nullish input, missing for an empty
        array, 28689 for anything else (first_last.js); mongoeco 4.11.0 lacks ``$last``."""
        argument = _require_args(which, spec, 1)[0] if isinstance(spec, list) else spec
        value = evaluate(argument)
        if value is None:
            return None
        if not isinstance(value, list):
            raise _server_error(f"{which}'s argument must be an array, but is {type(value).__name__}", 28689)
        if not value:
            return _OMITTED
        return value[0] if which == "$first" else value[-1]

    return rule


def _numeric_kind(value: Any) -> tuple[str, Any] | None:
    """("int" | "long" | "double", the plain number) for an engine or pymongo number, else None."""
    name = type(value).__name__
    if name in ("BsonInt64", "Int64"):
        return "long", int(getattr(value, "value", value))
    if name == "BsonInt32" or (isinstance(value, int) and not isinstance(value, bool)):
        return "int", int(getattr(value, "value", value))
    if name == "BsonDouble" or isinstance(value, float):
        return "double", float(getattr(value, "value", value))
    return None


def _mod_rules(spec: Any, evaluate: Any) -> Any:
    """``$mod`` with MongoDB's result types (ExpressionMod): fmod when the dividend is a double or the
    divisor a double that is not an int32-sized integer, else a long if either is a long, else an
    int; 16610 for a zero divisor (expression_mod.js). Decimals, nulls and errors: the engine's."""
    import math

    from mongoeco.core.bson_scalars import BsonInt64

    left_arg, right_arg = _require_args("$mod", spec, 2)
    left, right = _numeric_kind(evaluate(left_arg)), _numeric_kind(evaluate(right_arg))
    if left is None or right is None:
        return _ENGINE
    (left_kind, a), (right_kind, b) = left, right
    if b == 0:
        raise _server_error("can't $mod by zero", 16610)
    integral_right = right_kind != "double" or (math.isfinite(b) and b == int(b) and -(2**31) <= b < 2**31)
    if left_kind == "double" or not integral_right:
        return math.fmod(float(a), float(b))
    remainder = int(math.fmod(int(a), int(b)))  # the sign of the dividend, as C++'s %
    return BsonInt64(remainder) if "long" in (left_kind, right_kind) else remainder


_OPERATOR_RULES = {
    "$mod": _mod_rules,
    "$first": _array_end("$first"),
    "$last": _array_end("$last"),
    "$switch": _switch_rules,
    "$map": _map_rules,
    "$arrayElemAt": _array_elem_at,
    "$in": _in_rules,
    "$cond": _cond_rules,
    "$let": _let_rules,
    "$indexOfArray": _index_of_array_rules,
}
"""Expression operators whose arguments the workbench checks (or evaluates) as MongoDB does."""


def install_object_expression_missing() -> None:
    """Omit missing fields from object expressions, as MongoDB does: ``{x: {a: "$a", b: "$b"}}``
    on ``{b: 1}`` is ``{x: {b: 1}}`` (mongoeco 4.11.0 writes ``a: null``), so a ``$group`` on
    ``{a: "$a", b: "$b"}`` keeps ``{a: null, b: 1}`` and ``{b: 1}`` apart (groupMissing.js).

    Wraps ``runtime.evaluate_expression`` for object literals (each value evaluated with mongoeco's
    missing-aware evaluator, a missing one left out), rebinds it in the modules that imported it,
    and keeps MongoDB's one-field ``$group`` key rule (:func:`group_id_with_null`) in both of
    mongoeco's group implementations. Idempotent; see patches/object-expression-missing.md.
    """
    global _OBJECT_MISSING_INSTALLED
    if _OBJECT_MISSING_INSTALLED:
        return
    from mongoeco.core.aggregation import runtime
    from mongoeco.core.aggregation.compiled_aggregation import CompiledGroup
    from mongoeco.core.aggregation.evaluation_environment import aggregation_environment
    from mongoeco.core.aggregation.grouping_stages import _IncrementalGroup

    original = runtime.evaluate_expression
    with_missing = runtime._evaluate_expression_with_missing
    absent = (runtime._MISSING, runtime._REMOVE)  # a missing path, $$REMOVE: the field is left out

    def evaluate_expression(
        document: Any, expression: Any, variables: Any = None, *, dialect: Any = None, collation: Any = None
    ) -> Any:
        if type(expression) is str and type(document) is dict:  # speed: a field path through subdocuments
            value = field_path_value(document, expression)
            if value is not _ENGINE:
                return value
        elif type(expression) is dict and len(expression) == 1 and type(document) is dict:
            value = plain_arithmetic(document, expression)  # speed: $multiply/$add of plain numbers
            if value is not _ENGINE:
                return value
        dialect = dialect if dialect is not None else runtime.MONGODB_DIALECT_70
        expression = short_arithmetic(expression)
        _check_operator_fields(expression)
        if not _is_object_literal(expression):
            operator = next(iter(expression), None) if isinstance(expression, dict) and len(expression) == 1 else None
            if operator in _OPERATOR_RULES:

                def evaluate(argument: Any, keep_missing: bool = False) -> Any:
                    value = with_missing(document, argument, variables, dialect=dialect)
                    if value is runtime._MISSING:
                        return _OMITTED if keep_missing else None
                    return value

                answer = _OPERATOR_RULES[operator](expression[operator], evaluate)
                if answer is not _ENGINE:
                    return runtime._MISSING if answer is _OMITTED else answer
            return original(document, expression, variables, dialect=dialect, collation=collation)
        if collation is not None:
            variables = aggregation_environment(variables, collation)
        rendered: dict[str, Any] = {}
        for key, value in expression.items():
            resolved = with_missing(document, value, variables, dialect=dialect)
            if all(resolved is not sentinel for sentinel in absent):
                rendered[key] = resolved
        return rendered

    evaluate_expression.__wrapped__ = original  # type: ignore[attr-defined]  # tests/test_field_paths.py compares
    runtime.evaluate_expression = evaluate_expression
    _rebind(_EXPRESSION_USERS, "evaluate_expression", original, evaluate_expression)

    for group_class in (_IncrementalGroup, CompiledGroup):
        group_init = group_class.__init__

        def init(self: Any, spec: Any, *args: Any, __init: Any = group_init, **kwargs: Any) -> None:
            dotted = [k for k in spec if isinstance(k, str) and "." in k] if isinstance(spec, dict) else []
            if dotted:
                raise _server_error(f"The field name '{dotted[0]}' cannot contain '.'", 40235)
            if isinstance(spec, dict) and "_id" in spec:
                spec = {**spec, "_id": group_id_with_null(spec["_id"])}
            __init(self, spec, *args, **kwargs)

        group_class.__init__ = init  # type: ignore[method-assign]
    _OBJECT_MISSING_INSTALLED = True


def _install_computed_paths() -> None:
    from mongoeco.core import paths

    from workbook.offline_aggregation import set_computed_path

    original = paths.set_document_value

    def set_value(doc: Any, path: str, value: Any) -> bool:
        if not isinstance(doc, dict) or "." not in path:
            return bool(original(doc, path, value))
        set_computed_path(doc, path, value)
        return True

    _rebind(_PATH_USERS, "set_document_value", original, set_value)


def _install_projection() -> None:
    """``$project`` as MongoDB reads it: nested documents are nested projections (``{b: {a: 1}}``
    includes ``b.a``), any number or bool is a flag, and an inclusion walks arrays (computed fields
    make subdocuments of scalar elements); see :mod:`workbook.offline_aggregation`."""
    from mongoeco.core.aggregation import runtime, transform_stages

    from workbook import offline_aggregation as rules

    original = transform_stages._apply_project
    with_missing = runtime._evaluate_expression_with_missing
    absent = (runtime._MISSING, runtime._REMOVE)
    read: dict[int, tuple[Any, Any, Any, Any, Any]] = {}
    """Specs read before, by identity: (spec, a copy to tell it unchanged, dialect, flat spec, projector or None
    for an exclusion). mongoeco's compiled pipelines call this once per document with the same spec (reading
    it each time was a third of a ``$project`` over 40,000 products); the spec is held, so its id stays its own."""

    def prepared(spec: Any, variables: Any, dialect: Any) -> tuple[Any, Any]:
        found = read.get(id(spec))
        if found is not None and found[0] is spec and found[2] is dialect and found[1] == spec:
            return found[3], found[4]
        flat = rules.flatten(spec)
        original([], flat, variables, dialect=dialect)  # mongoeco's validation and MongoDB's errors
        exclusion = all(value == 0 and rules.flag(value) is not None for value in flat.values())
        projector = None if exclusion else rules.inclusion_projector(flat)
        if len(read) >= 256:
            read.clear()
        read[id(spec)] = (spec, copy.deepcopy(spec), dialect, flat, projector)
        return flat, projector

    def apply_project(
        documents: Any, spec: Any, variables: Any = None, *, dialect: Any = None, deadline: Any = None
    ) -> Any:
        dialect = dialect if dialect is not None else runtime.MONGODB_DIALECT_70
        if not isinstance(spec, dict) or not spec:
            return original(documents, spec, variables, dialect=dialect, deadline=deadline)
        flat, projector = prepared(spec, variables, dialect)
        if projector is None:
            return original(documents, flat, variables, dialect=dialect, deadline=deadline)  # exclusion
        out = []
        for document in documents:

            def evaluate(expression: Any, document: Any = document) -> Any:
                value = with_missing(document, expression, variables, dialect=dialect)
                return rules.ABSENT if any(value is sentinel for sentinel in absent) else copy.deepcopy(value)

            out.append(projector(document, evaluate))
        return out

    transform_stages._apply_project = apply_project
    _rebind(_PROJECT_USERS, "_apply_project", original, apply_project)


def _install_type_codes() -> None:
    """``$type: 6`` (undefined) and ``$type: 12`` (dbPointer), which MongoDB accepts and mongoeco
    refuses or misreads (match.js runs every code 1-18)."""
    from mongoeco.core import query_plan
    from mongoeco.core.filtering import QueryEngine

    codes = {6: ("undefined",), 12: ("dbPointer",)}
    plan_original = query_plan._normalize_type_specifier
    engine_original = getattr(QueryEngine._normalize_type_specifier, "__func__")  # noqa: B009 - unbound

    def plan_types(type_spec: Any) -> Any:
        if type(type_spec) is int and type_spec in codes:
            return codes[type_spec]
        return plan_original(type_spec)

    def engine_types(cls: Any, type_spec: Any) -> Any:
        if type(type_spec) is int and type_spec in codes:
            return codes[type_spec]
        return engine_original(cls, type_spec)

    query_plan._normalize_type_specifier = plan_types
    engine: Any = QueryEngine
    engine._normalize_type_specifier = classmethod(engine_types)


PATHLESS_OPERATORS = frozenset({"$and", "$or", "$nor", "$expr", "$where", "$comment", "$alwaysTrue", "$alwaysFalse"})
"""Operators that open an ``$elemMatch`` in its document form (MongoDB's kPathlessOperatorMap)."""


def _install_elem_match_arrays() -> None:
    """``{a: {$elemMatch: {x: null}}}`` matches an element that is itself an array, as MongoDB does
    (an array is a BSON object with fields "0", "1"...: ``x`` is missing in it; match.js); an
    ``$elemMatch`` opening with ``$or``/``$and``/``$nor`` matches each element as a document, as
    MongoDB's parser reads it (mongoeco applies the operator to the element's value:
    elemmatch_projection.js)."""
    from mongoeco.core.filtering import QueryEngine
    from mongoeco.core.query_operators import query_operator_keys

    original = getattr(QueryEngine._match_elem_match_candidate, "__func__")  # noqa: B009 - unbound

    def candidate_match(cls: Any, candidate: Any, condition: Any, **kw: Any) -> bool:
        document_form = isinstance(condition, dict) and not query_operator_keys(condition)
        pathless = isinstance(condition, dict) and bool(condition) and next(iter(condition)) in PATHLESS_OPERATORS
        if isinstance(candidate, list) and (document_form or pathless) and not kw.get("wrap_value"):
            candidate = {str(i): item for i, item in enumerate(candidate)}
        if pathless and kw.get("compiled_plan") is None:  # {$elemMatch: {$or: [...]}}: each element is a document
            if not isinstance(candidate, dict):
                return False
            return bool(cls.match(candidate, condition, dialect=kw["dialect"], collation=kw.get("collation")))
        return bool(original(cls, candidate, condition, **kw))

    engine: Any = QueryEngine
    engine._match_elem_match_candidate = classmethod(candidate_match)


def _install_bucket_rules() -> None:
    """``$bucket`` as MongoDB runs it (a $group then a $sort on _id): the output sorted by _id under
    the collation, the default bucket among the others, and a default inside the boundaries refused
    (40199; collation_bucket.js)."""
    import functools

    from mongoeco.core.aggregation import grouping_stages
    from mongoeco.core.collation import compare_with_collation

    original = grouping_stages._apply_bucket

    def apply_bucket(documents: Any, spec: Any, variables: Any = None, **kw: Any) -> Any:
        collation, dialect = kw.get("collation"), kw.get("dialect") or grouping_stages.MONGODB_DIALECT_70
        out = original(documents, spec, variables, **kw)

        def compare(left: Any, right: Any) -> int:
            return int(compare_with_collation(left, right, dialect=dialect, collation=collation))

        boundaries, default = spec["boundaries"], spec.get("default", _NO_DEFAULT)
        if default is not _NO_DEFAULT and compare(boundaries[0], default) <= 0 and compare(default, boundaries[-1]) < 0:
            raise _server_error(
                "The $bucket 'default' field must be less than the lowest boundary or greater than or equal "
                "to the highest boundary.",
                40199,
            )

        def by_id(left: Any, right: Any) -> int:
            return compare(left.get("_id"), right.get("_id"))

        return sorted(out, key=functools.cmp_to_key(by_id))

    grouping_stages._apply_bucket = apply_bucket
    _rebind(_BUCKET_USERS, "_apply_bucket", original, apply_bucket)


_NO_DEFAULT = object()


def _check_count_field(spec: Any) -> None:
    """MongoDB's codes for a bad ``$count`` field name (count.js)."""
    for bad, code, why in (
        (not isinstance(spec, str), 40156, "the count field must be a non-empty string"),
        (spec == "", 40157, "the count field must be a non-empty string"),
        (isinstance(spec, str) and spec.startswith("$"), 40158, "the count field cannot be a $-prefixed path"),
        (isinstance(spec, str) and "\x00" in spec, 40159, "the count field cannot contain a null byte"),
        (isinstance(spec, str) and "." in spec, 40160, "the count field cannot contain '.'"),
    ):
        if bad:
            raise _server_error(why, code)


def _install_count_of_nothing() -> None:
    """``$count`` of no documents returns no document, as MongoDB's ($group on null, then $project)
    does; mongoeco returns ``{count: 0}`` (lookup_numeric_field.js)."""
    from mongoeco.core.aggregation import grouping_stages

    original = grouping_stages._apply_count

    def apply_count(documents: Any, spec: Any) -> Any:
        _check_count_field(spec)
        out = original(documents, spec)
        return out if len(documents) else []

    grouping_stages._apply_count = apply_count
    _rebind(_BUCKET_USERS, "_apply_count", original, apply_count)


def _install_long_arithmetic() -> None:
    """A NumberLong stays a NumberLong through ``$inc``, ``$mul``, ``$sum``, ``$add``... whatever the
    result's size, as MongoDB's rule is (long op int is a long; only a double or a decimal widens it);
    mongoeco gives an int when the result fits in 32 bits, so ``{x: Int64(1)}`` after ``{$inc: {x: 1}}``
    read ``$type`` "int" and pymongo's own test_custom_types.py saw an int where it decodes a long."""
    from mongoeco.core import bson_scalars

    original, long = bson_scalars._wrap_numeric_result, bson_scalars.BsonInt64

    def wrap_numeric_result(left: Any, right: Any, result: Any) -> Any:
        out = original(left, right, result)
        if type(out) is bson_scalars.BsonInt32 and (isinstance(left, long) or isinstance(right, long)):
            return long(out.value)
        return out

    bson_scalars._wrap_numeric_result = wrap_numeric_result


_IMMUTABLE = frozenset({str, int, float, bool, type(None), datetime.datetime, bytes, ObjectId})


def plain_copy(value: Any) -> Any:
    """A deep copy of ``value`` that walks dicts and lists itself and keeps immutable scalars as they are
    (``copy.deepcopy`` makes a call and a memo lookup per value); any other value is ``deepcopy``'d.

    >>> original = {"a": [{"b": 1}], "c": "x"}
    >>> copied = plain_copy(original)
    >>> copied == original and copied["a"][0] is not original["a"][0]
    True
    """
    kind = type(value)
    if kind is dict:
        return {key: item if type(item) in _IMMUTABLE else plain_copy(item) for key, item in value.items()}
    if kind is list:
        return [item if type(item) in _IMMUTABLE else plain_copy(item) for item in value]
    if kind in _IMMUTABLE:
        return value
    return copy.deepcopy(value)


_ORDERED_ALIKE = frozenset({int, str, bool})
"""Types whose Python order is BSON's between two values of the same type (a str by code point is UTF-8's
byte order, MongoDB's without a collation); floats too when neither is NaN, naive datetimes too."""
_FAST_ACCUMULATORS = frozenset({"$sum", "$count", "$min", "$max", "$first", "$last"})
_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None), datetime.datetime})


def _plain_order(value: Any, current: Any) -> int | None:
    """-1, 0 or 1 as BSON orders two plain values of one type, or None when mongoeco must compare them."""
    kind = type(value)
    if kind is not type(current):
        return None
    if kind is float:
        if value != value or current != current:
            return None  # NaN sorts below every number in BSON, unordered in Python
    elif kind is datetime.datetime:
        if value.tzinfo is not None or current.tzinfo is not None:
            return None
    elif kind not in _ORDERED_ALIKE:
        return None
    return (value > current) - (value < current)


def accumulate_plain(bucket: Any, spec: tuple[str, str, Any], value: Any) -> bool:
    """Apply one ``$group`` accumulator (``spec``: field, operator, expression) to ``value``, a plain
    scalar already evaluated, exactly as mongoeco's ``_apply_accumulators`` would; False (nothing
    changed) when this case is mongoeco's to decide (a long, a decimal, mixed types to order, an
    int64 overflow)."""
    field, operator, _ = spec
    values, flags = bucket.values, bucket.flags
    kind = type(value)
    if operator == "$sum":
        if value is None or kind is bool or kind is str or kind is datetime.datetime:
            return True  # not a number: $sum skips it
        total = values[field]
        plain = kind is float or (kind is int and INT64[0] <= value <= INT64[1])
        if not plain or (type(total) is not int and type(total) is not float):
            return False  # a long or decimal total, an out-of-range literal: mongoeco's
        total = _plain_fold(True, total, value)
        if total is _ENGINE:
            return False
        values[field] = total
        return True
    if operator == "$first" or operator == "$last":
        if operator == "$last" or not flags.get(field, False):
            values[field] = value
            flags[field] = True
        return True
    if value is None:  # $min, $max skip null and missing
        return True
    if not flags.get(field, False):
        values[field] = value
        flags[field] = True
        return True
    order = _plain_order(value, values[field])
    if order is None:
        return False
    if (order < 0) if operator == "$min" else (order > 0):
        values[field] = value
    return True


def _install_plain_accumulators() -> None:
    """``$group``'s ``$sum``, ``$count``, ``$min``, ``$max``, ``$first`` and ``$last`` over plain scalars
    without mongoeco's numeric wrappers and comparison dispatch (speed: the store's monthly report spent
    a third of its ``$group`` there); every other accumulator, value, bucket or a collation still goes to
    mongoeco's ``_apply_accumulators``, one accumulator at a time. tests/test_plain_accumulators.py
    compares the two on random documents."""
    from mongoeco.core.aggregation import accumulators, runtime

    original, bucket_type, remove = accumulators._apply_accumulators, accumulators._AccumulatorBucket, runtime._REMOVE

    def apply_accumulators(bucket: Any, specs: Any, document: Any, variables: Any = None, **options: Any) -> None:
        evaluate = options.get("evaluate_expression")
        if evaluate is None or type(bucket) is not bucket_type or type(specs) is not tuple or options.get("collation"):
            original(bucket, specs, document, variables, **options)
            return
        for spec in specs:
            operator = spec[1]
            if operator == "$count":
                bucket.values[spec[0]] += 1
                continue
            if operator in _FAST_ACCUMULATORS:
                value = evaluate(document, spec[2], variables)
                value = None if value is remove else value
                if type(value) in _PLAIN_SCALARS and accumulate_plain(bucket, spec, value):
                    continue
            original(bucket, (spec,), document, variables, **options)

    apply_accumulators.__wrapped__ = original  # type: ignore[attr-defined]  # the test compares the two
    accumulators._apply_accumulators = apply_accumulators  # type: ignore[assignment]
    _rebind(_ACCUMULATOR_USERS, "_apply_accumulators", original, apply_accumulators)


def _install_unwind_copies() -> None:
    """``$unwind`` copies each document once per element, not once per element with the whole array.

    mongoeco deep-copies the whole document for every element and then puts the element in the
    copy's array place, so a document with k elements costs k copies of k elements (the store's
    monthly report: 27% of its time in ``deepcopy``). Here the document is copied once without the
    array (a placeholder keeps the field's position), and that shell is copied per element, the
    element itself placed as mongoeco places it (the same object, not a copy). Documents whose path
    runs through anything but plain dicts, and arrays under two elements, take mongoeco's own path.
    """
    from mongoeco.core.aggregation import runtime

    original = runtime._apply_unwind
    placeholder = object()

    def apply_unwind(documents: list[Any], spec: object, *, deadline: float | None = None) -> list[Any]:
        path, _, include_array_index = runtime._require_unwind_spec(spec)
        parts = path.split(".")
        result: list[Any] = []
        checkpoint = runtime.DeadlineCheckpoint(deadline)
        for document in documents:
            checkpoint()
            node, chain = document, []
            for part in parts:
                if type(node) is not dict or part not in node:
                    node = placeholder
                    break
                chain.append(node)
                node = node[part]
            if node is placeholder or type(node) is not list or len(node) < 2:
                result.extend(original([document], spec, deadline=deadline))
                continue
            shell = dict(chain[0])  # the path's dicts copied shallowly, the array's place held
            parent = shell
            for depth, part in enumerate(parts[:-1], start=1):
                parent[part] = dict(chain[depth])
                parent = parent[part]
            parent[parts[-1]] = None
            for index, item in enumerate(node):
                checkpoint()
                unwound = plain_copy(shell)
                target = unwound
                for part in parts[:-1]:
                    target = target[part]
                target[parts[-1]] = item
                if include_array_index is not None:
                    unwound[include_array_index] = runtime.BsonInt64(index)
                result.append(unwound)
        return result

    apply_unwind.__wrapped__ = original  # type: ignore[attr-defined]  # tests/test_unwind.py compares the two
    runtime._apply_unwind = apply_unwind
    _rebind(_UNWIND_USERS, "_apply_unwind", original, apply_unwind)


_union_outputs: dict[int, tuple[Any, list[Any], int]] = {}
"""Per running pipeline (the id of its variables, one environment per ``apply_pipeline``): a weak
reference to those variables, the list the last ``$unionWith`` returned and its length. Taken at the
next ``$unionWith``; dropped with the pipeline's variables (when a stage's closure holds them in a cycle,
when the collector frees them), so its documents do not outlive the pipeline."""


def _install_union_with_copies() -> None:
    """``$unionWith`` copies each document once per pipeline, not once per ``$unionWith`` after it.

    mongoeco returns a deep copy of every document the pipeline has gathered, then the foreign
    documents (themselves copies), so a pipeline of k ``$unionWith`` stages copies O(k²) documents
    (notebook 11's merge of 2,000 daily collections, 50 an aggregation: 36% of its profiled time in
    ``deepcopy``). The documents reaching a stage may be stored ones, borrowed, so the copy stays for
    those; here it is skipped only for the list this function itself returned last in the same
    pipeline, passed on unchanged (same list, same length), whose documents are all copies already:
    the earlier ones copied by the earlier ``$unionWith``, the foreign ones as mongoeco makes them.
    The foreign part is mongoeco's own function called with no documents (validation, ``$documents``,
    the foreign pipeline, deadlines and errors are its own); a source its resolver does not hold
    (mongoeco then unions the documents with copies of themselves), a resolver other than the
    cursor's loaded collections, and every other list take mongoeco's whole function.
    """
    from mongoeco.core.aggregation import join_stages, resources, runtime

    original = join_stages._apply_union_with

    def reads_its_source(spec: object, collection_resolver: Any) -> bool:
        union = runtime._require_union_with_spec(spec)  # raises what mongoeco's function would raise first
        if union["pipeline"] and "$documents" in union["pipeline"][0]:
            return True
        key = union["coll"] if union["coll"] is not None else runtime._CURRENT_COLLECTION_RESOLVER_KEY
        return isinstance(collection_resolver, resources.AggregationResources) and collection_resolver(key) is not None

    def apply_union_with(
        documents: list[Any], spec: object, collection_resolver: Any, variables: Any = None, **options: Any
    ) -> list[Any]:
        scope = id(variables)
        last = _union_outputs.pop(scope, None)
        ours = (
            last is not None
            and last[0]() is variables
            and last[1] is documents
            and len(documents) == last[2]
            and reads_its_source(spec, collection_resolver)
        )
        if ours:
            result = documents + original([], spec, collection_resolver, variables, **options)
        else:
            result = original(documents, spec, collection_resolver, variables, **options)

        def forget(_: Any) -> None:  # the pipeline is over: its last union's documents go with it
            _union_outputs.pop(scope, None)

        try:
            owner = weakref.ref(variables, forget)
        except TypeError:  # no pipeline environment (a direct call): nothing to hand on
            return result
        _union_outputs[scope] = (owner, result, len(result))
        return result

    apply_union_with.__wrapped__ = original  # type: ignore[attr-defined]  # tests/test_union_with.py compares the two
    join_stages._apply_union_with = apply_union_with
    _rebind(_UNION_USERS, "_apply_union_with", original, apply_union_with)


def _install_bucket_auto_buckets() -> None:
    """``$bucketAuto``'s ``buckets`` may be any number that is a positive 32-bit integer (a long, an
    integral double), as MongoDB takes it; mongoeco takes an int only (granularity_near_zero.js:
    ``buckets: NumberLong(8)``)."""
    from mongoeco.core import bson_scalars
    from mongoeco.core.aggregation import grouping_stages

    original = grouping_stages._apply_bucket_auto

    def apply_bucket_auto(documents: Any, spec: Any, variables: Any = None, **kw: Any) -> Any:
        if isinstance(spec, dict) and "buckets" in spec:
            buckets = spec["buckets"]
            wrapped = bson_scalars.wrap_bson_numeric(buckets) if not isinstance(buckets, bool) else None
            value = getattr(wrapped, "value", None)
            if isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer():
                whole = int(value)
                if -(2**31) <= whole < 2**31:
                    spec = {**spec, "buckets": whole}
        return original(documents, spec, variables, **kw)

    grouping_stages._apply_bucket_auto = apply_bucket_auto
    _rebind(_BUCKET_USERS, "_apply_bucket_auto", original, apply_bucket_auto)


_LOOKUP_HASH_ASSOCIATIONS = 10_000_000
"""The bound on mongoeco's ``$lookup`` hash plan (foreign values it files by equality key) when no cost
policy sets one: with none, mongoeco compares every local document with every foreign one. The plan
only removes pairs that cannot be equal; each candidate is still checked by the equality predicate."""


_FOREIGN_KEPT = 8
"""Foreign collections whose documents ``$lookup`` and ``$unionWith`` keep between aggregations."""
_foreign: OrderedDict[tuple[int, str, str], tuple[Any, list[Any], dict[Any, Any]]] = OrderedDict()
"""(engine, database, collection) -> (the contents' version, their documents as the engine reads them,
the ``$lookup`` hash plans built over them)."""
_foreign_lock = threading.Lock()


def _forget_foreign_documents(engine: Any, database: str, collection: str | None) -> None:
    """Let go of the documents kept for a dropped collection (a :data:`DROP_LISTENERS` listener)."""
    with _foreign_lock:
        for key in [k for k in _foreign if k[0] == id(engine) and dropped(database, collection, k[1:])]:
            del _foreign[key]


DROP_LISTENERS.append(_forget_foreign_documents)


def _install_foreign_documents_cache() -> None:
    """A ``$lookup`` (or ``$unionWith``) reads its foreign collection once per version, not once per call.

    mongoeco loads every document of the foreign collection for each aggregation (a find of ``{}``
    that decodes and copies each one) and builds its lookup hash plan over them again: 0.1-0.2 s for
    one product's parts from the 8,000 parts at ``small``, where MongoDB reads a few index entries,
    so the offline latency of the lookup lesson was mostly this. The documents (and each hash plan
    over them) are kept per collection while its contents are unchanged: a write replaces the
    collection's persistent map, whose identity is the version. mongoeco's stages copy what they take
    from them (``$lookup`` its matches, ``$unionWith`` every document); reads in a transaction, and
    ``$search`` pipelines (whose stages do not copy), load as before.
    """
    from mongoeco.core.aggregation import join_stages

    from workbook.engine_compat import aggregation_cursor_class

    AsyncAggregationCursor = aggregation_cursor_class()

    original_load = AsyncAggregationCursor._load_collection_documents
    original_plan = join_stages.build_bounded_lookup_hash_plan

    async def load_collection_documents(self: Any, collection_name: str) -> list[Any]:
        engine, db_name = self._collection._engine, self._collection._db_name
        storage = getattr(engine, "_storage", {}).get(db_name, {}).get(collection_name)
        session = self._session
        if storage is None or getattr(session, "in_transaction", False) or self._leading_search_stage() is not None:
            return await original_load(self, collection_name)
        key, version = (id(engine), db_name, collection_name), storage._values
        with _foreign_lock:
            found = _foreign.get(key)
            if found is not None and found[0] is version:
                _foreign.move_to_end(key)
                return found[1]
        documents = await original_load(self, collection_name)
        if engine._storage.get(db_name, {}).get(collection_name) is storage and storage._values is version:
            with _foreign_lock:  # no write ran meanwhile: these are that version's documents
                _foreign[key] = (version, documents, {})
                _foreign.move_to_end(key)
                while len(_foreign) > _FOREIGN_KEPT:
                    _foreign.popitem(last=False)
        return documents

    def build_plan(foreign: Any, foreign_field: str, **kw: Any) -> Any:
        if kw.get("max_associations") is None:  # no cost policy: mongoeco would compare every pair
            kw["max_associations"] = _LOOKUP_HASH_ASSOCIATIONS
        plans = _plans_over(foreign)
        if plans is None:
            return original_plan(foreign, foreign_field, **kw)
        plan_key = (foreign_field, id(kw.get("dialect")), kw.get("collation") is None, kw.get("max_associations"))
        plan = plans.get(plan_key)
        if plan is None:
            plan = plans[plan_key] = original_plan(foreign, foreign_field, **kw)
        if plan is None:
            return None
        return dataclasses.replace(plan, foreign=foreign, deadline=kw.get("deadline"))  # this call's deadline

    AsyncAggregationCursor._load_collection_documents = load_collection_documents
    join_stages.build_bounded_lookup_hash_plan = build_plan


def _plans_over(foreign: Any) -> dict[Any, Any] | None:
    """The hash plans kept for the foreign documents ``foreign`` holds (a copy of a kept list), or None."""
    if not isinstance(foreign, list) or not foreign:
        return None
    with _foreign_lock:
        for _, documents, plans in _foreign.values():
            if (
                len(documents) == len(foreign)
                and documents[0] is foreign[0]
                and all(map(operator.is_, documents, foreign))
            ):
                return plans
    return None


def _install_lookup_local_values() -> None:
    """``$lookup`` looks up the localField's values as MongoDB extracts them (an array's elements,
    never the array itself; null when there are none; lookup_array_semantics.js). mongoeco matches
    with query semantics on both sides; the workbench hands it each document's values in a field of
    its own, made so that the array holding them can equal nothing, and removes it afterwards."""
    import uuid

    from mongoeco.core.aggregation import join_stages

    from workbook.offline_aggregation import lookup_local_values

    original = join_stages._apply_lookup
    field = f"__workbench_lookup_{uuid.uuid4().hex}"
    unmatchable = f"\x00workbench-lookup-{uuid.uuid4().hex}"  # a string no stored document holds

    def keyed(document: Any, path: str) -> Any:
        values = lookup_local_values(document, path)
        if not values:
            return None
        if len(values) == 1 and not isinstance(values[0], list | dict):
            return values[0]
        return [*values, unmatchable]  # the array itself, and its last element, match nothing

    def apply_lookup(documents: Any, spec: Any, *args: Any, **kw: Any) -> Any:
        if not isinstance(spec, dict) or "localField" not in spec or not isinstance(spec.get("localField"), str):
            return original(documents, spec, *args, **kw)
        marked = [{**document, field: keyed(document, spec["localField"])} for document in documents]
        out = original(marked, {**spec, "localField": field}, *args, **kw)
        for document in out:
            document.pop(field, None)
        return out

    join_stages._apply_lookup = apply_lookup
    _rebind(("mongoeco.core.aggregation.stages",), "_apply_lookup", original, apply_lookup)


def _install_case_level() -> None:
    """``caseLevel: true`` below strength 3 adds case alone (ICU's case level), not every tertiary
    difference: at strength 1 "á" equals "a" but not "A" (collation_group.js). ``backwards: true``
    (French) compares the accents from the end of the word (collation_sort.js: côte < coté) without
    the ICU backend mongoeco otherwise requires for it."""
    import dataclasses as dc
    import unicodedata

    from mongoeco.core import collation as collations

    original = collations._pyuca_collation_key
    requires_icu = collations._requires_icu_backend

    def key(value: str, collation: Any) -> Any:
        if collation.backwards and not collation.numeric_ordering:
            plain = key(value, dc.replace(collation, backwards=False))
            if len(plain) >= 2 and collation.strength >= 2:
                return (plain[0], tuple(reversed(plain[1])), *plain[2:])
            return plain
        if not collation.case_level or collation.strength >= 3:
            return original(value, collation)
        letters = unicodedata.normalize("NFD", value)
        case = tuple(int(ch.isupper()) for ch in letters if unicodedata.category(ch) != "Mn" and ch.isalpha())
        return (*original(value, dc.replace(collation, case_level=False)), (2, *case))

    def needs_icu(collation: Any) -> bool:
        if collation.backwards and not collation.numeric_ordering and collations._pyuca is not None:
            return bool(requires_icu(dc.replace(collation, backwards=False)))
        return bool(requires_icu(collation))

    collations._pyuca_collation_key = key
    collations._requires_icu_backend = needs_icu


def _install_expr_expression() -> None:
    """``{$expr: e}`` inside an aggregation expression is ``e``, as MongoDB parses it
    (group_by_empty_object.js: ``{$group: {_id: {$expr: {}}}}``); mongoeco refuses the operator. The
    ``$last`` array expression, which mongoeco lacks, is registered the same way (first_last.js)."""
    from mongoeco.core.aggregation.extensions import register_aggregation_expression_operator

    def expr(document: Any, spec: Any, variables: Any, dialect: Any, context: Any) -> Any:
        return context.evaluate_expression(document, spec, variables)

    register_aggregation_expression_operator("$expr", expr)

    def last(document: Any, spec: Any, variables: Any, dialect: Any, context: Any) -> Any:
        def evaluate(argument: Any, keep_missing: bool = False) -> Any:
            value = context.evaluate_expression_with_missing(document, argument, variables)
            if value is context.missing_sentinel:
                return _OMITTED if keep_missing else None
            return value

        answer = _array_end("$last")(spec, evaluate)
        return context.missing_sentinel if answer is _OMITTED else answer

    register_aggregation_expression_operator("$last", last)  # mongoeco 4.11.0 lacks the $last expression


def decimal_of_double(value: float) -> Any:
    """A double as MongoDB turns it into a Decimal128 for decimal arithmetic: rounded to 15
    significant digits, all of them kept (12.5 is 12.5000000000000; divide.js).

    >>> decimal_of_double(12.5), decimal_of_double(0.1)
    (Decimal('12.5000000000000'), Decimal('0.100000000000000'))
    """
    import decimal

    rounded = decimal.Context(prec=15).create_decimal(value)
    if not rounded.is_finite() or rounded.is_zero():
        return rounded
    return rounded.quantize(decimal.Decimal(1).scaleb(rounded.adjusted() - 14))


def _install_divide() -> None:
    """``$divide`` (and ``$avg``'s division) answers a double, or a Decimal128 when either operand is
    one, as MongoDB does; mongoeco gives an integral quotient of a long operand the long type (10 /
    NumberLong(2) is NumberLong(5)), overflows on NumberLong(2^63-1) / 1, converts a double to a
    decimal by its shortest repr, and divides by a decimal zero without an error code (divide.js)."""
    import decimal

    from mongoeco.core import bson_scalars
    from mongoeco.core.aggregation import numeric_expressions
    from mongoeco.errors import OperationFailure

    original = bson_scalars.bson_divide
    context = decimal.Context(prec=34, Emax=6144, Emin=-6143)

    def as_decimal(wrapped: Any) -> Any:
        if isinstance(wrapped, bson_scalars.BsonDecimal128):
            return wrapped.value
        if isinstance(wrapped, bson_scalars.BsonDouble):
            return decimal_of_double(wrapped.value)
        return decimal.Decimal(int(wrapped.value))

    def divide(left: Any, right: Any) -> Any:
        wrapped_left, wrapped_right = bson_scalars.wrap_bson_numeric(left), bson_scalars.wrap_bson_numeric(right)
        if wrapped_left is None or wrapped_right is None:
            return original(left, right)  # its own refusal of a value that is not a number
        if isinstance(wrapped_left, bson_scalars.BsonDecimal128) or isinstance(
            wrapped_right, bson_scalars.BsonDecimal128
        ):
            dividend, divisor = as_decimal(wrapped_left), as_decimal(wrapped_right)
            if divisor.is_zero():
                raise OperationFailure("can't $divide by zero", code=2)
            return bson_scalars.BsonDecimal128(context.divide(dividend, divisor))
        divisor_value = float(wrapped_right.value)
        if divisor_value == 0:
            raise OperationFailure("can't $divide by zero", code=2)
        return bson_scalars.BsonDouble(float(wrapped_left.value) / divisor_value)

    bson_scalars.bson_divide = divide
    if getattr(numeric_expressions, "bson_divide", None) is original:
        numeric_expressions.bson_divide = divide


def coerces_to_true(value: Any) -> bool:
    """MongoDB's truth of a value in a boolean expression: false, null, undefined, missing and every
    numeric zero are false; everything else (an empty string or array too) is true.

    >>> [coerces_to_true(v) for v in (0, 0.0, None, False, "", [], 2)]
    [False, False, False, False, True, True, True]
    """
    from bson import Decimal128

    if value is None or value is False:
        return False
    if isinstance(value, bool):
        return True
    if isinstance(value, int | float):
        return value != 0
    if isinstance(value, Decimal128):
        return not value.to_decimal().is_zero()
    wrapped = getattr(value, "value", None)  # mongoeco's numeric wrappers
    if type(value).__name__.startswith("Bson") and isinstance(wrapped, int | float):
        return wrapped != 0
    return type(value).__name__ != "UndefinedType"


def _install_any_element_true() -> None:
    """``$anyElementTrue`` refuses an argument that is not an array, missing included, with MongoDB's
    code 5159200; mongoeco answers false for a missing one and refuses others with 28689
    (any_element_true.js)."""
    from mongoeco.core.aggregation.extensions import register_aggregation_expression_operator
    from mongoeco.errors import OperationFailure

    def any_element_true(document: Any, spec: Any, variables: Any, dialect: Any, context: Any) -> Any:
        arguments = spec if isinstance(spec, list) else [spec]
        if len(arguments) != 1:
            raise OperationFailure(
                f"Expression $anyElementTrue takes exactly 1 arguments. {len(arguments)} were passed in.", code=16020
            )
        value = context.evaluate_expression_with_missing(document, arguments[0], variables)
        if not isinstance(value, list):
            kind = "missing" if value is context.missing_sentinel else type(value).__name__
            raise OperationFailure(f"$anyElementTrue's argument must be an array, but is {kind}", code=5159200)
        return any(coerces_to_true(element) for element in value)

    register_aggregation_expression_operator("$anyElementTrue", any_element_true)


_AGGREGATION_INSTALLED = False


def install_aggregation_semantics() -> None:
    """The aggregation fixes of issue 19, each a small wrapper of one mongoeco function: object
    expressions omit missing fields, computed dotted paths walk arrays, caseLevel compares case
    alone, ``$expr`` is an expression. Idempotent; see patches/object-expression-missing.md and
    patches/aggregation-paths-and-collation.md."""
    global _AGGREGATION_INSTALLED
    if _AGGREGATION_INSTALLED:
        return
    install_object_expression_missing()
    _install_computed_paths()
    _install_projection()
    _install_case_level()
    _install_expr_expression()
    _install_type_codes()
    _install_elem_match_arrays()
    _install_bucket_rules()
    _install_count_of_nothing()
    _install_lookup_local_values()
    _install_long_arithmetic()
    _install_divide()
    _install_any_element_true()
    _install_bucket_auto_buckets()
    _install_unwind_copies()
    _install_union_with_copies()
    _install_plain_accumulators()
    _install_foreign_documents_cache()
    _AGGREGATION_INSTALLED = True
