"""workbook.lessons.validation: readable rejections, validator tables, migrations (notebook 09)."""

from __future__ import annotations

import pytest
from pymongo.errors import OperationFailure

import workbook
from workbook import facts
from workbook.errors import ArgumentTypeError, UnknownChoiceError
from workbook.lessons import validation

SCHEMA = {
    "$jsonSchema": {
        "bsonType": "object",
        "required": ["name", "price"],
        "properties": {
            "name": {"bsonType": "string"},
            "price": {"bsonType": ["int", "double"], "minimum": 0},
            "tags": {"bsonType": "array", "maxItems": 2, "items": {"bsonType": "object"}},
        },
    }
}

SERVER_DETAILS = {  # hand-written in the shape MongoDB 5.0+ documents for errInfo, nested array items included
    "failingDocumentId": 1,
    "details": {
        "operatorName": "$jsonSchema",
        "schemaRulesNotSatisfied": [
            {"operatorName": "required", "specifiedAs": {"required": ["name", "price"]}, "missingProperties": ["name"]},
            {
                "operatorName": "properties",
                "propertiesNotSatisfied": [
                    {
                        "propertyName": "price",
                        "details": [
                            {
                                "operatorName": "minimum",
                                "specifiedAs": {"minimum": 0},
                                "reason": "comparison failed",
                                "consideredValue": -5,
                            }
                        ],
                    },
                    {
                        "propertyName": "tags",
                        "details": [
                            {
                                "operatorName": "items",
                                "reason": "At least one item did not match the sub-schema",
                                "itemIndex": 1,
                                "details": [
                                    {
                                        "operatorName": "bsonType",
                                        "specifiedAs": {"bsonType": "object"},
                                        "reason": "type did not match",
                                        "consideredValue": 3,
                                    }
                                ],
                            }
                        ],
                    },
                ],
            },
        ],
    },
}


def test_validation_reasons_name_the_field_and_rule_of_a_server_reply() -> None:
    reasons = validation.validation_reasons(SERVER_DETAILS)
    assert reasons == [
        "(document): missing required field(s) name",
        "price: minimum {'minimum': 0} comparison failed (got -5)",
        "tags[1]: bsonType {'bsonType': 'object'} type did not match (got 3)",
    ]
    assert validation.validation_reasons({"details": {}}) == ["(no details reported)"]
    with pytest.raises(ArgumentTypeError):
        validation.validation_reasons("nope")  # type: ignore[arg-type]


def test_try_write_returns_the_reasons_of_a_live_rejection(db) -> None:  # type: ignore[no-untyped-def]
    db.create_collection("things", validator=SCHEMA)
    refused = validation.try_write("no price", lambda: db.things.insert_one({"name": "x"}))
    assert not refused.accepted and refused.code == facts.VALIDATION_FAILED and refused.rejected_by_validator
    assert any("price" in reason for reason in refused.reasons)
    assert "REJECTED (code 121" in repr(refused) and "rejected, code 121" in refused._repr_html_()
    too_many = validation.try_write(
        "3 tags", lambda: db.things.insert_one({"name": "x", "price": 1, "tags": [{}, {}, {}]})
    )
    assert any(reason.startswith("tags") for reason in too_many.reasons)
    ok = validation.try_write("fine", lambda: db.things.insert_one({"name": "x", "price": 1}))
    assert ok.accepted and repr(ok) == "fine: accepted"
    other = validation.try_write("duplicate", lambda: db.things.insert_one(db.things.find_one()))
    assert other.code == 11000 and other.reasons == [] and not other.rejected_by_validator


def test_validator_of_and_copy_with_validator(db) -> None:  # type: ignore[no-untyped-def]
    db.create_collection("things", validator=SCHEMA)
    db.things.insert_many([{"_id": i, "name": f"n{i}", "price": i} for i in range(5)])
    copy = validation.copy_with_validator(db.things, "copy", limit=3)
    assert validation.validator_of(copy)["validator"] == SCHEMA
    assert [d["_id"] for d in copy.find()] == [0, 1, 2]
    with pytest.raises(OperationFailure):
        copy.insert_one({"name": "no price"})


