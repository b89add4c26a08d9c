"""Extractive session summaries: a finished session's most informative user statements become one semantic item.

No LLM: a user statement's information is the summed inverse document frequency of its content words
over the memory held (rare words, names and values weigh most; questions are left out). The ``statements``
best ones of a session, in the order they were said, are joined into a semantic item with id
``summary_<session>``, provenance to their turns (``source_ids``, ``summary_of``) and the time of its last
statement (what it says is as of then: expiry reads its dates against it).
A session is summarised once, when its newest memory is ``idle_hours`` old.

>>> from datetime import datetime
>>> said = lambda n, text: MemoryItem.new(f"user: {text}", now=datetime(2023, 5, 8, 9, n), id=f"t{n}",
...                                       session_id="s1", source_ids=[f"t{n}"], metadata={"speaker": "user"})
>>> items = [said(1, "hi there, how are you?"), said(2, "my sister Ana moved to Lyon for a job at Airbus"),
...          said(3, "ok"), said(4, "I am allergic to peanuts")]
>>> [(s.id, s.source_ids) for s in SessionSummaries(statements=2).summaries(items, datetime(2023, 5, 9))]
[('summary_s1', ('t2', 't4'))]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache

from openclaw_lab.model import MemoryItem, MemoryTier, as_utc
from openclaw_lab.retrieval.learned import content_words

__all__ = ["SessionSummaries", "SUMMARY_OF", "summary_id"]

SUMMARY_OF = "summary_of"


@lru_cache(maxsize=100_000)  # each consolidation run reads every memory again; the words of a text never change
def _content_words(text: str) -> frozenset[str]:
    return frozenset(content_words([text])[0])


def summary_id(session_id: str) -> str:
    return f"summary_{session_id}"


@dataclass(frozen=True)
class SessionSummaries:
    """Summarise each finished session into one semantic item (see the module doc)."""

    statements: int = 3
    idle_hours: float = 1.0
    speaker: str | None = "user"  # whose statements are kept (None: anyone's)

    def __post_init__(self) -> None:
        if isinstance(self.statements, bool) or not isinstance(self.statements, int) or self.statements < 1:
            raise ValueError(f"statements: {self.statements!r} must be an int >= 1")
        if not self.idle_hours >= 0:
            raise ValueError(f"idle_hours: {self.idle_hours!r} must be >= 0")

    def summaries(self, items: Sequence[MemoryItem], now: datetime, done: frozenset[str] = frozenset()) -> list[MemoryItem]:
        """New summary items for the finished sessions of ``items`` (episodic) whose summary ids are not in ``done``."""
        now = as_utc(now, "now")
        sessions: dict[str, list[MemoryItem]] = {}
        for item in items:
            if item.session_id:
                sessions.setdefault(item.session_id, []).append(item)
        finished = {sid: held for sid, held in sessions.items() if summary_id(sid) not in done
                    and max(i.created_at for i in held) <= now - timedelta(hours=self.idle_hours)}  # fmt: skip
        if not finished:
            return []
        words = [_content_words(i.content) for i in items]
        frequency = Counter(w for ws in words for w in ws)
        idf = {w: math.log(len(items) / n) for w, n in frequency.items()}
        weight = {item.id: sum(idf[w] for w in ws) for item, ws in zip(items, words)}
        out = []
        for sid, held in sorted(finished.items()):
            said = [i for i in held if (self.speaker is None or i.metadata.get("speaker") == self.speaker)
                    and "?" not in i.content and weight[i.id] > 0]  # fmt: skip
            best = sorted(sorted(said, key=lambda i: (-weight[i.id], i.id))[: self.statements],
                          key=lambda i: (i.created_at, i.id))  # fmt: skip
            if best:
                out.append(MemoryItem.new(
                    "\n".join(i.content for i in best), now=best[-1].created_at, id=summary_id(sid), tier=MemoryTier.SEMANTIC,
                    session_id=sid, source_ids=tuple(t for i in best for t in i.source_ids), source="summary",
                    importance=max(i.importance for i in best),
                    metadata={SUMMARY_OF: sid, "consolidated_from": ",".join(i.id for i in best)}))  # fmt: skip
        return out
