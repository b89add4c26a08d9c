"""Policies: which episodic items are promoted to semantic memory, and which items are pruned.

Both are pure functions of (items, now): no store, no clock. The seed's rules are the defaults.

>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> now = datetime(2023, 5, 8)
>>> ConsolidationPolicy().should_consolidate(MemoryItem.new("x", now=now, importance=3, access_count=1), now)
True
>>> PrunePolicy().select_prunable([MemoryItem.new("y", now=now, id="y", importance=1)], now)
[]
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import numpy as np

from openclaw_lab.consolidation.decay import DecayInputs, DecayLaw, SeedDecay, decay_scores
from openclaw_lab.model import Importance, MemoryItem, as_utc

__all__ = ["ConsolidationPolicy", "PrunePolicy"]


def _count(value: int, field_name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{field_name}: {value!r} must be an integer >= 0")
    return value


@dataclass(frozen=True)
class ConsolidationPolicy:
    """Promote an episodic item when any seed rule holds (each threshold a parameter):

    - its importance is at least ``critical`` (CRITICAL; ``None`` switches the rule off), or
    - ``access_count >= access_threshold`` (3), or
    - ``importance >= importance_threshold`` (3) and ``access_count >= min_access_with_importance`` (1);

    and, in every case, the item is at least ``min_age`` old at ``now`` (0: the seed has no such rule).
    ``remove_after_promotion`` deletes the episodic item once its semantic copy is written (default
    False: an episodic item is removed only when a policy says so).
    """

    critical: Importance | None = Importance.CRITICAL
    access_threshold: int = 3
    importance_threshold: Importance = Importance.MEDIUM
    min_access_with_importance: int = 1
    min_age: timedelta = timedelta(0)
    remove_after_promotion: bool = False

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.critical is not None:
            set_(self, "critical", Importance.parse(self.critical, "critical"))
        set_(self, "importance_threshold", Importance.parse(self.importance_threshold, "importance_threshold"))
        _count(self.access_threshold, "access_threshold")
        _count(self.min_access_with_importance, "min_access_with_importance")
        if not isinstance(self.min_age, timedelta) or self.min_age < timedelta(0):
            raise ValueError(f"min_age: {self.min_age!r} must be a timedelta >= 0")
        if not isinstance(self.remove_after_promotion, bool):
            raise ValueError(f"remove_after_promotion: {self.remove_after_promotion!r} must be True or False")

    def should_consolidate(self, item: MemoryItem, now: datetime) -> bool:
        """True when ``item`` deserves a semantic copy at ``now``."""
        if as_utc(now, "now") - item.created_at < self.min_age:
            return False
        if self.critical is not None and item.importance >= self.critical:
            return True
        if item.access_count >= self.access_threshold:
            return True
        return item.importance >= self.importance_threshold and item.access_count >= self.min_access_with_importance


@dataclass(frozen=True)
class PrunePolicy:
    """Prune the items whose decay score under ``law`` at ``now`` is below ``threshold`` (seed: 0.1).

    With the seed law an item accessed within the last hour scores at least
    ``(1/5 + 0.1) · 0.9**(1/24) ≈ 0.299``, so a run every hour never prunes it.
    """

    law: DecayLaw = field(default_factory=SeedDecay)
    threshold: float = 0.1

    def __post_init__(self) -> None:
        if not isinstance(self.law, DecayLaw):
            raise ValueError(f"law: {self.law!r} has no score(item, now); use a law from consolidation.decay")
        value = self.threshold
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"threshold: {value!r} must be a finite number")

    def evaluate(
        self, items: Iterable[MemoryItem], now: datetime, inputs: DecayInputs | None = None
    ) -> tuple[np.ndarray, list[str]]:
        """The decay scores of ``items`` at ``now`` (higher is better) and the ids to prune (``inputs``:
        ``decay_inputs`` of the same items and time, if already at hand)."""
        items = list(items)
        scores = decay_scores(items, self.law, now, inputs)
        return scores, [item.id for item, score in zip(items, scores) if score < self.threshold]

    def select_prunable(self, items: Iterable[MemoryItem], now: datetime) -> list[str]:
        """Ids of the items whose score at ``now`` is below ``threshold``, in input order."""
        return self.evaluate(items, now)[1]
