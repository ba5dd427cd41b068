"""Starting the offline engine does not build the RFC 3987 grammar jsonschema would import (1.4 s of a 2 s start).

Counts modules in a fresh process, never times: the machine may be loaded (the timing is a bench row).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRAMMAR = ("rfc3987_syntax", "lark")


def fresh(code: str) -> dict:
    """Run ``code`` in a fresh interpreter with the offline default; it prints one JSON object."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MONGODB_URI", None)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


COUNT = "sorted(n for n in sys.modules if n.split('.')[0] in ('rfc3987_syntax', 'lark'))"


def test_starting_the_offline_engine_and_a_quiz_imports_no_grammar_module():
    seen = fresh(
        "import json, sys, pymongo, workbook, workbook.quiz\n"
        "from workbook.offline import offline_server\n"
        "server = offline_server()\n"
        "ok = pymongo.MongoClient(server.uri).admin.command('ping')['ok']\n"
        "workbook.quiz.show('nb02-1'); workbook.quiz.my_progress('lazy-import-tester')\n"
        f"print(json.dumps({{'ok': ok, 'jsonschema': 'jsonschema' in sys.modules, 'grammar': {COUNT}}}))"
    )
    # jsonschema itself is imported (by mongoeco's engine and the quiz): only its IRI grammar is not
    assert seen == {"ok": 1.0, "jsonschema": True, "grammar": []}


def test_importing_jsonschema_plainly_builds_the_grammar():
    """Why the deferral exists: without it, the same jsonschema pulls in the grammar (the test above can fail)."""
    seen = fresh(f"import json, sys, jsonschema\nprint(json.dumps({{'grammar': {COUNT}}}))")
    assert "rfc3987_syntax.syntax_helpers" in seen["grammar"]


def test_an_iri_check_still_works_and_loads_the_real_grammar_on_first_use():
    seen = fresh(
        "import json, sys\n"
        "from workbook.lazy_imports import load_jsonschema\n"
        "jsonschema = load_jsonschema()\n"
        f"before = {COUNT}\n"
        "check = jsonschema.Draft202012Validator.FORMAT_CHECKER\n"
        "v = jsonschema.Draft202012Validator({'format': 'iri'}, format_checker=check)\n"
        "good, bad = v.is_valid('https://example.org/caf\\u00e9'), v.is_valid('no scheme here')\n"
        "import rfc3987_syntax\n"
        "real = hasattr(rfc3987_syntax, 'syntax_parser')\n"
        "print(json.dumps({'before': before, 'good': good, 'bad': bad, 'real': real}))"
    )
    assert seen == {"before": [], "good": True, "bad": False, "real": True}


def test_a_duration_check_still_works_and_loads_isoduration_on_first_use():
    seen = fresh(
        "import json, sys\n"
        "from workbook.offline import offline_server\n"
        "offline_server()\n"
        "before = 'isoduration' in sys.modules or 'arrow' in sys.modules\n"
        "import jsonschema\n"
        "check = jsonschema.Draft202012Validator.FORMAT_CHECKER\n"
        "v = jsonschema.Draft202012Validator({'format': 'duration'}, format_checker=check)\n"
        "good, bad = v.is_valid('P3Y6M4DT12H30M5S'), v.is_valid('P1X')\n"
        "import isoduration\n"
        "real = hasattr(isoduration, 'format_duration')\n"
        "print(json.dumps({'before': before, 'good': good, 'bad': bad, 'real': real}))"
    )
    assert seen == {"before": False, "good": True, "bad": False, "real": True}


def test_a_pytest_run_of_a_notebook_imports_no_grammar_module():
    """nbval imports nbformat, which imports jsonschema: the project's pytest options load
    workbook.dev.early_imports first, so collecting a notebook builds no grammar (0.95 s of every pytest run)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MONGODB_URI", None)
    command = [sys.executable, "-X", "importtime", "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, "notebooks/00_start_here.ipynb"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "nbval.kernel" in imported, "the notebook plugin was loaded (else this proves nothing)"
    assert [name for name in imported if name.split(".")[0] in GRAMMAR] == []
