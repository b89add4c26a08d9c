"""Experiment configuration: a TOML file read into frozen dataclasses, checked field by field.

>>> config = ExperimentConfig.from_dict({"name": "demo", "dataset": {"name": "synthetic"}})
>>> config.systems[0].strategy, config.metrics.k
('dense', (1, 3, 5, 10, 25, 50))
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = ["ExperimentConfig", "DatasetConfig", "MemoryConfig", "ConsolidationConfig", "SystemConfig", "MetricsConfig"]


def _build(cls: type, section: str, values: Mapping[str, Any] | None) -> Any:
    """``cls(**values)``, refusing keys that ``cls`` does not have (a typo must not pass silently)."""
    values = dict(values or {})
    known = {f.name for f in fields(cls)}
    if unknown := sorted(set(values) - known):
        raise ValueError(f"{section}: unknown keys {unknown}; valid keys are {sorted(known)}")
    return cls(**values)


@dataclass(frozen=True)
class DatasetConfig:
    name: str = "locomo"
    params: dict[str, Any] = field(default_factory=dict)  # passed to the loader (e.g. n_turns, seed)
    conversations: tuple[str, ...] | None = None  # conversation ids to keep
    limit: int | None = None  # or the first ``limit`` conversations
    fallback: str | None = None  # a dataset to use when this one is not on the data path
    fallback_params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.conversations is not None:
            object.__setattr__(self, "conversations", tuple(self.conversations))
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"dataset.limit: {self.limit!r} must be >= 1")


@dataclass(frozen=True)
class MemoryConfig:
    store: str = "exact"  # the semantic tier's vector store, by registry name
    unit: str = "turn"  # "turn", "round" (two turns), "session" or "user-session" (LongMemEval's key)
    turn_seconds: float = 30.0  # the simulated clock's step per turn within a session
    simulate_access: bool = True  # at each incoming turn, retrieve as an agent would
    access_k: int = 3
    remember: str | None = None  # a remember policy by name: only the units it keeps are stored
    remember_params: dict[str, Any] = field(default_factory=dict)
    persist: bool = False  # keep the semantic store on disk (in the run folder) instead of in memory
    store_params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        units = ("turn", "round", "session", "user-session")
        if self.unit not in units:
            raise ValueError(f"memory.unit: {self.unit!r} is not one of {', '.join(units)}")
        if self.access_k < 1 or self.turn_seconds < 0:
            raise ValueError(f"memory.access_k/turn_seconds: {self.access_k}, {self.turn_seconds} out of range")


@dataclass(frozen=True)
class ConsolidationConfig:
    enabled: bool = False
    interval_hours: float = 24.0
    law: str = "none"  # a registry decay law
    law_params: dict[str, Any] = field(default_factory=dict)
    threshold: float = 0.1  # prune below this decay score
    prune_tiers: tuple[str, ...] = ("semantic",)  # the seed prunes semantic items only
    policy: dict[str, Any] = field(default_factory=dict)  # ConsolidationPolicy thresholds
    merge_threshold: float | None = 0.95

    def __post_init__(self) -> None:
        object.__setattr__(self, "prune_tiers", tuple(self.prune_tiers))
        if self.interval_hours <= 0:
            raise ValueError(f"consolidation.interval_hours: {self.interval_hours!r} must be > 0")


@dataclass(frozen=True)
class SystemConfig:
    """One retrieval system to evaluate: a strategy name from the registry and its parameters."""

    name: str
    strategy: str
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MetricsConfig:
    k: tuple[int, ...] = (1, 3, 5, 10, 25, 50)
    # Items each system returns per question before they are mapped to turns and sessions. Several
    # items can map to one turn (a semantic copy) or one session, so it must exceed max(k).
    depth: int = 100
    levels: tuple[str, ...] = ("turn", "session")
    gate: tuple[str, ...] = ("session.recall@10", "turn.recall@10")  # metrics checked by `openclaw-lab check`
    significance: str = "student"  # ranx.compare's stat_test
    answer_budgets: tuple[int, ...] = ()  # token budgets for answer-in-context (empty: not measured)
    answer_system: str | None = None  # the system whose retrieval feeds the context (default: the first)

    def __post_init__(self) -> None:
        object.__setattr__(self, "answer_budgets", tuple(sorted(set(self.answer_budgets))))
        object.__setattr__(self, "k", tuple(sorted(set(self.k))))
        object.__setattr__(self, "levels", tuple(self.levels))
        object.__setattr__(self, "gate", tuple(self.gate))
        if not self.k or min(self.k) < 1:
            raise ValueError(f"metrics.k: {self.k!r} must be integers >= 1")
        if self.depth < max(self.k):
            raise ValueError(f"metrics.depth: {self.depth} must be at least the largest k, {max(self.k)}")
        if bad := [level for level in self.levels if level not in ("turn", "session")]:
            raise ValueError(f"metrics.levels: {bad} are not turn or session")


DEFAULT_SYSTEMS = (SystemConfig("dense", "dense"),)


@dataclass(frozen=True)
class ExperimentConfig:
    name: str
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    systems: tuple[SystemConfig, ...] = DEFAULT_SYSTEMS
    metrics: MetricsConfig = field(default_factory=MetricsConfig)
    sweep: dict[str, list[Any]] = field(default_factory=dict)  # "section.key" or "section.params.key" -> values

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExperimentConfig:
        data = dict(data)
        if not isinstance(data.get("name"), str) or not data["name"]:
            raise ValueError(f"name: {data.get('name')!r} must be a non-empty string")
        known = {f.name for f in fields(cls)}
        if unknown := sorted(set(data) - known):
            raise ValueError(f"experiment: unknown keys {unknown}; valid keys are {sorted(known)}")
        systems = tuple(_build(SystemConfig, "systems", s) for s in data.get("systems", [])) or DEFAULT_SYSTEMS
        if len({s.name for s in systems}) != len(systems):
            raise ValueError(f"systems: names must be unique, got {[s.name for s in systems]}")
        return cls(
            name=data["name"],
            dataset=_build(DatasetConfig, "dataset", data.get("dataset")),
            memory=_build(MemoryConfig, "memory", data.get("memory")),
            consolidation=_build(ConsolidationConfig, "consolidation", data.get("consolidation")),
            systems=systems,
            metrics=_build(MetricsConfig, "metrics", data.get("metrics")),
            sweep=dict(data.get("sweep", {})),
        )

    @classmethod
    def from_toml(cls, path: str | Path) -> ExperimentConfig:
        with open(path, "rb") as handle:
            return cls.from_dict(tomllib.load(handle))

    def to_dict(self) -> dict[str, Any]:
        return json.loads(json.dumps(asdict(self)))

    def fingerprint(self) -> str:
        """A short hash of the whole configuration, for run ids and provenance."""
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:10]

    def with_value(self, dotted: str, value: Any) -> ExperimentConfig:
        """A copy with one setting changed, e.g. ``with_value("consolidation.law_params.daily", 0.95)``."""
        data = copy.deepcopy(self.to_dict())
        data.pop("sweep")
        *path, last = dotted.split(".")
        node = data
        for key in path:
            if not isinstance(node, dict) or key not in node:
                raise ValueError(f"sweep: {dotted!r} does not name a setting ({key!r} not found)")
            node = node[key]
        if last not in node and not path[-1:] in (["params"], ["law_params"], ["policy"]):
            raise ValueError(f"sweep: {dotted!r} does not name a setting ({last!r} not found)")
        node[last] = value
        return ExperimentConfig.from_dict(data)
