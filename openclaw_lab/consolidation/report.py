"""What a consolidation run did: the report, the score summary, and the log it is appended to.

>>> import numpy as np
>>> summary = ScoreSummary.of(np.array([0.05, 0.5, 1.2]))
>>> summary.count, summary.median, summary.histogram[0]
(3, 0.5, 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["ScoreSummary", "ConsolidationReport", "ConsolidationLog", "MemoryLog", "DEFAULT_EDGES"]

# Fixed bins so that histograms from successive runs line up in a plot; the seed law tops at 1.3.
DEFAULT_EDGES: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(16))


@dataclass(frozen=True)
class ScoreSummary:
    """The distribution of decay scores in one tier (higher is better); stats are None when empty.

    ``histogram[i]`` counts scores in ``[edges[i], edges[i+1])``; scores outside the edges are
    clipped into the first or last bin, so the counts always add up to ``count``.
    """

    count: int
    min: float | None
    p10: float | None
    median: float | None
    p90: float | None
    max: float | None
    edges: tuple[float, ...]
    histogram: tuple[int, ...]

    @classmethod
    def of(cls, scores: np.ndarray, edges: tuple[float, ...] = DEFAULT_EDGES) -> ScoreSummary:
        scores = np.asarray(scores, dtype=np.float64)
        counts, _ = np.histogram(np.clip(scores, edges[0], edges[-1]), bins=np.asarray(edges))
        if scores.size == 0:
            return cls(0, None, None, None, None, None, tuple(edges), tuple(int(c) for c in counts))
        p10, median, p90 = (float(v) for v in np.percentile(scores, [10, 50, 90]))
        return cls(
            int(scores.size), float(scores.min()), p10, median, p90, float(scores.max()),
            tuple(edges), tuple(int(c) for c in counts),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count, "min": self.min, "p10": self.p10, "median": self.median, "p90": self.p90,
            "max": self.max, "edges": list(self.edges), "histogram": list(self.histogram),
        }


@dataclass(frozen=True)
class ConsolidationReport:
    """One run at ``at``: ids promoted, merged, refreshed, removed and pruned, counts and scores.

    - ``promoted``: episodic ids copied into a new semantic item ``sem_<id>``;
    - ``merged``: episodic id -> the existing semantic id it was merged into (near-duplicate);
    - ``refreshed``: semantic ids whose access count or last access was brought up to date from
      their already-promoted episodic sources;
    - ``removed``: episodic ids deleted after promotion (``remove_after_promotion``);
    - ``pruned``: tier name -> ids deleted because their decay score fell below the threshold;
    - ``scores``: tier name -> the decay-score distribution at ``at``, before pruning.
    """

    at: datetime
    promoted: tuple[str, ...] = ()
    merged: Mapping[str, str] = field(default_factory=dict)
    refreshed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    pruned: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    counts: Mapping[str, int] = field(default_factory=dict)
    scores: Mapping[str, ScoreSummary] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (``at`` as an ISO string)."""
        return {
            "at": self.at.isoformat(),
            "promoted": list(self.promoted),
            "merged": dict(self.merged),
            "refreshed": list(self.refreshed),
            "removed": list(self.removed),
            "pruned": {tier: list(ids) for tier, ids in self.pruned.items()},
            "counts": dict(self.counts),
            "scores": {tier: summary.to_dict() for tier, summary in self.scores.items()},
            "config": dict(self.config),
        }


@runtime_checkable
class ConsolidationLog(Protocol):
    """Where reports go (the SQLite episodic tier implements it, so a notebook can plot them)."""

    def append_consolidation(self, at: datetime, report: dict) -> None: ...


class MemoryLog:
    """An in-memory ``ConsolidationLog`` for tests and notebooks.

    >>> log = MemoryLog()
    >>> log.append_consolidation(datetime(2023, 5, 8), {"promoted": []})
    >>> len(log.consolidation_log())
    1
    """

    def __init__(self) -> None:
        self._entries: list[dict] = []

    def append_consolidation(self, at: datetime, report: dict) -> None:
        self._entries.append({**report, "at": at.isoformat()})

    def consolidation_log(self) -> list[dict]:
        return [dict(entry) for entry in self._entries]
