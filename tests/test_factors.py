"""The five-factor table, the squillions test, the parts queries table and explain through the cursor."""

from __future__ import annotations

import pytest

import workbook
from workbook import factors, relations
from workbook.errors import UnknownChoiceError


def test_the_blank_table_has_the_five_factors() -> None:
    table = factors.factor_table()
    assert list(table.index) == ["read pattern", "growth", "update frequency", "lifecycle", "consistency"]
    assert len(factors.QUESTIONS) == 2


def test_growth_is_measured_and_decides_each_case() -> None:
    parts = factors.evidence("parts", scale="tiny")
    followers = factors.evidence("followers", scale="tiny")
    longest = max(len(p["parts"]) for p in workbook.generate("parts", "tiny").collections["products"])
    assert parts.loc["growth", "favors"] == "embed" and f"at most {longest} lines" in parts.loc["growth", "because"]
    assert followers.loc["growth", "favors"] == "reference"
    assert (followers["favors"] == "reference").all()


def test_checking_a_filled_table() -> None:
    answers = {"growth": "Embedding", "read pattern": "embed", "lifecycle": "?"}
    checked = factors.check_factors("parts", answers, scale="tiny")
    assert checked.loc["growth", "verdict"] == "right"
    assert checked.loc["read pattern", "verdict"] == "look again"
    assert checked.loc["lifecycle", "verdict"] == "not answered"
    assert checked.loc["consistency", "verdict"] == "not answered"


def test_bad_answers_name_the_choices() -> None:
    with pytest.raises(UnknownChoiceError, match="embed, reference"):
        factors.check_factors("parts", {"growth": "both"}, scale="tiny")
    with pytest.raises(UnknownChoiceError, match="growth"):
        factors.check_factors("parts", {"grwth": "embed"}, scale="tiny")
    with pytest.raises(UnknownChoiceError, match="followers, parts"):
        factors.evidence("reviews")


def test_the_squillions_test_finds_the_ceiling() -> None:
    table = relations.growth_test(("tiny", "tiny"))
    assert table["a ceiling?"].str.startswith("yes").all()  # the same data twice: nothing grew
    assert list(table.index) == [case[0] for case in relations.GROWTH_CASES]


def test_the_tables_keep_their_counts_and_no_dataset(monkeypatch: pytest.MonkeyPatch) -> None:
    """The squillions test and the factor table read each dataset once between them, and keep only the
    counts: every dataset they generated is gone afterwards (keeping them held 109 MiB in notebook 02)."""
    import gc
    import weakref

    import workbook.datasets

    made: list[tuple[str, str, weakref.ref[object]]] = []
    original = workbook.datasets.generate

    def counted(name: str, scale: str, seed: int = 7) -> object:
        data = original(name, scale, seed=seed)
        made.append((name, scale, weakref.ref(data)))
        return data

    monkeypatch.setattr(workbook.datasets, "generate", counted)
    factors.dataset_counts.cache_clear()
    table = relations.growth_test(("tiny", "tiny"), seed=3)
    parts, followers = (
        factors.evidence("parts", scale="tiny", seed=3),
        factors.evidence("followers", scale="tiny", seed=3),
    )
    gc.collect()
    assert sorted((name, scale) for name, scale, _ in made) == [
        ("followers", "tiny"),
        ("parts", "tiny"),
        ("store", "tiny"),
    ]
    assert all(alive() is None for _, _, alive in made), "a generated dataset is still held"
    data = original("parts", "tiny", seed=3)
    longest = max(len(product["parts"]) for product in data.collections["products"])
    used = {line["partId"] for product in data.collections["products"] for line in product["parts"]}
    unused = sum(part["_id"] not in used for part in data.collections["parts"])
    assert table.loc["a product's part lines", "largest at tiny"] == longest
    assert (
        f"at most {longest} lines" in parts.loc["growth", "because"]
        and f"{unused:,} parts" in parts.loc["lifecycle", "because"]
    )
    follows = original("followers", "tiny", seed=3).collections["follows"]
    most = max(sum(f["followedId"] == user for f in follows) for user in {f["followedId"] for f in follows})
    assert (
        table.loc["a user's followers", "largest at tiny"] == most
        and f"has {most:,} followers" in followers.loc["growth", "because"]
    )


def test_parts_query_table_records_filters_and_sorts() -> None:
    table = workbook.workload("parts").query_table()
    assert list(table.columns) == ["rate", "type", "filter", "sort", "returns"]
    assert table.loc["products_using_part", "filter"] == "products: parts.partId"
    assert table.loc["products_using_part", "sort"] == "_id"
    assert table.loc["product_detail", "sort"] == "-"
    assert "filter" not in workbook.workload("store").table().columns  # the rate table is unchanged


def test_cursor_explain_and_workbook_explain_agree() -> None:
    loaded = workbook.load("parts", "referenced", scale="tiny", progress=False)
    try:
        name = loaded["parts"].find_one(sort=[("_id", 1)])["name"]
        table = relations.index_part_names(loaded, name)
        before, after = table.loc["_id only"], table.loc[f"_id, {relations.NAME_INDEX}"]
        assert before.iloc[0].tolist() == before.iloc[1].tolist()
        assert after.iloc[0].tolist() == after.iloc[1].tolist()
        assert before.iloc[0]["plan"] == "COLLSCAN" and "IXSCAN" in after.iloc[0]["plan"]
        assert after.iloc[0]["totalDocsExamined"] == after.iloc[0]["nReturned"]
    finally:
        loaded.db.client.drop_database(loaded.db.name)
