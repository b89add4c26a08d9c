"""Decay laws: how much a memory is still worth keeping at a given time. Higher score = keep.

Every law is a small frozen dataclass with ``score(item, now) -> float`` and a vectorised
``score_arrays(importance, access_count, days)``; ``decay_scores(items, law, now)`` scores a whole
store at once. ``t`` (``days``) is always the fractional number of days from ``item.last_accessed``
to ``now``, floored at 0 (an access in the future of ``now`` counts as "just now").

>>> from datetime import datetime, timedelta
>>> from openclaw_lab.model import MemoryItem
>>> now = datetime(2023, 5, 8)
>>> item = MemoryItem.new("I moved to Lisbon", now=now - timedelta(days=2), importance=3, access_count=2)
>>> round(SeedDecay().score(item, now), 3)  # (3/5 + 0.2) * 0.9**2
0.648
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from openclaw_lab.model import MemoryItem, as_utc, to_timestamp

__all__ = [
    "DecayLaw",
    "SeedDecay",
    "ExponentialDecay",
    "EbbinghausDecay",
    "PowerLawDecay",
    "NoDecay",
    "decay_scores",
    "decay_inputs",
    "DecayInputs",
    "days_since_access",
]

SECONDS_PER_DAY = 86_400.0


@runtime_checkable
class DecayLaw(Protocol):
    def score(self, item: MemoryItem, now: datetime) -> float:
        """How much ``item`` is worth keeping at ``now``; higher is better."""


@runtime_checkable
class VectorisedDecayLaw(Protocol):
    def score_arrays(self, importance: np.ndarray, access_count: np.ndarray, days: np.ndarray) -> np.ndarray:
        """``score`` for many items at once: arrays of importance, access count and days since access."""


def days_since_access(items: Iterable[MemoryItem], now: datetime) -> np.ndarray:
    """Fractional days from each item's ``last_accessed`` to ``now``, floored at 0."""
    now_ts = to_timestamp(as_utc(now, "now"))
    last = np.fromiter((to_timestamp(item.last_accessed) for item in items), dtype=np.float64)
    return np.maximum((now_ts - last) / SECONDS_PER_DAY, 0.0)


