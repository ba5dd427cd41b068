"""One meaning per public name: a name defined at module level in two modules is a name a reader
must disambiguate. Imports (re-exports) are not definitions and never count; every name defined
twice is either renamed or listed below with the reason it may stay."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "workbook"

SAME_ROLE_IN_EACH = "the same role in each module of one family (each dataset, shape or check defines its own)"
KNOWN = "different meanings, kept for now: rename when one of these modules is next changed"

ALLOWED: dict[str, str] = {
    # one role, defined by each member of a family of like modules
    "SIZES": SAME_ROLE_IN_EACH,
    "OPERATIONS": SAME_ROLE_IN_EACH,
    "PAGE_SIZE": SAME_ROLE_IN_EACH,
    "build_embedded": SAME_ROLE_IN_EACH,
    "build_hybrid": SAME_ROLE_IN_EACH,
    "build_referenced": SAME_ROLE_IN_EACH,
    "shapes": SAME_ROLE_IN_EACH,
    "NEWEST_FIRST": SAME_ROLE_IN_EACH,
    "newest": SAME_ROLE_IN_EACH,
    "POPULARITY_OFFSET": SAME_ROLE_IN_EACH,
    "QUANTITY": SAME_ROLE_IN_EACH,
    "WHY": "each schema-doctor check's own explanation",
    "main": "each command-line module's entry point",
    "FORMAT": "each file format's own version number (samples, quiz progress, snapshots)",
    "COLUMNS": "each module's own table columns",
    "COLLECTION": "each lesson's own scratch collection",
    "LAYOUTS": "each pattern's own layouts (paging, tree)",
    "Document": "the same alias, dict[str, Any], spelled out in modules that must not import shapes",
    "redundant_indexes": "clinic keeps the old name as an alias of redundant_index_names for notebook 11",
    "show": "workbook.quiz.show (a question) and quiz.class_view.show (the class view): notebooks call the first",
    "record": "workbook.display.record is what notebooks call; conformance and server_progress are maintainer-side",
    "learner_rows": "the class progress table, from a progress folder (quiz.report) or the server (server_progress)",
    # known debt: different meanings under one name
    "DATASETS": "dev.bench's benchmarked datasets: rename once the rows other branches add to bench.py are merged",
    "explain_aggregate": "the learner's explain of a pipeline and the planner model's (beside planner.explain_find): "
    + KNOWN,
}


def public_definitions() -> dict[str, list[str]]:
    """Public name -> the modules that define it at module level (def, class or assignment)."""
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names = [node.name]
            elif isinstance(node, ast.Assign):
                names = [target.id for target in node.targets if isinstance(target, ast.Name)]
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names = [node.target.id]
            else:
                names = []
            for name in names:
                if not name.startswith("_"):
                    found[name].append(module)
    return found


def test_no_new_public_name_is_defined_in_two_modules() -> None:
    twice = {name: modules for name, modules in public_definitions().items() if len(set(modules)) > 1}
    new = {name: modules for name, modules in twice.items() if name not in ALLOWED}
    assert not new, f"defined in more than one module: rename one, or import it from the other: {new}"


def test_the_allow_list_holds_only_names_still_defined_twice() -> None:
    twice = {name for name, modules in public_definitions().items() if len(set(modules)) > 1}
    assert not set(ALLOWED) - twice, f"no longer defined twice, drop from ALLOWED: {sorted(set(ALLOWED) - twice)}"


def test_the_names_issue_22_found_have_one_meaning_each() -> None:
    definitions = public_definitions()
    for name in ("Work", "bson_size", "IndexSpec", "Stage", "Outcome", "summarize", "nesting_depth", "measure_call"):
        assert len(set(definitions[name])) == 1, (name, definitions[name])
