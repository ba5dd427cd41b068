"""The approximation pattern (lesson 13): a counter written every Nth event instead of on every event.

A page-view counter that is read as "about 12 thousand views" need not cost one write per view.
The application counts views in memory and adds ``every`` to the stored counter each time its
local count reaches ``every``: writes fall by a factor of ``every``, and the stored value is
never more than ``every - 1`` behind the truth (per application server). :func:`counter_table`
works the trade-off out; :func:`count_views` runs it against a database and counts the writes sent.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from pymongo.database import Database

from workbook.calls import measure_call
from workbook.errors import ArgumentTypeError
from workbook.patterns.work import load_steps

COLLECTION = "page_views"


def _check_every(every: Any) -> int:
    if not isinstance(every, int) or isinstance(every, bool) or every < 1:
        raise ArgumentTypeError("every", every, "a positive whole number", fix="e.g. every=100")
    return every


def counter_table(events: int, everies: tuple[int, ...] = (1, 10, 100, 1000)) -> pd.DataFrame:
    """Per ``every``: writes for ``events`` events, writes saved, the value stored and how far it is behind (pure)."""
    rows = []
    for every in everies:
        writes = events // _check_every(every)
        stored = writes * every
        rows.append(
            {
                "every": every,
                "writes": writes,
                "writes_saved_pct": round(100 * (1 - writes / events), 2) if events else 0.0,
                "stored": stored,
                "behind": events - stored,
                "behind_at_most": every - 1,
                "error_pct": round(100 * (events - stored) / events, 2) if events else 0.0,
            }
        )
    return pd.DataFrame(rows).set_index("every")


class ApproximateCounter:
    """Counts events in memory and writes ``$inc: every`` to ``{_id: key}`` each ``every``-th event."""

    def __init__(self, db: Database, key: str, every: int) -> None:
        self.db, self.key, self.every = db, key, _check_every(every)
        self.pending = 0

    def record(self) -> bool:
        """One event; True when it was the one that wrote."""
        self.pending += 1
        if self.pending < self.every:
            return False
        self.db[COLLECTION].update_one({"_id": self.key}, {"$inc": {"views": self.pending}}, upsert=True)
        self.pending = 0
        return True


def count_views(
    db: Database, events: int, everies: tuple[int, ...] = (1, 10, 100), *, progress: bool = True
) -> pd.DataFrame:
    """Run ``events`` page views through a counter per ``every`` on ``db``: writes sent, value stored, lag."""
    from workbook.namespace import require_own_database

    require_own_database(db.name)
    db.drop_collection(COLLECTION)
    rows = []
    bar = load_steps(f"{events:,} views per counter", events * len(everies), progress)
    for every in everies:
        counter = ApproximateCounter(db, f"every-{every}", every)

        def views(counter: ApproximateCounter = counter) -> None:
            for _ in range(events):
                counter.record()
                bar.update()

        sent = measure_call(None, views)
        stored = (db[COLLECTION].find_one({"_id": counter.key}) or {}).get("views", 0)
        rows.append(
            {
                "every": every,
                "events": events,
                "writes_sent": sent.round_trips,
                "stored": stored,
                "behind": events - stored,
            }
        )
    bar.close()
    return pd.DataFrame(rows).set_index("every")
