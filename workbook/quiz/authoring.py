"""Authoring: an instructor's plaintext answer file in, a hashed bank file out.

The answer file (JSON or YAML, see ``answers_schema.json``) stays outside the repository; only
the bank it becomes, with salted hashes and sealed feedback, is committed. Rebuilding keeps each
question's salt from the existing bank file, so an unchanged question gives an unchanged diff.
"""

from __future__ import annotations

import json
import math
import os
import string
import tempfile
from collections.abc import Hashable
from decimal import Decimal
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from workbook.errors import NamespaceError, UnknownChoiceError
from workbook.namespace import MAX_LEARNER_BYTES, database_name, learner_key
from workbook.quiz import hashing
from workbook.quiz.bank import QUESTIONS_DIR, bank_files, bank_schema, read_bank
from workbook.quiz.lines import QuizFileError, check_schema, line_of, read_document


@cache
def answers_schema() -> dict[str, Any]:
    """The JSON Schema (Draft 2020-12) of a plaintext answer file."""
    return json.loads((resources.files("workbook.quiz") / "answers_schema.json").read_text(encoding="utf-8"))


class _Builder:
    """Turns one validated answer file into a bank document; errors point at the file's lines."""

    def __init__(self, path: Path, text: str, salts: dict[str, str]) -> None:
        self.path, self.text, self.salts = path, text, salts

    def fail(self, at: list[str | int], problem: str) -> QuizFileError:
        return QuizFileError(self.path, line_of(self.text, at), problem)

    def build(self, document: dict[str, Any]) -> dict[str, Any]:
        seen: set[str] = set()
        questions = []
        for index, question in enumerate(document["questions"]):
            if question["id"] in seen:
                raise self.fail(["questions", index, "id"], f"question id {question['id']!r} is used twice")
            seen.add(question["id"])
            questions.append(self.question(question, ["questions", index]))
        return {"bank": document["bank"], "title": document["title"], "hashing": hashing.SCHEME, "questions": questions}

    def question(self, question: dict[str, Any], at: list[str | int]) -> dict[str, Any]:
        base = {key: question[key] for key in ("id", "type", "title", "prompt")}
        if question["type"] == "design":
            return self.design(question, base, at)
        salt = self.salts.get(question["id"]) or hashing.new_salt()
        messages: dict[str, str] = {}

        def file_feedback(key: str, message: str | None) -> None:
            if message:
                messages[key] = message

        explanation = question.get("explanation")
        built: dict[str, Any] = {**base}
        if question["type"] in ("choice", "many"):
            options = self.options(question, at)
            built["options"] = [{"id": o["id"], "text": o["text"]} for o in options]
            right = [o["id"] for o in options if o.get("correct")]
            if question["type"] == "choice" and len(right) != 1:
                raise self.fail(
                    [*at, "options"], f"a choice question needs exactly one correct option, not {len(right)}"
                )
            if not right:
                raise self.fail([*at, "options"], "a many-choice question needs at least one correct option")
            single = question["type"] == "choice"
            answer = hashing.choice_key(right[0]) if single else hashing.set_key(right)
            for option in options:
                note = option.get("feedback")
                if single and option["id"] == right[0] and explanation:
                    note = f"{note}\n{explanation}" if note else explanation
                file_feedback(hashing.choice_key(option["id"]), note)
            if not single:
                file_feedback(answer, explanation)
            built.update(salt=salt, answer_hash=hashing.answer_hash(salt, answer))
        elif question["type"] == "numeric":
            step, tolerance = self.grid(question, at)
            cell = hashing.grid_cell(question["answer"], step)
            file_feedback(hashing.cell_key(cell), explanation)
            for n, mistake in enumerate(question.get("mistakes", [])):
                wrong = hashing.grid_cell(mistake["answer"], step)
                if abs(wrong - cell) <= hashing.tolerance_steps(tolerance, step):
                    raise self.fail([*at, "mistakes", n], f"the mistake {mistake['answer']} would be accepted as right")
                file_feedback(hashing.cell_key(wrong), mistake["feedback"])
            built.update(unit=question["unit"], step=_number(step), tolerance=_number(tolerance))
            built.update(salt=salt, answer_hash=hashing.answer_hash(salt, hashing.cell_key(cell)))
        else:
            accepted = sorted({hashing.text_key(answer) for answer in question["answers"]})
            if any(key == "text:" for key in accepted):
                raise self.fail([*at, "answers"], "an accepted answer is empty once punctuation is removed")
            for key in accepted:
                file_feedback(key, explanation)
            for n, mistake in enumerate(question.get("mistakes", [])):
                if hashing.text_key(str(mistake["answer"])) in accepted:
                    raise self.fail(
                        [*at, "mistakes", n], f"the mistake {mistake['answer']!r} is also an accepted answer"
                    )
                file_feedback(hashing.text_key(str(mistake["answer"])), mistake["feedback"])
            if question.get("placeholder"):
                built["placeholder"] = question["placeholder"]
            built.update(salt=salt, answer_hashes=sorted(hashing.answer_hash(salt, key) for key in accepted))
        width = hashing.sealed_width(messages.values())
        sealed = {hashing.lookup_key(salt, key): hashing.seal(salt, key, text, width) for key, text in messages.items()}
        built["feedback"] = dict(sorted(sealed.items()))
        return built

    def options(self, question: dict[str, Any], at: list[str | int]) -> list[dict[str, Any]]:
        options = []
        for n, option in enumerate(question["options"]):
            options.append({**option, "id": option.get("id") or string.ascii_lowercase[n]})
        ids = [o["id"] for o in options]
        if len(set(ids)) != len(ids):
            raise self.fail([*at, "options"], f"option ids repeat: {', '.join(ids)}")
        return options

    def grid(self, question: dict[str, Any], at: list[str | int]) -> tuple[Decimal, Decimal]:
        answer = hashing.to_decimal(question["answer"])
        tolerance = hashing.to_decimal(question.get("tolerance", 0))
        if "step" in question:
            step = hashing.to_decimal(question["step"])
        elif tolerance > 0:
            step = tolerance
        else:  # the answer's own last decimal place: 16 -> 1, 2.5 -> 0.1
            exponent = answer.as_tuple().exponent  # an int: to_decimal() accepts finite numbers only
            step = Decimal(1).scaleb(min(0, exponent if isinstance(exponent, int) else 0))
        if step <= 0:
            raise self.fail([*at, "step"], "the step must be greater than 0")
        try:
            hashing.tolerance_steps(tolerance, step)
        except ValueError as error:
            raise self.fail([*at, "tolerance"], str(error)) from None
        return step, tolerance

    def design(self, question: dict[str, Any], base: dict[str, Any], at: list[str | int]) -> dict[str, Any]:
        from workbook.check import shape_suffixes
        from workbook.quiz.design import CHECKERS, SETUPS

        if question["checker"] not in CHECKERS:
            error = UnknownChoiceError("design-task checker", question["checker"], CHECKERS)
            raise self.fail([*at, "checker"], error.message)
        setup = question.get("setup", {}).get("name")
        if setup is not None and setup not in SETUPS:
            raise self.fail([*at, "setup", "name"], UnknownChoiceError("design-task setup", setup, SETUPS).message)
        database = str(question["params"].get("database", "quiz"))
        longest_learner = learner_key("x" * (MAX_LEARNER_BYTES + 1))
        try:  # connect()'s checks, for the longest learner key and the longest shape a task may load inside
            database_name(database, learner=longest_learner)
            database_name(f"{database}_{shape_suffixes()[0]}", learner=longest_learner)
        except NamespaceError as error:
            raise self.fail([*at, "params", "database"], error.message) from None
        built = {**base, "checker": question["checker"], "params": question["params"]}
        if "setup" in question:
            built["setup"] = question["setup"]
        if "options" in question:
            for n, option in enumerate(question["options"]):
                if "correct" in option or "feedback" in option:
                    raise self.fail(
                        [*at, "options", n], "design tasks are graded by their checker: options take only id and text"
                    )
            built["options"] = [{"id": o["id"], "text": o["text"]} for o in self.options(question, at)]
        return built


