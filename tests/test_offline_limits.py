"""MongoDB's hard limits: the pure checks, and each limit failing live with the server's code and message."""

from __future__ import annotations

import pytest

from workbook import offline_limits
from workbook.patterns import limits


def test_nesting_depth_counts_the_document_itself_as_level_one():
    assert offline_limits.document_depth({}) == 1
    assert offline_limits.document_depth({"a": [{"b": 1}]}) == 3
    assert offline_limits.document_depth(limits.nested(100)) == 100


def test_depth_error_only_past_one_hundred_levels():
    assert offline_limits.depth_error(limits.nested(100)) is None
    code, message = offline_limits.depth_error(limits.nested(101))
    assert code == 15 and message == "cannot insert document because it exceeds 100 levels of nesting"


def test_new_index_error_counts_id_and_ignores_an_existing_index():
    existing = [[("_id", 1)]] + [[(f"f{n}", 1)] for n in range(62)]
    assert offline_limits.new_index_error("d.c", [("g", 1)], existing) is None  # the 64th index fits
    code, message = offline_limits.new_index_error("d.c", [("g", 1)], [*existing, [("h", 1)]])
    assert code == 67 and message == "add index fails, too many indexes for d.c key:{ g: 1 }"
    assert offline_limits.new_index_error("d.c", [("h", 1)], [*existing, [("h", 1)]]) is None


def test_new_index_error_past_thirty_two_fields():
    assert offline_limits.new_index_error("d.c", [(f"a{n}", 1) for n in range(32)], [[("_id", 1)]]) is None
    assert offline_limits.new_index_error("d.c", [(f"a{n}", 1) for n in range(33)], [[("_id", 1)]]) == (
        13103,
        "too many compound keys",
    )


def test_parallel_arrays_names_the_later_field_first_and_follows_paths():
    documents = [{"a": 1, "b": [1]}, {"a": [1], "b": {"c": [2]}}]
    assert offline_limits.parallel_arrays_error(documents, ["a", "b"]) is None
    assert offline_limits.parallel_arrays_error(documents, ["a", "b.c"]) == (
        171,
        "cannot index parallel arrays [b.c] [a]",
    )
    assert offline_limits.parallel_arrays_error(documents, ["a"]) is None
    # Two paths through one array of subdocuments are not parallel arrays (MongoDB indexes them)
    assert offline_limits.parallel_arrays_error([{"o": [{"x": 1, "y": 2}]}], ["o.x", "o.y"]) is None


@pytest.mark.parametrize(
    ("limit", "code", "words"),
    [
        ("nesting depth", 15, "exceeds 100 levels of nesting"),
        ("indexes per collection", 67, "too many indexes"),
        ("fields in a compound index", 13103, "too many compound keys"),
        ("arrays in one compound index", 171, "cannot index parallel arrays [sizes] [tags]"),
    ],
)
def test_each_limit_fails_live_with_mongodbs_error(db, limit, code, words):
    hit = limits.hit(db, limit)
    assert hit.code == code
    assert words in hit.message
    assert not [name for name in db.list_collection_names() if name.startswith("limit_")]  # scratch dropped


def test_a_document_fails_past_sixteen_mib_and_keeps_its_last_good_size(db):
    hit = limits.hit(db, "document size")
    assert hit.code in (10334, 17419)  # 17419 on MongoDB for an update; the offline default may report 10334
    assert hit.fitted.startswith("15 pushes")


def test_limit_table_has_every_limit_and_unknown_limits_list_the_choices(db):
    from workbook.errors import UnknownChoiceError

    table = limits.limit_table(db)
    assert list(table.index) == list(limits.LIMITS)
    assert table["code"].notna().all()
    with pytest.raises(UnknownChoiceError, match="nesting depth"):
        limits.hit(db, "depth")


def test_a_time_series_measurement_over_4_mb_is_refused_by_mongodb_and_the_offline_default_says_it_does_not(db, engine):
    from workbook.facts import TIMESERIES_MEASUREMENT_MB

    checked = limits.timeseries_measurement(db)
    assert TIMESERIES_MEASUREMENT_MB == 4 and checked.small_stored and checked.big_megabytes > 4
    if engine is None:  # no time-series collections offline: an ordinary collection, and the limit is not enforced
        assert checked.listed_type == "collection" and not checked.enforced
        assert "not enforced here" in repr(checked)
    else:
        assert checked.listed_type == "timeseries" and checked.enforced
    assert "readings" not in db.list_collection_names(), "the scratch collection is dropped"
