"""The README's Python snippet runs as written, and each step uses what the one before returned."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def readme_snippet() -> str:
    """The first ```python block of README.md, verbatim."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.DOTALL)
    assert blocks, "README.md has no ```python block"
    return blocks[0]


def test_the_readme_snippet_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    import workbook

    monkeypatch.setenv("WORKBOOK_LEARNER", "readme")
    monkeypatch.delenv("MONGODB_URI", raising=False)
    names: dict[str, object] = {}
    try:
        exec(compile(readme_snippet(), str(README), "exec"), names)
        hybrid, shapes, runs = names["hybrid"], names["shapes"], names["runs"]
        assert isinstance(hybrid, workbook.LoadedShape) and hybrid.db.name == "workbench_readme_store_hybrid"
        assert {s.shape for s in shapes} == set(workbook.SHAPE_NAMES)  # type: ignore[attr-defined]
        assert set(runs["shape"]) == set(workbook.SHAPE_NAMES)  # type: ignore[index]
        assert hybrid.ops.product_page("prod-000013")["_id"] == "prod-000013"  # type: ignore[attr-defined]
    finally:
        workbook.reset()


def test_the_snippet_reads_what_it_loaded_not_an_empty_default_database() -> None:
    snippet = readme_snippet()
    assert "workbook.explain(hybrid[" in snippet  # the collection load() filled, not connect()'s default database
    assert "run_workload(shapes)" in snippet and "size_table(shapes)" in snippet
