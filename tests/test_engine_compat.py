"""The mongoeco seam: every private name the offline default uses still exists, on the tested version."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

from workbook import engine_compat
from workbook.offline import offline_server

PACKAGE_DIR = pathlib.Path(engine_compat.__file__).parent


def test_every_private_mongoeco_name_still_resolves():
    broken = engine_compat.problems()
    assert not broken, (
        f"mongoeco {engine_compat.installed_version()} moved private names the offline default relies on "
        f"(written against {engine_compat.TESTED_VERSION}); update workbook/engine_compat.py and "
        "workbook/offline.py, then rerun `python -m workbook conformance`:\n  " + "\n  ".join(broken)
    )


def test_instance_attributes_exist_on_the_live_server():
    server = offline_server()
    assert not engine_compat.instance_problems(server.engine, server._proxy)


def test_installed_mongoeco_is_the_tested_version():
    assert engine_compat.installed_version() == engine_compat.TESTED_VERSION, (
        f"mongoeco {engine_compat.installed_version()} is installed, the offline default was checked against "
        f"{engine_compat.TESTED_VERSION}. Re-check these private names, the patches/ notes and the conformance "
        "run, then bump TESTED_VERSION and the pin in pyproject.toml:\n  "
        + "\n  ".join(name.qualified for name in engine_compat.PRIVATE_NAMES)
    )


def test_problems_names_a_moved_name(monkeypatch):
    moved = engine_compat.PrivateName("mongoeco.engines.memory", "MemoryEngine._no_such_method", "a test")
    monkeypatch.setattr(engine_compat, "PRIVATE_NAMES", (*engine_compat.PRIVATE_NAMES, moved))
    assert engine_compat.problems() == [next(line for line in engine_compat.problems() if "_no_such_method" in line)]


def test_only_engine_compat_imports_private_mongoeco_modules():
    offenders = []
    for path in PACKAGE_DIR.rglob("*.py"):
        if path.name == "engine_compat.py":
            continue
        for module in re.findall(r"from (mongoeco[\w.]*) import", path.read_text()):
            if any(part.startswith("_") for part in module.split(".")):
                offenders.append(f"{path.relative_to(PACKAGE_DIR.parent)}: {module}")
    assert not offenders, "import private mongoeco modules through workbook/engine_compat.py: " + ", ".join(offenders)


def _private_names_in_package() -> tuple[set[str], dict[str, list[str]]]:
    """(the workbench's own private names, each other private attribute it reads or writes -> where).

    Own: what the package defines (functions, classes, module and class variables, ``self._x`` it
    assigns, arguments, imports). Everything else reached as ``something._x`` belongs to someone
    else: in practice mongoeco's internals, which must be registered.
    """
    own: set[str] = set()
    used: dict[str, list[str]] = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        tree = ast.parse(path.read_text())
        where = str(path.relative_to(PACKAGE_DIR.parent))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                own.add(node.name)
            elif isinstance(node, ast.arg):
                own.add(node.arg)
            elif isinstance(node, ast.Import | ast.ImportFrom):
                own.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
                value = node.value
                alias = value.attr if isinstance(value, ast.Attribute) else None  # X = internals.X is not ours
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    for sub in ast.walk(target):
                        if isinstance(sub, ast.Name) and sub.id != alias:
                            own.add(sub.id)
                        elif (
                            isinstance(sub, ast.Attribute)
                            and isinstance(sub.value, ast.Name)
                            and sub.value.id
                            in (
                                "self",
                                "cls",
                            )
                        ):
                            own.add(sub.attr)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                used.setdefault(node.attr, []).append(f"{where}:{node.lineno}")
    return own, used


STANDARD_LIBRARY_PRIVATE = {"_SubParsersAction"}
"""Private names of the standard library the package uses (argparse's subparsers type, for a hint)."""


def test_every_private_name_used_anywhere_in_the_package_is_listed():
    own, used = _private_names_in_package()
    listed = {name.attribute.split(".")[-1] for name in engine_compat.PRIVATE_NAMES}
    missing = {name: where for name, where in used.items() if name not in own | listed | STANDARD_LIBRARY_PRIVATE}
    assert not missing, (
        "private names of mongoeco used but not in engine_compat.PRIVATE_NAMES (register each with why):\n  "
        + ("\n  ".join(f"{name}: {', '.join(where[:3])}" for name, where in sorted(missing.items())))
    )


def test_the_scan_finds_an_unregistered_private_name():
    planted = PACKAGE_DIR / "_contract_probe.py"
    planted.write_text("def probe(engine):\n    return engine._some_unregistered_internal\n")
    try:
        _own, used = _private_names_in_package()
    finally:
        planted.unlink()
    assert "_some_unregistered_internal" in used


@pytest.mark.parametrize("name", engine_compat.PRIVATE_NAMES, ids=lambda n: n.qualified)
def test_each_listed_name_says_why(name):
    assert name.why and name.module.startswith("mongoeco")


def test_a_server_whose_explain_hook_does_not_answer_refuses_to_start(monkeypatch):
    from workbook.errors import OfflineEngineBrokenError
    from workbook.offline import OfflineServer
    from workbook.offline_explain import ExplainHook

    monkeypatch.setattr(ExplainHook, "intercept", lambda self, inner, body, options: None)  # as if the hook fell off
    with pytest.raises(OfflineEngineBrokenError, match="explain came back unmodelled") as raised:
        OfflineServer()
    assert "mongoeco==" in str(raised.value.fix)


def test_the_running_server_passes_its_own_check():
    offline_server()._check_hooks()  # raises OfflineEngineBrokenError naming the problem otherwise


def _self_decoding_cases() -> list[object]:
    import datetime

    from bson import Decimal128, Int64, ObjectId, Regex

    when = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000)
    return [
        {"_id": 1, "name": "x", "price": 2.5, "ok": True, "none": None, "at": when},
        {"_id": "a", "nested": {"list": [1, [2, {"deep": "y"}], []], "empty": {}}},
        {"_id": 2, "big": 2**63 - 1, "small": -(2**63)},
        {"_id": 3, "over": 2**63},
        {"_id": 4, "long": Int64(5)},
        {"_id": ObjectId()},
        {"_id": 5, "oid": engine_compat.engine_object_id()()},
        {"_id": 6, "at": datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)},
        {"_id": 7, "at": datetime.datetime(2024, 1, 1, 0, 0, 0, 1)},
        {"_id": 8, "raw": b"\x00\x01"},
        {"_id": 9, "$mongoeco": {"type": "int64", "value": 1}},
        {"_id": 10, "d": Decimal128("1.5")},
        {"_id": 11, "r": Regex("a", "i")},
        {"_id": 12, "t": (1, 2)},
        {"_id": 13, 1: "not a string key"},
        {"_id": 14, "nan": float("nan"), "neg": -0.0, "flag": False},
    ]


