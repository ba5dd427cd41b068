"""The patterns' tables of work: one row per measured call (:func:`workbook.calls.measure_call`), the
explain rows beside a filter, and the progress bar over a pattern's load steps."""

from __future__ import annotations

from typing import Any

import pandas as pd

from workbook.calls import Work
from workbook.display import shell_form
from workbook.explaining import explain


def work_table(rows: dict[str, Work], index_name: str = "shape") -> pd.DataFrame:
    """One row per label (a shape, a layout, a query): the counts of each :class:`Work`."""
    frame = pd.DataFrame([{index_name: label, **work.row()} for label, work in rows.items()])
    return frame.set_index(index_name).convert_dtypes()


def load_steps(description: str, steps: int, progress: bool = True) -> Any:
    """A progress bar over a pattern's load steps (connect, each index, each collection), shown only
    past a second, as ``workbook.load``'s is."""
    from workbook.waiting import wait_bar

    return wait_bar(total=steps, desc=description, unit="step", progress=progress)


def explain_row(collection: Any, query: dict[str, Any]) -> dict[str, Any]:
    """One row of a pattern's explain table: the index its plan used and the work it did, beside the filter."""
    summary = explain(collection, query).summary()
    return {
        "index": summary["index"] or "none (COLLSCAN)",
        "keys_examined": summary["keysExamined"],
        "docs_examined": summary["docsExamined"],
        "returned": summary["nReturned"],
        "filter": shell_form(query),
    }
