"""Memory-aware scoring as in Generative Agents (Park et al., 2023): relevance, recency, importance.

``score = w_rel·relevance + w_rec·recency + w_imp·importance``, each part in [0, 1]:

- relevance: the base retriever's score, min-max normalised over the candidates (all equal: 1);
- recency: ``0.5 ** (hours since last_accessed / half_life_hours)``, from the clock (a future
  access counts as now). The default half-life, about 138 h, is the paper's decay of 0.995 per hour;
- importance: ``(importance - 1) / 4`` (1 → 0, 5 → 1).

Retrieval reads items and never records an access: the caller (the memory manager) does that.

>>> from datetime import datetime, timedelta
>>> from openclaw_lab.clock import SimulatedClock
>>> from openclaw_lab.model import MemoryItem
>>> from openclaw_lab.retrieval.bm25 import BM25Retriever
>>> clock = SimulatedClock(datetime(2023, 5, 8))
>>> old = MemoryItem.new("my dog is called Rex", now=datetime(2023, 4, 1), id="old")
>>> new = MemoryItem.new("my dog chewed a shoe", now=datetime(2023, 5, 8), id="new")
>>> retriever = MemoryAwareRetriever(BM25Retriever(), clock)
>>> retriever.index([old, new])
>>> [hit.item.id for hit in retriever.search("dog", k=2)]
['new', 'old']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, as_utc, check_k, sorted_hits
from openclaw_lab.retrieval.protocol import Retriever, SearchEach, check_query

__all__ = ["MemoryAwareRetriever", "recency", "importance_score", "min_max", "DEFAULT_HALF_LIFE_HOURS"]

# Generative Agents decays recency by 0.995 per game hour: 0.5 ** (1 / h) = 0.995 gives h ≈ 138.3.
DEFAULT_HALF_LIFE_HOURS = math.log(0.5) / math.log(0.995)


def recency(item: MemoryItem, now: datetime, half_life_hours: float) -> float:
    """``0.5 ** (hours since the last access / half-life)``, in (0, 1]; higher is more recent.

    >>> from datetime import datetime
    >>> item = MemoryItem.new("x", now=datetime(2023, 5, 1))
    >>> recency(item, datetime(2023, 5, 2), half_life_hours=24.0)
    0.5
    """
    hours = max((as_utc(now, "now") - item.last_accessed).total_seconds() / 3600.0, 0.0)
    return 0.5 ** (hours / half_life_hours)


def importance_score(item: MemoryItem) -> float:
    """Importance 1..5 mapped to 0..1."""
    return (int(item.importance) - 1) / 4.0


class MemoryAwareRetriever(SearchEach):
    """Rescore the base retriever's ``candidates`` by relevance, recency and importance (higher is better)."""

    def __init__(
        self,
        base: Retriever,
        clock: Any,
        w_rel: float = 1.0,
        w_rec: float = 1.0,
        w_imp: float = 1.0,
        half_life_hours: float = DEFAULT_HALF_LIFE_HOURS,
        candidates: int = 100,
    ) -> None:
        self.base, self.clock = base, clock
        self.w_rel, self.w_rec, self.w_imp = w_rel, w_rec, w_imp
        self.half_life_hours, self.candidates = half_life_hours, candidates

    def __repr__(self) -> str:
        return (
            f"MemoryAwareRetriever({self.base!r}, w_rel={self.w_rel}, w_rec={self.w_rec}, w_imp={self.w_imp}, "
            f"half_life_hours={self.half_life_hours:.1f}, candidates={self.candidates})"
        )

    def index(self, items: Sequence[MemoryItem]) -> None:
        self.base.index(items)

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """The best ``k`` candidates by the weighted sum (the filter is applied in the base retriever)."""
        query, k = check_query(query), check_k(k)
        self._check_params()
        if self.clock is None:
            raise ValueError("clock: MemoryAwareRetriever needs a clock for recency; pass clock=SimulatedClock(...)")
        hits = self.base.search(query, max(self.candidates, k), filter)
        if not hits:
            return []
        now = self.clock.now()
        relevance = min_max([hit.score for hit in hits])
        return sorted_hits(
            (
                Hit(
                    hit.item,
                    self.w_rel * rel
                    + self.w_rec * recency(hit.item, now, self.half_life_hours)
                    + self.w_imp * importance_score(hit.item),
                )
                for hit, rel in zip(hits, relevance)
            ),
            k,
        )

    def _check_params(self) -> None:
        for name in ("w_rel", "w_rec", "w_imp", "half_life_hours"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name}: {value!r} must be a finite number >= 0")
        if self.half_life_hours == 0:
            raise ValueError("half_life_hours: 0 is not a half-life; give a number of hours > 0")
        check_k(self.candidates, "candidates")


def min_max(scores: Sequence[float]) -> list[float]:
    """Scores scaled to [0, 1]; all equal gives 1 (every candidate is the most relevant).

    >>> min_max([2.0, 4.0, 3.0])
    [0.0, 1.0, 0.5]
    """
    low, high = min(scores), max(scores)
    if high == low:
        return [1.0] * len(scores)
    return [(score - low) / (high - low) for score in scores]