@pytest.mark.parametrize("case", range(len(_self_decoding_cases())))
def test_decodes_to_itself_agrees_with_the_engines_codec(case):
    """Where decodes_to_itself says yes, mongoeco's own encode, decode (wrappers kept) and to_public give
    back an equal document of exactly the same types, so the engine may read the document itself."""
    import math

    document = _self_decoding_cases()[case]
    codec = engine_compat.document_codec()

    def same(left, right):
        if type(left) is not type(right):
            return False
        if isinstance(left, dict):
            return list(left) == list(right) and all(same(left[k], right[k]) for k in left)
        if isinstance(left, list):
            return len(left) == len(right) and all(map(same, left, right))
        if isinstance(left, float) and math.isnan(left):
            return math.isnan(right)
        return left == right and (not isinstance(left, float) or math.copysign(1, left) == math.copysign(1, right))

    try:
        decoded = codec.decode(codec.encode(document), preserve_bson_wrappers=True)
        round_trip = same(codec.to_public(decoded), document) and same(decoded, document)
    except Exception:  # refused by the codec: the engine never stores it as it is
        round_trip = False
    if engine_compat.decodes_to_itself(document):
        assert round_trip, f"{document!r} is said to decode to itself, but the codec gives {decoded!r}"
    expected_yes = case in (0, 1, 2, 15)
    assert engine_compat.decodes_to_itself(document) is expected_yes


