"""Where workbench data lives: databases named ``workbench_<learner>[_<name>]``, and nowhere else.

Several learners can share one server: each gets their own databases, named after
``WORKBOOK_LEARNER`` (default: the OS user). Learner names become a key in ``[a-z0-9-]`` so the
``_`` separator is unambiguous: ``reset()`` for ``bob`` can never touch ``bob-x``'s data.

Two names give one key only when they differ in case or separators (``Ada Lovelace`` and
``ada_lovelace`` are one learner). Any other name is transliterated for readability and given
``--`` and a short hash of the name itself, so ``Zoë`` and ``Zoé``, or ``Иван`` and ``Ivan``, never
share databases or a progress file. Plain keys never contain ``--``, so the two kinds cannot meet.

>>> database_name("store_hybrid", learner="Ada Lovelace")
'workbench_ada-lovelace_store_hybrid'
>>> learner_name("Zoë"), learner_name("Zoé"), learner_name("Иван")
('zoe--2752b8', 'zoe--33b40f', 'ivan--74f46a')
>>> database_name(None, learner="ada")
'workbench_ada'
>>> shape_database_name("store", "hybrid", learner="ada")
'workbench_ada_store_hybrid'
>>> is_own_database("workbench_ada_store", learner="ada"), is_own_database("workbench_adam", learner="ada")
(True, False)
"""

from __future__ import annotations

import functools
import getpass
import hashlib
import os
import re
import unicodedata
import warnings

from anyascii import anyascii

from workbook.errors import ArgumentTypeError, NamespaceError, NamespaceWarning
from workbook.facts import MAX_DATABASE_NAME_BYTES

PREFIX = "workbench_"
"""Every database the workbench writes to starts with this."""

MAX_LEARNER_BYTES = 20
"""The longest learner key: leaves 33 bytes of MongoDB's 63 for ``_<design-task db>_<dataset>_<shape>`` (check.py
and quiz-build verify)."""

HASH_CHARS = 6
"""Hex digits of the name's SHA-256 added to a key whenever the name does not map to it losslessly."""

_PLAIN_KEY = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_HASHED_KEY = re.compile(rf"[a-z0-9]+(?:-[a-z0-9]+)*--[0-9a-f]{{{HASH_CHARS}}}")


def learner_name(learner: str | None = None) -> str:
    """The learner's key as used in database and progress-file names: argument > ``WORKBOOK_LEARNER`` > OS user.

    A blank ``learner`` is refused (it names nobody); a blank ``WORKBOOK_LEARNER`` is reported once
    and the OS user used, so two learners who both left it empty are told why they share data.
    """
    if learner is not None:
        if not isinstance(learner, str):
            raise ArgumentTypeError("learner", learner, "a learner's name such as 'ada', or None for you")
        if not learner.strip():
            raise NamespaceError(
                f"The learner name {learner!r} is blank, so it names nobody.",
                fix="Pass a name such as learner='ada', or leave learner out to mean yourself.",
            )
        return learner_key(learner)
    configured = os.environ.get("WORKBOOK_LEARNER")
    if configured is not None and configured.strip():
        return learner_key(configured)
    user = _os_user()
    if configured is not None and not _warned_blank:
        _warn_blank(configured, user)
    return learner_key(user)


_warned_blank = False


def _warn_blank(configured: str, user: str) -> None:
    global _warned_blank
    _warned_blank = True
    warnings.warn(
        f"WORKBOOK_LEARNER is set but blank ({configured!r}), so the workbench uses your OS user {user!r} "
        "as the learner name. Fix: set WORKBOOK_LEARNER to your name, or unset it.",
        NamespaceWarning,
        stacklevel=3,
    )


