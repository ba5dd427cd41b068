"""Collations, modelled simply: strength 1 ignores case and accents, strength 2 ignores case.

MongoDB compares strings under a collation with ICU sort keys. The model does not carry ICU; it
uses Unicode case folding (and accent stripping for strength 1), which agrees with ICU on which
strings are *equal* at strengths 1 and 2 for ordinary Latin text, and approximates the order.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

_DIGITS = re.compile(r"[0-9]+")
_UNMODELLED = {"backwards": False, "caseLevel": False, "alternate": "non-ignorable", "maxVariable": "punct"}
"""Collation options the model's keys do not follow, with the value that means "off"."""
_DEFAULTS = {"strength": 3, "caseLevel": False, "caseFirst": "off", "numericOrdering": False}


def normalize(collation: Mapping[str, Any] | None) -> tuple | None:
    """A comparable form of a collation spec; None for the simple (binary) collation.

    >>> normalize({"locale": "simple"}) is None
    True
    >>> normalize({"locale": "en", "strength": 2}) == normalize({"locale": "en", "strength": 2.0})
    True
    """
    if not collation or collation.get("locale", "simple") == "simple":
        return None
    spec = {**_DEFAULTS, **{k: v for k, v in collation.items() if k != "version"}}
    spec["strength"] = int(spec["strength"])
    return tuple(sorted((k, str(v)) for k, v in spec.items()))


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def collator(collation: Mapping[str, Any] | None) -> Callable[[str], str] | None:
    """A function from a string to its comparison key under the collation (None when simple).

    >>> key = collator({"locale": "en", "strength": 2})
    >>> key("ABC") == key("abc"), key("abc") == key("abç")
    (True, False)
    """
    if normalize(collation) is None:
        return None
    unmodelled = [option for option, plain in _UNMODELLED.items() if collation.get(option, plain) != plain]  # type: ignore[union-attr]
    if unmodelled:  # ICU orders these differently from the model's keys: refused, the engine answers
        from workbook.planner.unsupported import not_modelled

        raise not_modelled(f"the collation option(s) {', '.join(unmodelled)}")
    strength = int(collation.get("strength", 3))  # type: ignore[union-attr]
    base = _by_strength(strength)
    if str(collation.get("numericOrdering", False)).lower() == "true":  # type: ignore[union-attr]
        return lambda s: base(_numeric(s))
    return base


def _numeric(text: str) -> str:
    """numericOrdering: each run of digits compared as a number ("9" < "10"), by its length first.

    >>> sorted(["10", "9", "a2", "a10"], key=_numeric)
    ['9', '10', 'a2', 'a10']
    """
    return _DIGITS.sub(lambda m: f"{len(m.group().lstrip('0') or '0'):04d}{m.group().lstrip('0') or '0'}", text)


def _by_strength(strength: int) -> Callable[[str], str]:
    if strength == 1:
        return lambda s: _strip_accents(s).casefold()
    if strength == 2:
        return lambda s: unicodedata.normalize("NFC", s).casefold()
    # Tertiary and above: primary letters first, then accents, then case (lower before upper, as ICU).
    return lambda s: f"{_strip_accents(s).casefold()}\x00{s.casefold()}\x00{s.swapcase()}"
