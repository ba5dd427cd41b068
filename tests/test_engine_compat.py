"""The mongoeco seam: every private name the offline default uses still exists, on the tested version."""

from __future__ import annotations

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
    assert engine_compat.problems() == [
        next(line for line in engine_compat.problems() if "_no_such_method" in line)
    ]




def test_only_engine_compat_imports_private_mongoeco_modules():
    offenders = []
    for path in PACKAGE_DIR.rglob("*.py"):
        if path.name == "engine_compat.py":
            continue
        for module in re.findall(r"from (mongoeco[\w.]*) import", path.read_text()):
            if any(part.startswith("_") for part in module.split(".")):
                offenders.append(f"{path.relative_to(PACKAGE_DIR.parent)}: {module}")
    assert not offenders, "import private mongoeco modules through workbook/engine_compat.py: " + ", ".join(offenders)


def test_every_private_attribute_used_by_offline_is_listed():
    source = (PACKAGE_DIR / "offline.py").read_text()
    used = set(re.findall(r"(?:engine|self|super\(\))\.(_[a-z]\w+)", source)) | set(
        re.findall(r"engine\.(_[a-z]\w+)\b", source)
    )
    own = (  # the workbench's own private names: methods and attributes offline.py defines
        set(re.findall(r"def (_\w+)", source))
        | set(re.findall(r"self\.(_\w+)(?:: [^=]+)? = ", source))
        | set(re.findall(r"^\s+(_\w+): ", source, re.MULTILINE))
        | set(re.findall(r"_executor\.(_\w+) = ", source))
    )
    listed = {name.attribute.split(".")[-1] for name in engine_compat.PRIVATE_NAMES}
    missing = sorted(used - own - listed)
    assert not missing, f"workbook/offline.py uses private mongoeco names not in engine_compat.PRIVATE_NAMES: {missing}"


@pytest.mark.parametrize("name", engine_compat.PRIVATE_NAMES, ids=lambda n: n.qualified)
def test_each_listed_name_says_why(name):
    assert name.why and name.module.startswith("mongoeco")
