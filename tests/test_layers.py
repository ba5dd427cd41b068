"""The package's layers: no import cycles, the pure layer never imports the database layer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "workbook"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def imports(module: str, *, module_level_only: bool, source: str | None = None) -> set[str]:
    """Workbook modules ``module`` imports (each package on the way counts: importing a.b.c runs a.b).

    ``module_level_only=False`` also reads imports inside functions and classes; imports under
    ``if TYPE_CHECKING:`` never count. ``source`` replaces the module's file (for the self-test).
    """
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and _is_type_checking(node):
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parent + ([base] if base else []))
                found.add(base)
                found.update(f"{base}.{alias.name}" for alias in node.names)
            elif not module_level_only or isinstance(node, ast.If | ast.Try | ast.With):
                visit([child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt)])
                if isinstance(node, ast.If | ast.Try):
                    visit(getattr(node, "orelse", []) + sum((h.body for h in getattr(node, "handlers", [])), []))

    visit(tree.body)
    targets = set()
    for name in found:
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            candidate = ".".join(parts[:end])
            own_ancestor = module.startswith(candidate + ".")  # already initialising when ``module`` runs
            if candidate in MODULES and candidate != module and not own_ancestor:
                targets.add(candidate)
    return targets


def _first_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle in ``graph`` (module -> modules it imports), or None if there is none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return stack[stack.index(target) :] + [target]
            if target not in state and (found := walk(target)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := walk(module)):
            return found
    return None


def test_no_import_cycles_at_module_level() -> None:
    cycle = _first_cycle({module: imports(module, module_level_only=True) for module in MODULES})
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_import_cycles_at_call_time() -> None:
    """An import inside a function is an edge too: a cycle moved into a function is still a cycle.

    Remove one by moving the shared piece into a lower module, not by hiding the import.
    """
    cycle = _first_cycle({module: imports(module, module_level_only=False) for module in MODULES})
    assert cycle is None, "import cycle (counting imports inside functions): " + " -> ".join(cycle or [])


def test_the_cycle_finder_sees_imports_inside_functions() -> None:
    """The checks above can fail: a call-time import back is a cycle, a TYPE_CHECKING one is not."""
    graph = {"a": {"b"}, "b": {"a"}, "c": set()}
    assert _first_cycle(graph) == ["a", "b", "a"]
    assert _first_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from workbook import daily\n"
        "def f():\n    from workbook import charts\n"
    )
    assert imports("workbook.sizes", module_level_only=False, source=source) == {"workbook.charts"}
    assert imports("workbook.sizes", module_level_only=True, source=source) == set()


DATABASE_LAYER = ("pymongo", "workbook.operations", "workbook.connection", "workbook.offline", "workbook.loading")


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("workbook.shapes")))
def test_the_shape_layer_is_pure(module: str) -> None:
    source = MODULES[module].read_text(encoding="utf-8")
    used = imports(module, module_level_only=False)
    assert not any(m.startswith(DATABASE_LAYER) for m in used), used
    assert "import pymongo" not in source and "from pymongo" not in source


def test_charts_do_not_import_the_engine_adapter() -> None:
    used = imports("workbook.charts", module_level_only=False)
    assert "workbook.offline" not in used and "workbook.facts" in used


def test_facts_are_pure() -> None:
    assert imports("workbook.facts", module_level_only=False) == set()


def test_every_real_server_variant_carries_the_mongodb_mark() -> None:
    """``pytest -m mongodb`` is how CI runs the real-server tests: each engine's mongodb variant must be selected."""
    from tests.conftest import ENGINES

    mongodb = [param for param in ENGINES if getattr(param, "values", None) == ("mongodb",)]
    assert mongodb and any(mark.name == "mongodb" for mark in mongodb[0].marks)


def test_no_module_is_named_after_the_function_it_exports() -> None:
    """``workbook.load`` is a function, never also a module (``workbook.explain`` lives in ``workbook.explaining``)."""
    import workbook

    submodules = {name.split(".")[1] for name in MODULES if name.count(".") >= 1}
    colliding = {name for name in workbook.__all__ if name in submodules}
    assert not colliding, f"rename the module or the function: {sorted(colliding)}"


MAINTAINER_TOOLS = "workbook.dev"
MAY_CALL_MAINTAINER_TOOLS = {
    "workbook.__main__": "the command line dispatches bench, diffcheck and conformance",
}


def test_the_learners_api_does_not_import_the_maintainer_tools() -> None:
    """``workbook.dev`` (bench, diffcheck, conformance) stays apart: only the command line reaches into it."""
    users = {
        module
        for module in MODULES
        if not module.startswith(MAINTAINER_TOOLS)
        and any(m.startswith(MAINTAINER_TOOLS) for m in imports(module, module_level_only=False))
    }
    assert users <= set(MAY_CALL_MAINTAINER_TOOLS), sorted(users - set(MAY_CALL_MAINTAINER_TOOLS))
    assert users == set(MAY_CALL_MAINTAINER_TOOLS), "drop from MAY_CALL_MAINTAINER_TOOLS: " + str(
        sorted(set(MAY_CALL_MAINTAINER_TOOLS) - users)
    )