def learner_key(name: str) -> str:
    """A distinct, stable ``[a-z0-9-]`` key for ``name``: readable, hashed whenever the mapping is lossy.

    >>> learner_key("Grace Hopper"), learner_key("grace_hopper"), learner_key("日本語")
    ('grace-hopper', 'grace-hopper', 'ribenyu--77710a')
    """
    if _HASHED_KEY.fullmatch(name) and len(name) <= MAX_LEARNER_BYTES:
        return name  # already a key: keys map to themselves, so a key can be passed on as a learner
    canonical = re.sub(r"[\s._-]+", "-", unicodedata.normalize("NFKC", name).casefold()).strip("-")
    if _PLAIN_KEY.fullmatch(canonical) and len(canonical) <= MAX_LEARNER_BYTES:
        return canonical
    # Only separators ('-', '_', '..'): nothing is left of the name, so its own characters are hashed.
    hashed = canonical or unicodedata.normalize("NFKC", name)
    digest = hashlib.sha256(hashed.encode()).hexdigest()[:HASH_CHARS]
    readable = re.sub(r"[^a-z0-9]+", "-", anyascii(canonical).lower()).strip("-")
    readable = readable[: MAX_LEARNER_BYTES - HASH_CHARS - 2].rstrip("-") or "learner"
    return f"{readable}--{digest}"


@functools.cache
def _os_user() -> str:
    """The OS user, looked up once per process (with no ``USER`` set, each lookup asks the passwd
    database; usually 0.1 ms, but 40-90 ms a call once in a profiled restore that asked three times)."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (some containers)
        return "learner"


def learner_database(learner: str | None = None) -> str:
    """The learner's base database: ``workbench_<learner>``."""
    return PREFIX + learner_name(learner)


def database_name(name: str | None = None, *, learner: str | None = None) -> str:
    """The full database name for ``name`` inside the learner's namespace."""
    if name is not None and not isinstance(name, str):
        raise ArgumentTypeError("database", name, "a short name such as 'store_hybrid', or None for your base database")
    base = learner_database(learner)
    if name is None or name == "" or name == base:
        full = base
    elif name.startswith(base + "_"):
        full = name
    elif name.startswith(PREFIX):
        raise NamespaceError(
            f"Database {name!r} belongs to another learner's namespace, not {base!r}.",
            fix=f"Pass a short name such as 'store_hybrid' (it becomes '{base}_store_hybrid'), "
            "or set WORKBOOK_LEARNER to that learner's name.",
        )
    else:
        if not re.fullmatch(r"[A-Za-z0-9_-]+", name):
            raise NamespaceError(
                f"Database name {name!r} may only use letters, digits, '_' and '-'.",
                fix="Choose a short name such as 'store_hybrid'.",
            )
        full = f"{base}_{name}"
    if len(full.encode()) > MAX_DATABASE_NAME_BYTES:
        raise NamespaceError(
            f"Database name {full!r} is longer than MongoDB's {MAX_DATABASE_NAME_BYTES} bytes.",
            fix="Use a shorter name or a shorter WORKBOOK_LEARNER.",
        )
    return full


def shape_database_name(dataset: str, shape: str, *, within: str | None = None, learner: str | None = None) -> str:
    """Where ``dataset`` in ``shape`` lives unless told otherwise: ``workbench_<learner>_<dataset>_<shape>``.

    The one place shape databases are named. ``within`` puts it under another of the learner's
    databases instead (a design task's ``workbench_<learner>_quiz`` gives ``..._quiz_store_hybrid``).
    """
    suffix = f"{dataset}_{shape}"
    if within is None:
        return database_name(suffix, learner=learner)
    require_own_database(within, learner=learner)
    return database_name(f"{within}_{suffix}", learner=learner)


def is_own_database(db_name: str, *, learner: str | None = None) -> bool:
    """Whether ``db_name`` is one of this learner's workbench databases."""
    base = learner_database(learner)
    return db_name == base or db_name.startswith(base + "_")


def require_own_database(db_name: str, *, learner: str | None = None) -> None:
    """Refuse to write to a database outside the learner's namespace."""
    if not is_own_database(db_name, learner=learner):
        raise NamespaceError(
            f"The workbench only writes to its own databases ({learner_database(learner)}*), not {db_name!r}.",
            fix="Use workbook.connect(database=...) to get a database in your namespace.",
        )