def test_validator_table_and_array_bounds_follow_the_specs() -> None:
    hybrid = workbook.shape_spec("store", "hybrid")
    table = validation.validator_table(hybrid)
    assert "maxItems 5" in table.loc[("products", "recentReviews"), "rules"]
    assert table.loc[("reviews", "rating"), "rules"] == "bsonType one of int, long; minimum 1; maximum 5"
    assert bool(table.loc[("products", "price"), "required"])
    assert validation.array_bounds(hybrid)["products.recentReviews"] == 5
    assert validation.array_bounds(workbook.shape_spec("store", "embedded"))["products.reviews"] is None


def test_item_string_limit_refuses_long_text(db) -> None:  # type: ignore[no-untyped-def]
    limited = validation.with_item_string_limit(SCHEMA, "tags", "label", 3)
    assert "properties" not in SCHEMA["$jsonSchema"]["properties"]["tags"]["items"]  # the original is untouched
    db.create_collection("things", validator=limited)
    assert validation.try_write(
        "ok", lambda: db.things.insert_one({"name": "a", "price": 1, "tags": [{"label": "abc"}]})
    ).accepted
    assert (
        validation.try_write(
            "long", lambda: db.things.insert_one({"name": "a", "price": 1, "tags": [{"label": "abcd"}]})
        ).code
        == 121
    )
    with pytest.raises(UnknownChoiceError):
        validation.with_item_string_limit(SCHEMA, "name", "x", 3)


def test_moderate_and_warn_over_existing_data(db) -> None:  # type: ignore[no-untyped-def]
    db.things.insert_many([{"_id": i, "name": f"n{i}", "price": i} for i in range(4)])
    strict = validation.requiring(SCHEMA, "sku", {"bsonType": "string"})
    assert validation.invalid_count(db.things, strict) == 4
    db.command("collMod", "things", validator=strict)
    assert validation.try_write("update", lambda: db.things.update_one({"_id": 1}, {"$set": {"price": 2}})).code == 121
    db.command("collMod", "things", validationLevel="moderate")
    assert validation.try_write("update", lambda: db.things.update_one({"_id": 1}, {"$set": {"price": 2}})).accepted
    assert validation.try_write("insert", lambda: db.things.insert_one({"name": "n", "price": 1})).code == 121
    db.command("collMod", "things", validationLevel="strict", validationAction="warn")
    assert validation.try_write("insert", lambda: db.things.insert_one({"name": "n", "price": 1})).accepted
    assert validation.invalid_count(db.things, strict) == 5


def test_versioned_validator_accepts_each_version_by_its_own_rules(db) -> None:  # type: ignore[no-untyped-def]
    v1 = {"required": ["price"], "properties": {"price": {"bsonType": "int"}}}
    v2 = {"required": ["price"], "properties": {"price": {"bsonType": "object"}}}
    db.create_collection("things", validator=validation.versioned({1: v1, 2: v2}))
    assert validation.try_write("v1", lambda: db.things.insert_one({"price": 3})).accepted
    assert validation.try_write(
        "v2", lambda: db.things.insert_one({"schemaVersion": 2, "price": {"amount": 3}})
    ).accepted
    assert validation.try_write("v2 bad", lambda: db.things.insert_one({"schemaVersion": 2, "price": 3})).code == 121
    assert validation.try_write("v1 bad", lambda: db.things.insert_one({"price": {"amount": 3}})).code == 121
    assert validation.version_counts(db.things) == {1: 1, 2: 1}


def test_oversized_review_has_the_requested_text() -> None:
    review = validation.oversized_review(123)
    assert len(review["text"]) == 123 and review["rating"] == 5