def _strict_yaml_loader() -> type:
    """PyYAML's safe loader, refusing a key repeated in one mapping (PyYAML keeps the last one silently)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, Hashable) and key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"the key {key!r} appears twice (first on line {seen[key]})", key_node.start_mark
                    )
                if isinstance(key, Hashable):
                    seen[key] = key_node.start_mark.line + 1
            return super().construct_mapping(node, deep)

    return StrictLoader


def _non_finite(value: Any, at: list[str | int]) -> list[str | int] | None:
    """The path to the first infinite or NaN number in ``value``, if any."""
    if isinstance(value, float) and not math.isfinite(value):
        return at
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _non_finite(item, [*at, key])
        if found is not None:
            return found
    return None


def read_answer_file(path: Path) -> tuple[Any, str]:
    """Parse an answer file strictly: UTF-8 text, no key twice in one mapping, no infinite or NaN number."""
    import yaml

    try:
        raw = path.read_bytes()
    except OSError as error:
        raise QuizFileError(path, None, f"cannot be read ({error.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw[: error.start].count(b"\n") + 1
        raise QuizFileError(
            path, line, f"is not UTF-8 text (byte {error.start})", fix="Save the file as UTF-8."
        ) from None
    try:  # JSON is YAML: one strict loader finds repeated keys, with their line, in both formats
        strict = yaml.load(text, Loader=_strict_yaml_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.constructor.ConstructorError as error:
        mark = error.problem_mark
        raise QuizFileError(path, mark.line + 1 if mark else None, str(error.problem)) from None
    except yaml.YAMLError:
        strict = None  # not YAML-readable JSON (e.g. tabs): the format's own parser below says why
    document, text = read_document(path)
    del strict  # same content as ``document`` once it parsed; only its repeated-key check was needed
    where = _non_finite(document, [])
    if where is not None:
        shown = "/".join(map(str, where))
        raise QuizFileError(
            path, line_of(text, where), f"at {shown}: {_lookup(document, where)} is not a finite number"
        )
    return document, text


def _lookup(document: Any, at: list[str | int]) -> Any:
    for step in at:
        document = document[step]
    return document


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def _existing_salts(out: Path | None) -> dict[str, str]:
    if out is None or not out.exists():
        return {}
    try:
        return {q["id"]: q["salt"] for q in read_bank(out)["questions"] if "salt" in q}
    except QuizFileError:
        return {}


def build_bank(answers_file: Path | str, out: Path | str | None = None) -> dict[str, Any]:
    """The hashed bank for a plaintext answer file; written to ``out`` (and re-validated) if given."""
    path = Path(answers_file)
    document, text = read_answer_file(path)
    check_schema(path, document, text, answers_schema(), fix="See workbook/quiz/answers_schema.json.")
    target = Path(out) if out is not None else None
    bank = _Builder(path, text, _existing_salts(target)).build(document)
    check_schema(path, bank, json.dumps(bank, indent=2), bank_schema())
    _check_ids_are_new(path, text, bank, target)
    if target is not None:
        _write_validated(target, bank)
    return bank


def _other_banks(target: Path | None) -> list[Path]:
    """The bank files a new bank must not share an id with: the package's and its neighbours, not itself."""
    folders = {QUESTIONS_DIR.resolve()} | ({target.parent.resolve()} if target is not None else set())
    found = {file.resolve() for folder in folders for file in bank_files(folder)}
    return sorted(found - ({target.resolve()} if target is not None else set()))


