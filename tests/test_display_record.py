"""display.record: a few named values shown as a small table, with a stable plain-text form for nbval."""

from __future__ import annotations

from workbook import display


def test_a_record_formats_counts_and_pairs_and_escapes_html():
    shown = display.record({"ratingCount": (3675.0, 3676), "share_pct": 0.384, "name": "<b>x</b>"}, caption="page")
    text = repr(shown)
    assert text.splitlines() == ["page", "ratingCount  3,675 → 3,676", "share_pct    0.384", "name         <b>x</b>"]
    html = shown._repr_html_()
    assert "3,675 → 3,676" in html and "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    assert html.count("<tr>") == 3 and "<caption" in html
    assert shown["ratingCount"] == (3675.0, 3676)  # the values stay as they were


def test_an_empty_record_and_one_without_a_caption():
    assert repr(display.record({})) == ""
    assert "<caption" not in display.record({"a": 1})._repr_html_()
    assert repr(display.record({"count": 30.0})) == "count  30"  # a count is never shown as 30.0


def test_error_codes_in_a_table_have_no_thousands_separator():
    import pandas as pd

    shown = repr(display.table(pd.DataFrame({"documents": [17419], "code": [17419], "error_code": [None]})))
    assert "17,419" in shown and shown.count("17419") == 1


def test_a_dataset_summary_lists_every_collection_with_its_count():
    import workbook

    dataset = workbook.generate("followers", scale="tiny", seed=7)
    shown = display.dataset_summary(dataset)
    assert shown.values == dataset.counts() and "followers at scale tiny, seed 7" in repr(shown)
    assert all(
        f"<th style='text-align:left;padding-right:1em'>{name}</th>" in shown._repr_html_() for name in shown.values
    )


def test_named_text_columns_wrap_in_that_table_only() -> None:
    import pandas as pd
    import pytest

    from workbook import display
    from workbook.errors import UnknownChoiceError

    frame = pd.DataFrame({"rung": ["one-to-few"], "decision": ["embed an array"], "why": ["small"]}).set_index("rung")
    shown = display.table(frame, wrap=["decision"])._repr_html_()
    own = shown.split("class='wb-table ")[1].split("'")[0]
    assert own.startswith("wb-wrap-") and f".{own} td:nth-child(2){{white-space:normal" in shown
    assert "nth-child" not in display.table(frame)._repr_html_()  # nothing changes without wrap=
    with pytest.raises(UnknownChoiceError, match="decision"):
        display.table(frame, wrap=["decisions"])


def test_a_document_shows_its_arrays_of_subdocuments_as_tables() -> None:
    from workbook import display

    shown = display.document({"_id": "bike-1", "name": "City Bike", "parts": [{"partId": "w", "quantity": 2}] * 3})
    fields, arrays = shown.parts()
    assert fields.values == {"_id": "bike-1", "name": "City Bike"}
    assert [(name, len(table.frame)) for name, table in arrays] == [("parts", 3)]
    assert "parts: 3 entries" in shown._repr_html_()


def test_documents_and_arrays_in_a_table_are_written_as_mongosh_writes_them():
    import pandas as pd
    from bson import ObjectId

    frame = pd.DataFrame(
        {
            "key": [{"category._id": 1, "price": -1}, {"_id": 1}],
            "ids": [["user-1", "user-2"], [ObjectId("6b0fc115448d3f025ad1c41c")]],
            "name": ["it's", "plain"],
        }
    )
    text = repr(display.table(frame))
    assert '{"category._id": 1, price: -1}' in text and "{_id: 1}" in text
    assert '["user-1", "user-2"]' in text and '[ObjectId("6b0fc115448d3f025ad1c41c")]' in text
    assert "{'" not in text and "['" not in text and "it's" in text  # a plain string stays as it is
    assert '{"category._id": 1, price: -1}' in display.table(frame)._repr_html_().replace("&quot;", '"')
