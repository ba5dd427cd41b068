"""Embed or reference, decided by more than cardinality: two questions, five factors, a learner's table.

Seed 001 asks two questions of every relationship (how will you query it, how will it grow) and
weighs five factors together. :func:`factor_table` is the blank table; :func:`evidence` fills it
for a case from the course's data (counts measured on the generated dataset, rates from its
workload); :func:`check_factors` grades a learner's filled-in table against that evidence.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

import pandas as pd

from workbook.errors import ArgumentTypeError, UnknownChoiceError

QUESTIONS = ("How will you query the data?", "How will your documents grow?")
"""The two questions asked of every relationship before drawing any document."""

FACTORS: tuple[tuple[str, str, str], ...] = (
    ("read pattern", "read together with the parent", "often read on its own"),
    ("growth", "a known, small upper bound", "large, or no bound at all"),
    ("update frequency", "changes together with the parent", "changes on its own, shared by many"),
    ("lifecycle", "born and retired with the parent", "lives on without the parent"),
    ("consistency", "one document holds the whole atomic change", "changes span documents: managed explicitly"),
)
"""Each factor, what favors embedding, what favors referencing."""

SIDES = ("embed", "reference")
"""What a learner writes in each row of the table."""

CASES = ("parts", "followers")
"""The relationships the table is filled for: a product's parts, a user's followers."""


GROWTH_CASES: tuple[tuple[str, str, str, str], ...] = (
    ("an order's lines", "store", "orders", "items"),
    ("a product's part lines", "parts", "products", "parts"),
    ("a user's followers", "followers", "follows", "followedId"),
)
"""The squillions test's cases: (relationship, dataset, collection, the array or the parent-id field)."""


@lru_cache(maxsize=16)
def dataset_counts(name: str, scale: str, seed: int) -> dict[str, int]:
    """The counts the factor table and the squillions test read from one generated dataset, kept for this
    process: the largest count of each relationship the squillions test names (``"collection.field"``: an
    array's length, or how many documents share a parent id) and, for parts, the parts no product uses.

    The dataset itself is not kept: keeping the six the two tables read held parts at ``small`` twice in
    notebook 02's kernel (once for the learner's ``parts``), 109 MiB that stayed to the end.
    """
    from workbook.datasets import generate

    data = generate(name, scale, seed=seed)
    counts = {}
    for _relationship, dataset, collection, field in GROWTH_CASES:
        if dataset == name:
            documents = data.documents(collection)
            if documents and isinstance(documents[0].get(field), list):
                counts[f"{collection}.{field}"] = max(len(document[field]) for document in documents)
            else:
                counts[f"{collection}.{field}"] = max(Counter(document[field] for document in documents).values())
    if name == "parts":
        used = {line["partId"] for product in data.documents("products") for line in product["parts"]}
        counts["unused parts"] = sum(part["_id"] not in used for part in data.documents("parts"))
    return counts


def factor_table() -> pd.DataFrame:
    """The five factors, each with what favors embedding and what favors referencing."""
    rows = [{"factor": f, "favors embedding": e, "favors referencing": r} for f, e, r in FACTORS]
    return pd.DataFrame(rows).set_index("factor")


def _parts_evidence(scale: str, seed: int) -> dict[str, tuple[str, str]]:
    from workbook.dataset_parts import workload

    counts = dataset_counts("parts", scale, seed)
    lines, unused = counts["products.parts"], counts["unused parts"]
    rates = {op.name: op.rate for op in workload("parts").operations}
    return {
        "read pattern": (
            "reference",
            f"the product page ({rates['product_detail']}) shows parts with the product, but parts are also "
            f"read on their own ({rates['products_using_part']}, renames)",
        ),
        "growth": ("embed", f"at most {lines} lines in a product ({scale}, measured)"),
        "update frequency": (
            "reference",
            f"a part is renamed on its own ({rates['rename_part']}), once for every product that uses it",
        ),
        "lifecycle": ("reference", f"{unused:,} parts are in no product at all and still exist ({scale}, measured)"),
        "consistency": (
            "reference",
            "a rename must reach every product using the part: a cross-document change, managed explicitly",
        ),
    }


def _followers_evidence(scale: str, seed: int) -> dict[str, tuple[str, str]]:
    from workbook.dataset_parts import workload

    most = dataset_counts("followers", scale, seed)["follows.followedId"]
    rates = {op.name: op.rate for op in workload("followers").operations}
    return {
        "read pattern": (
            "reference",
            f"followers are read a page at a time ({rates['followers_page']}), apart from the profile",
        ),
        "growth": ("reference", f"one user has {most:,} followers ({scale}, measured), and nothing caps it"),
        "update frequency": (
            "reference",
            f"follows come and go on their own ({rates['follow']} follows, {rates['unfollow']} unfollows)",
        ),
        "lifecycle": ("reference", "a follow belongs to two users: it is not owned by either one"),
        "consistency": ("reference", "one follow is one relationship document: its insert is already atomic"),
    }


_EVIDENCE: dict[str, Callable[[str, int], dict[str, tuple[str, str]]]] = {
    "parts": _parts_evidence,
    "followers": _followers_evidence,
}


def evidence(case: str, *, scale: str = "small", seed: int = 7) -> pd.DataFrame:
    """The table filled in for ``case`` ("parts" or "followers"): each factor's fact and the side it favors."""
    if case not in _EVIDENCE:
        raise UnknownChoiceError("case of the factor table", case, CASES)
    filled = _EVIDENCE[case](scale, seed)
    rows = [{"factor": factor, "favors": filled[factor][0], "because": filled[factor][1]} for factor, _, _ in FACTORS]
    return pd.DataFrame(rows).set_index("factor")


_SPELLINGS = {
    "embed": ("embed", "embeds", "embedded", "embedding"),
    "reference": ("reference", "references", "referenced", "referencing"),
}


def _side(factor: str, answer: Any) -> str | None:
    if answer is None or (isinstance(answer, str) and answer.strip() in ("", "?")):
        return None
    if not isinstance(answer, str):
        raise ArgumentTypeError(f"your answer for {factor}", answer, "'embed' or 'reference'")
    word = answer.strip().lower()
    for side, words in _SPELLINGS.items():
        if word in words:
            return side
    raise UnknownChoiceError(f"answer for {factor}", answer, SIDES)


def check_factors(case: str, answers: Mapping[str, Any], *, scale: str = "small", seed: int = 7) -> pd.DataFrame:
    """Your filled-in table for ``case`` beside the evidence: one row per factor, right, wrong or not answered."""
    if not isinstance(answers, Mapping):
        raise ArgumentTypeError("answers", answers, 'a dict such as {"growth": "embed", ...}')
    unknown = sorted(set(answers) - {factor for factor, _, _ in FACTORS})
    if unknown:
        raise UnknownChoiceError("factor", unknown[0], [factor for factor, _, _ in FACTORS])
    filled = evidence(case, scale=scale, seed=seed)
    rows = []
    for factor, row in filled.iterrows():
        yours = _side(str(factor), answers.get(str(factor)))
        verdict = "not answered" if yours is None else ("right" if yours == row["favors"] else "look again")
        rows.append(
            {
                "factor": factor,
                "verdict": verdict,
                "yours": yours or "-",
                "favors": row["favors"],
                "because": row["because"],
            }
        )
    return pd.DataFrame(rows).set_index("factor")