def _positive(value: float, field_name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{field_name}: {value!r} must be a finite number > 0")


def _non_negative(value: float, field_name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{field_name}: {value!r} must be a finite number >= 0")


class _ArrayLaw:
    """``score`` for one item via the law's vectorised ``score_arrays``."""

    def score(self, item: MemoryItem, now: datetime) -> float:
        """How much ``item`` is worth keeping at ``now``; higher is better."""
        days = days_since_access([item], now)
        importance = np.array([int(item.importance)], dtype=np.float64)
        access = np.array([item.access_count], dtype=np.float64)
        return float(self.score_arrays(importance, access, days)[0])

    def score_arrays(self, importance: np.ndarray, access_count: np.ndarray, days: np.ndarray) -> np.ndarray:
        raise NotImplementedError


@dataclass(frozen=True)
class SeedDecay(_ArrayLaw):
    """The seed's law: ``(importance/importance_scale + min(per_access·access_count, cap)) · daily**t``.

    Defaults reproduce the seed (``importance/5``, +0.1 per access capped at 0.3, ×0.9 per day), so a
    score lies in [0, 1.3]. ``importance_scale`` is the seed's "base" divisor.

    >>> SeedDecay().score_arrays(np.array([5.0]), np.array([3.0]), np.array([0.0]))
    array([1.3])
    """

    per_access: float = 0.1
    cap: float = 0.3
    daily: float = 0.9
    importance_scale: float = 5.0

    def __post_init__(self) -> None:
        _non_negative(self.per_access, "per_access")
        _non_negative(self.cap, "cap")
        _positive(self.importance_scale, "importance_scale")
        if not isinstance(self.daily, (int, float)) or not 0 < self.daily <= 1:
            raise ValueError(f"daily: {self.daily!r} must be a factor in (0, 1]")

    def score_arrays(self, importance: np.ndarray, access_count: np.ndarray, days: np.ndarray) -> np.ndarray:
        bonus = np.minimum(self.per_access * access_count, self.cap)
        return (importance / self.importance_scale + bonus) * np.power(self.daily, days)


@dataclass(frozen=True)
class ExponentialDecay(_ArrayLaw):
    """``(importance/importance_scale) · 0.5**(t/half_life_days)``: halves every half-life.

    >>> ExponentialDecay(half_life_days=7).score_arrays(np.array([4.0]), np.array([0.0]), np.array([14.0]))
    array([0.2])
    """

    half_life_days: float = 7.0
    importance_scale: float = 5.0

    def __post_init__(self) -> None:
        _positive(self.half_life_days, "half_life_days")
        _positive(self.importance_scale, "importance_scale")

    def score_arrays(self, importance: np.ndarray, access_count: np.ndarray, days: np.ndarray) -> np.ndarray:
        return importance / self.importance_scale * np.power(0.5, days / self.half_life_days)


@dataclass(frozen=True)
class EbbinghausDecay(_ArrayLaw):
    """Ebbinghaus retention ``exp(-t/S)`` with ``S = base_strength_days · (1 + growth·access_count)``.

    As in MemoryBank (Zhong et al., 2023): strength starts at 1 day and every recall adds ``growth``
    times the base, while ``t`` restarts at the last access (defaults give MemoryBank's ``S = 1 +
    recalls``). With ``importance_weighted`` the retention is multiplied by ``importance/5``.

    >>> EbbinghausDecay().score_arrays(np.array([3.0]), np.array([2.0]), np.array([3.0])).round(4)
    array([0.3679])
    """

    base_strength_days: float = 1.0
    growth: float = 1.0
    importance_weighted: bool = False
    importance_scale: float = 5.0

    def __post_init__(self) -> None:
        _positive(self.base_strength_days, "base_strength_days")
        _non_negative(self.growth, "growth")
        _positive(self.importance_scale, "importance_scale")

    def strength(self, access_count: np.ndarray) -> np.ndarray:
        """Memory strength S in days: grows linearly with every recall."""
        return self.base_strength_days * (1.0 + self.growth * access_count)

    def score_arrays(self, importance: np.ndarray, access_count: np.ndarray, days: np.ndarray) -> np.ndarray:
        retention = np.exp(-days / self.strength(access_count))
        return retention * importance / self.importance_scale if self.importance_weighted else retention


@dataclass(frozen=True)
class PowerLawDecay(_ArrayLaw):
    """``(importance/importance_scale) · (1 + t/scale_days)**(-alpha)``: a long, heavy tail.

    >>> PowerLawDecay(scale_days=1, alpha=0.5).score_arrays(np.array([5.0]), np.array([0.0]), np.array([3.0]))
    array([0.5])
    """

    scale_days: float = 1.0
    alpha: float = 0.5
    importance_scale: float = 5.0

    def __post_init__(self) -> None:
        _positive(self.scale_days, "scale_days")
        _non_negative(self.alpha, "alpha")
        _positive(self.importance_scale, "importance_scale")

    def score_arrays(self, importance: np.ndarray, access_count: np.ndarray, days: np.ndarray) -> np.ndarray:
        return importance / self.importance_scale * np.power(1.0 + days / self.scale_days, -self.alpha)


@dataclass(frozen=True)
class NoDecay(_ArrayLaw):
    """A constant 1.0: nothing ever falls below a prune threshold <= 1 (the control condition)."""

    def score_arrays(self, importance: np.ndarray, access_count: np.ndarray, days: np.ndarray) -> np.ndarray:
        return np.ones_like(days, dtype=np.float64)


class DecayInputs(NamedTuple):
    """What a vectorised law reads of each item: importance, access count, days since last access."""

    importance: np.ndarray
    access_count: np.ndarray
    days: np.ndarray


def decay_inputs(items: Iterable[MemoryItem], now: datetime) -> DecayInputs:
    """The arrays every vectorised law scores ``items`` from at ``now`` (float64, in input order)."""
    items = list(items)
    importance = np.array([int(item.importance) for item in items], dtype=np.float64)
    access = np.array([item.access_count for item in items], dtype=np.float64)
    return DecayInputs(importance, access, days_since_access(items, now))


def decay_scores(
    items: Iterable[MemoryItem], law: DecayLaw, now: datetime, inputs: DecayInputs | None = None
) -> np.ndarray:
    """Scores of ``items`` under ``law`` at ``now`` as a float64 array; higher is better.

    Vectorised for laws with ``score_arrays``, from ``inputs`` when given (``decay_inputs`` of the same
    items and time: several laws scoring one store read it once); any other ``DecayLaw`` is scored item by item.

    >>> decay_scores([], SeedDecay(), datetime(2023, 5, 8)).shape
    (0,)
    """
    if not isinstance(law, DecayLaw):
        raise ValueError(f"law: {law!r} has no score(item, now); use one of SeedDecay, ExponentialDecay, ...")
    items = list(items)
    if not isinstance(law, VectorisedDecayLaw):
        return np.array([law.score(item, now) for item in items], dtype=np.float64)
    return np.asarray(law.score_arrays(*(inputs or decay_inputs(items, now))), dtype=np.float64)
