"""Expiry: a memory about a date in its own future (a plan) stops being valid once that date has passed.

"Ana is flying to Rome on 12 June 2023", said on 2 June, is a plan; on 14 June it is history, and an
agent that still offers it as current is wrong. Nothing is deleted: the item is marked ``valid_until``
(the end of the latest date it mentions, plus ``grace_days``), as supersession marks replaced facts, and
a system's ``superseded`` setting keeps, demotes or filters what is marked. Dates said before the item
was created (a past event) never expire it. Only absolute dates are read ("12 June 2023", "June 12,
2023", "2023-06-12"); relative ones ("next Friday") are left alone.

>>> from datetime import datetime
>>> plan = MemoryItem.new("Ana is flying to Rome on 12 June 2023.", now=datetime(2023, 6, 2), id="p")
>>> past = MemoryItem.new("Ana flew to Rome on 1 June 2023.", now=datetime(2023, 6, 2), id="e")
>>> [(item.id, item.metadata[VALID_UNTIL][:10]) for item in Expiry().marks([plan, past], datetime(2023, 6, 14))]
[('p', '2023-06-13')]
>>> Expiry().marks([plan], datetime(2023, 6, 12, 23))  # the day itself: still valid
[]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from openclaw_lab.consolidation.supersession import VALID_UNTIL
from openclaw_lab.model import MemoryItem, as_utc

__all__ = ["Expiry", "mentioned_dates"]

_MONTHS = {name.lower(): n for n, name in enumerate(
    "January February March April May June July August September October November December".split(), 1)}  # fmt: skip
_MONTH = "(" + "|".join(_MONTHS) + ")"
_PATTERNS = (
    (re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?{_MONTH},? (\d{{4}})\b", re.I), lambda m: (m[3], m[2], m[1])),
    (re.compile(rf"\b{_MONTH} (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", re.I), lambda m: (m[3], m[1], m[2])),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), lambda m: (m[1], m[2], m[3])),
)


def mentioned_dates(text: str) -> list[date]:
    """The absolute calendar dates ``text`` mentions (impossible ones, such as 31 June, are skipped).

    >>> mentioned_dates("from 3rd of May, 2023 to 2023-05-09, not 31 June 2023")
    [datetime.date(2023, 5, 3), datetime.date(2023, 5, 9)]
    """
    found = []
    for pattern, parts in _PATTERNS:
        for match in pattern.finditer(text):
            year, month, day = parts(match)
            month = _MONTHS.get(month.lower(), None) if not month.isdigit() else int(month)
            try:
                found.append(date(int(year), month, int(day)))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                continue
    return sorted(found)


@dataclass(frozen=True)
class Expiry:
    """Mark memories whose future dates have all passed (see the module doc)."""

    grace_days: float = 0.0

    def __post_init__(self) -> None:
        if not self.grace_days >= 0:
            raise ValueError(f"grace_days: {self.grace_days!r} must be >= 0")

    def marks(self, items: Sequence[MemoryItem], now: datetime) -> list[MemoryItem]:
        """The items to rewrite with ``valid_until``; items already marked are left alone."""
        now = as_utc(now, "now")
        marked = []
        for item in items:
            if VALID_UNTIL in item.metadata:
                continue
            ahead = [d for d in mentioned_dates(item.content) if d > item.created_at.date()]
            if not ahead:
                continue
            end = datetime.combine(max(ahead) + timedelta(days=1), datetime.min.time(), item.created_at.tzinfo)
            end += timedelta(days=self.grace_days)
            if end <= now:
                marked.append(item.replace(metadata={**item.metadata, VALID_UNTIL: end.isoformat()}))
        return marked