def _check_ids_are_new(path: Path, text: str, bank: dict[str, Any], target: Path | None) -> None:
    """Refuse a question id already used by another bank: ids are global (``show("reading-1")``)."""
    ids = {question["id"]: index for index, question in enumerate(bank["questions"])}
    for other in _other_banks(target):
        if other == path.resolve():
            continue
        try:
            document = read_document(other)[0]
            if not isinstance(document, dict) or "hashing" not in document:
                continue  # not a bank (an answer file, say)
            taken = {question["id"] for question in document.get("questions", [])}
        except (QuizFileError, UnicodeDecodeError, AttributeError, TypeError, KeyError):
            continue  # a broken neighbour is reported when it is read, not here
        for question_id in sorted(taken & set(ids)):
            raise QuizFileError(
                path,
                line_of(text, ["questions", ids[question_id], "id"]),
                f"question id {question_id!r} is already used in {other}",
                fix="Question ids are global across banks: choose another id.",
            )


def _write_validated(target: Path, bank: dict[str, Any]) -> None:
    """Write the bank next to ``target``, read it back as a bank, and only then replace ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".json", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(json.dumps(bank, indent=2, ensure_ascii=False, allow_nan=False) + "\n")
        read_bank(temporary)  # the same check every quiz runs on it
        os.replace(temporary, target)
    finally:
        Path(temporary).unlink(missing_ok=True)
