"""Options are shown shuffled with a fixed seed, and the right answers are spread evenly over the positions."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from workbook.quiz import hashing
from workbook.quiz.bank import all_questions
from workbook.quiz.grading import grade_answer
from workbook.quiz.order import _targets, right_option, shown_options
from workbook.quiz.widgets import QuestionWidget

ROOT = Path(__file__).resolve().parent.parent


def _choice_questions():
    return {qid: q for qid, q in sorted(all_questions().items()) if q["type"] == "choice"}


def _shown_ids(question):
    """The option ids in the order the learner's widget lists them."""
    return [option_id for _text, option_id in QuestionWidget(question).answer.options]


def over_share(positions_by_size: dict[int, list[int]]) -> list[str]:
    """Every position that holds more right answers than its share, per number of options."""
    problems = []
    for size, positions in positions_by_size.items():
        share = math.ceil(len(positions) / size)
        for position, count in sorted(Counter(positions).items()):
            if count > share:
                problems.append(f"{size}-option questions: position {position + 1} holds {count} (share {share})")
    return problems


def test_right_answers_are_spread_evenly_over_the_positions_the_learner_sees():
    positions: dict[int, list[int]] = {}
    for question in _choice_questions().values():
        shown = _shown_ids(question)
        positions.setdefault(len(shown), []).append(shown.index(right_option(question)))
    assert sum(map(len, positions.values())) >= 20  # the whole bank is looked at, not an empty list
    assert over_share(positions) == []


def test_the_share_check_fails_on_the_bank_as_authored():
    """The author's order (the right option second in most questions) is what the test above refuses."""
    positions: dict[int, list[int]] = {}
    for question in _choice_questions().values():
        ids = [option["id"] for option in question["options"]]
        positions.setdefault(len(ids), []).append(ids.index(right_option(question)))
    assert over_share(positions)


def test_targets_spread_a_bank_whose_right_option_is_always_the_same():
    questions = {}
    for n in range(9):
        salt = f"salt{n}"
        questions[f"q{n}"] = {
            "id": f"q{n}",
            "type": "choice",
            "options": [{"id": i, "text": i} for i in "abc"],
            "salt": salt,
            "answer_hash": hashing.answer_hash(salt, hashing.choice_key("b")),
        }
    targets = _targets(questions)
    assert sorted(Counter(targets.values()).values()) == [3, 3, 3]
    for question_id, question in questions.items():
        ids = [option["id"] for option in shown_options(question, targets)]
        assert ids.index("b") == targets[question_id] and sorted(ids) == ["a", "b", "c"]


def test_options_are_shuffled_and_none_is_lost():
    moved = 0
    for question in (q for q in all_questions().values() if q["type"] in ("choice", "many")):
        authored = [option["id"] for option in question["options"]]
        shown = _shown_ids(question) if question["type"] == "choice" else [o["id"] for o in shown_options(question)]
        assert sorted(shown) == sorted(authored)
        moved += shown != authored
    assert moved >= len(_choice_questions()) // 2


def test_per_option_feedback_follows_its_option():
    """Picking an option by its shown text gives the feedback filed under that option in the bank."""
    for question in _choice_questions().values():
        w = QuestionWidget(question)
        for text, option_id in w.answer.options:
            w.answer.value = option_id
            w.check_button.click()
            by_text = grade_answer(question, text)
            assert by_text.answer == option_id
            assert w.result is not None and w.result.feedback == by_text.feedback
            assert w.result.correct == (option_id == right_option(question))


def test_the_order_is_the_same_in_every_process():
    """No dependence on PYTHONHASHSEED or on what ran before: nbval and every learner see one order."""
    here = {qid: _shown_ids(q) for qid, q in _choice_questions().items()}
    script = (
        "import json; from workbook.quiz.bank import all_questions; from workbook.quiz.order import shown_options;"
        "print(json.dumps({k: [o['id'] for o in shown_options(q)] for k, q in all_questions().items()"
        " if q['type'] == 'choice'}))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == here
