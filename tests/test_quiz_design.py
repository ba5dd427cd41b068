"""Design tasks graded on a real database: they fail before the learner's change and pass after."""

from __future__ import annotations

import pytest

from tests.quiz_fixture import build_fixture
from workbook.quiz import design
from workbook.quiz.grading import grade_answer

LISTING = {
    "collection": "products",
    "filter": {"category._id": "cat-08"},
    "projection": {"category._id": 1, "price": 1, "_id": 1},
    "sort": [["price", 1], ["_id", 1]],
    "limit": 20,
}


@pytest.fixture
def products(db):
    design.SETUPS["store-products"](db, scale="tiny", seed=7)
    return db


def test_index_task_fails_on_a_scan_and_passes_with_an_index(products, tmp_path):
    question = build_fixture(tmp_path)["fx-design"]
    before = grade_answer(question, None, products)
    assert not before.correct and "COLLSCAN" in before.feedback and before.facts["docsExamined"] == 30
    products.products.create_index([("category._id", 1)])
    filtered_only = grade_answer(question, None, products)  # narrows the search, but sorts in memory: not ESR
    assert not filtered_only.correct and filtered_only.facts["inMemorySort"] and "ESR" in filtered_only.feedback
    products.products.create_index([("category._id", 1), ("price", 1), ("_id", 1)])
    after = grade_answer(question, None, products)
    assert after.correct and after.facts["docsExamined"] <= after.facts["nReturned"] == 3
    assert not after.facts["inMemorySort"]


def test_an_index_that_does_not_narrow_the_search_fails(products):
    products.products.create_index([("price", 1)])
    outcome = design.examines_no_more_than_returns(products, **LISTING)
    assert not outcome.correct and outcome.facts["docsExamined"] > outcome.facts["nReturned"]


def test_covered_task(products):
    products.products.create_index([("category._id", 1)])
    assert not design.query_is_covered(products, **LISTING).correct
    products.products.create_index([("category._id", 1), ("price", 1), ("_id", 1)])
    outcome = design.query_is_covered(products, **LISTING)
    assert outcome.correct, outcome.feedback


def test_an_emptied_collection_is_not_a_pass(products):
    products.products.delete_many({})
    outcome = design.examines_no_more_than_returns(products, question_id="fx-design", **LISTING)
    assert not outcome.correct and 'prepare("fx-design")' in outcome.feedback


def test_one_read_shape_is_found_by_counting_commands(db):
    results = {shape: design.product_page_one_read(db, shape) for shape in ("embedded", "referenced", "hybrid")}
    assert results["referenced"].facts["reads"] == 3 and not results["referenced"].correct
    assert results["embedded"].facts["reads"] == 1 and results["embedded"].facts["unbounded"] == ["reviews"]
    assert not results["embedded"].correct and "maxItems" in results["embedded"].feedback
    assert results["hybrid"].correct and results["hybrid"].facts["unbounded"] == []
    from workbook.namespace import shape_database_name

    for shape in results:
        db.client.drop_database(shape_database_name("store", shape, within=db.name))


def test_unknown_shape_lists_the_choices(db):
    from workbook.errors import UnknownChoiceError

    with pytest.raises(UnknownChoiceError, match="Did you mean 'hybrid'"):
        design.product_page_one_read(db, "hybird")


def test_committed_design_tasks_name_known_checkers():
    from workbook.quiz.bank import all_questions

    tasks = [q for q in all_questions().values() if q["type"] == "design"]
    assert tasks and all(q["checker"] in design.CHECKERS for q in tasks)
