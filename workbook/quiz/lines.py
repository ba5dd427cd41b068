"""Where a value sits in a JSON or YAML file, so a validation error can name the line.

JSON parse errors carry their own line (``json.JSONDecodeError.lineno``). For a schema error the
path inside the document (``questions / 2 / options``) is mapped to a line through YAML's node
marks: JSON is YAML, so one composer serves both formats. If the text cannot be composed that
way, the key's name is searched for instead.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbook.errors import QuizFileError
from workbook.lazy_imports import load_jsonschema

if TYPE_CHECKING:
    import jsonschema


def read_document(path: Path) -> tuple[Any, str]:
    """Parse a ``.json``, ``.yaml`` or ``.yml`` file; the document and its text."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise QuizFileError(path, None, f"cannot be read ({error.strerror})") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            return yaml.safe_load(text), text
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            raise QuizFileError(path, line, f"is not valid YAML: {getattr(error, 'problem', error)}") from None
    try:
        return json.loads(text), text
    except json.JSONDecodeError as error:
        raise QuizFileError(path, error.lineno, f"is not valid JSON: {error.msg} (column {error.colno})") from None


def line_of(text: str, path: Sequence[str | int]) -> int | None:
    """The 1-based line where the value at ``path`` starts (its key's line for mappings)."""
    try:
        import yaml  # installed with Jupyter; without it, fall back to searching for the key
    except ImportError:
        return _search_key(text, path)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return _search_key(text, path)
    line = node.start_mark.line + 1 if node is not None else None
    for step in path:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == step), None)
            if pair is None:
                return line
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _search_key(text: str, path: Sequence[str | int]) -> int | None:
    keys = [step for step in path if isinstance(step, str)]
    if not keys:
        return None
    position = 0
    for key in keys:
        found = text.find(f'"{key}"', position)
        if found < 0:
            break
        position = found
    return text.count("\n", 0, position) + 1


def schema_errors(document: Any, schema: dict[str, Any]) -> list[jsonschema.ValidationError]:
    """Every way ``document`` breaks ``schema`` (Draft 2020-12), deepest problems first."""
    jsonschema = load_jsonschema()  # noqa: F811 - the module itself, imported without the IRI grammar

    validator = jsonschema.Draft202012Validator(schema)
    return sorted(validator.iter_errors(document), key=lambda e: (-len(e.absolute_path), list(map(str, e.path))))


def check_schema(path: Path, document: Any, text: str, schema: dict[str, Any], *, fix: str | None = None) -> None:
    """Raise :class:`QuizFileError` naming the file and line of the first schema error."""
    jsonschema = load_jsonschema()  # noqa: F811 - the module itself, imported without the IRI grammar

    errors = schema_errors(document, schema)
    if not errors:
        return
    error = jsonschema.exceptions.best_match(errors)
    where = "/".join(str(step) for step in error.absolute_path) or "(top level)"
    more = f" (and {len(errors) - 1} more problem{'s' * (len(errors) > 2)})" if len(errors) > 1 else ""
    raise QuizFileError(path, line_of(text, list(error.absolute_path)), f"at {where}: {error.message}{more}", fix=fix)