def _wire_cases() -> list[object]:
    import datetime
    import uuid

    from bson import Int64
    from mongoeco.core.bson_scalars import BsonInt32, BsonInt64
    from mongoeco.types import SON, Binary, Decimal128, Regex

    engine_compat.install_object_id_types()
    return [
        *_self_decoding_cases(),
        {"tags": ["a", 1, 2.5, None, True, Int64(7)], "at": datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)},
        [{"partId": "p1", "qty": 2}, {"partId": engine_compat.engine_object_id()()}],
        {"n": BsonInt64(5)},
        {"n": BsonInt32(5)},
        {"raw": Binary(b"\x01\x02", subtype=4)},
        {"d": Decimal128("1.5")},
        {"r": Regex("a", "i")},
        SON([("b", 1), ("a", 2)]),
        {"u": uuid.UUID(int=5)},
    ]


@pytest.mark.parametrize("case", range(len(_wire_cases())))
def test_a_value_sent_as_is_encodes_as_the_wire_sends_it(case):
    """Where sent_as_is says yes, pymongo's bson gives the value the bytes it gives the engine's wire form
    (to_pymongo's copy), so the doctor may size it without the copy; mongoeco's own types are refused."""
    import bson
    from bson.codec_options import CodecOptions

    value = _wire_cases()[case]
    options = CodecOptions(uuid_representation=bson.binary.UuidRepresentation.STANDARD)
    try:
        wire = bson.encode({"": engine_compat.to_pymongo(value)}, codec_options=options)
    except Exception as error:  # not encodable on the wire either (an int over int64, a tuple key)
        wire = type(error)
    if engine_compat.sent_as_is(value):
        try:
            direct = bson.encode({"": value}, codec_options=options)
        except Exception as error:
            direct = type(error)
        assert direct == wire, value
    from bson import Decimal128, ObjectId, Regex

    mongoeco_own = isinstance(value, dict) and any(  # its ObjectId is pymongo's, subclassed: the same bytes
        (type(v).__module__.startswith("mongoeco") and not isinstance(v, ObjectId))
        or isinstance(v, bytes | Decimal128 | Regex)
        for v in value.values()
    )
    assert not (mongoeco_own and engine_compat.sent_as_is(value)), value


def test_a_stored_document_that_does_not_decode_to_itself_is_decoded_by_the_engine():
    """The lazy stored document shares only a document that decodes to itself; any other is encoded
    and decoded by the engine's own codec, as an ordinary stored document is."""
    from bson import Int64
    from mongoeco.engines.memory import _StoredDocument

    engine = offline_server().engine
    lazy, encode = engine_compat.lazy_stored_class(), engine_compat.payload_encoder(engine)
    plain, odd = {"_id": 1, "n": 2, "tags": ["a"]}, {"_id": 2, "n": Int64(2)}
    shared, refused = lazy(plain, encode, True), lazy(odd, encode, True)
    assert engine._borrow_storage_document(shared) is plain and shared.shares() and not shared.encoded()
    assert engine._borrow_public_storage_document(shared) is plain
    decoded = engine._borrow_storage_document(refused)
    assert decoded is not odd and not refused.shares() and refused.encoded()
    assert decoded == engine._borrow_storage_document(_StoredDocument(encode(odd)))
    unshared = lazy(dict(plain), encode)  # shared=False: the engine's own decode, as before
    assert engine._borrow_storage_document(unshared) is not unshared._source and not unshared.shares()


def test_the_equality_key_is_mongoecos_for_every_kind_of_value() -> None:
    """engine_compat.bson_equality_key answers strings and plain dates itself: always what mongoeco's gives."""
    import datetime

    from bson import Code, Decimal128, Int64, ObjectId
    from mongoeco.core.bson_ordering import bson_equality_key as mongoecos

    from workbook.engine_compat import bson_equality_key

    class Text(str):
        pass

    values = [
        "", "a", "日本", Code("x"), Text("t"), 1, 1.0, True, Int64(1), Decimal128("1.0"), None, ObjectId(),
        datetime.datetime(2025, 1, 2), datetime.datetime(2025, 1, 2, 3, 4, 5, 123000),
        datetime.datetime(2025, 1, 2, 3, 4, 5, 123456), datetime.datetime(2025, 1, 2, tzinfo=datetime.UTC),
        datetime.datetime(2025, 1, 2, tzinfo=datetime.timezone(datetime.timedelta(hours=5))),
        [1, "a"], {"a": "b"}, b"x",
    ]  # fmt: skip
    for value in values:
        assert bson_equality_key(value) == mongoecos(value), repr(value)
        assert type(bson_equality_key(value)) is type(mongoecos(value))
