"""One registry per kind of component: config names → factories. Duplicate names are refused.

>>> stores.names()[:1]
['exact']
>>> type(stores.create("exact")).__name__
'ExactStore'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["Registry", "stores", "retrievers", "decay_laws", "datasets", "rerankers", "remember_policies", "agents"]


class Registry:
    """Names → factories, given as objects or as lazy ``"module:attribute"`` strings.

    Lazy strings keep optional backends (qdrant, milvus) from being imported until they are used.
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Callable[..., Any] | str] = {}

    def register(self, name: str, factory: Callable[..., Any] | str) -> None:
        if name in self._entries:
            raise ValueError(f"{self.kind}: the name {name!r} is already registered")
        self._entries[name] = factory

    def names(self) -> list[str]:
        return list(self._entries)

    def get(self, name: str) -> Callable[..., Any]:
        if name not in self._entries:
            raise ValueError(f"{self.kind}: unknown name {name!r}; choose one of {', '.join(self._entries)}")
        entry = self._entries[name]
        if isinstance(entry, str):
            module, _, attribute = entry.partition(":")
            entry = getattr(importlib.import_module(module), attribute)
            self._entries[name] = entry
        return entry

    def create(self, name: str, /, **params: Any) -> Any:
        return self.get(name)(**params)

    def __contains__(self, name: object) -> bool:
        return name in self._entries


stores = Registry("store")
stores.register("exact", "openclaw_lab.stores.exact:ExactStore")
stores.register("chroma", "openclaw_lab.stores.chroma:ChromaStore")
stores.register("qdrant", "openclaw_lab.stores.qdrant:QdrantStore")
stores.register("milvus", "openclaw_lab.stores.milvus:MilvusStore")

# Strategy names resolve to factories ``f(embedder=..., clock=..., **params) -> Retriever``.
retrievers = Registry("retriever strategy")
retrievers.register("dense", "openclaw_lab.retrieval.dense:DenseRetriever")
retrievers.register("sparse", "openclaw_lab.retrieval.bm25:BM25Retriever")
retrievers.register("bm25", "openclaw_lab.retrieval.bm25:BM25Retriever")
retrievers.register("hybrid", "openclaw_lab.retrieval.fusion:hybrid")
retrievers.register("rerank", "openclaw_lab.retrieval.rerank:default_rerank")

rerankers = Registry("reranker")
rerankers.register("cross-encoder", "openclaw_lab.retrieval.rerank:CrossEncoderReranker")
rerankers.register("learned", "openclaw_lab.retrieval.learned:LearnedReranker")
rerankers.register("mmr", "openclaw_lab.retrieval.rerank:MMRReranker")

decay_laws = Registry("decay law")
decay_laws.register("seed", "openclaw_lab.consolidation.decay:SeedDecay")
decay_laws.register("exponential", "openclaw_lab.consolidation.decay:ExponentialDecay")
decay_laws.register("ebbinghaus", "openclaw_lab.consolidation.decay:EbbinghausDecay")
decay_laws.register("power", "openclaw_lab.consolidation.decay:PowerLawDecay")
decay_laws.register("none", "openclaw_lab.consolidation.decay:NoDecay")

datasets = Registry("dataset")
datasets.register("locomo", "openclaw_lab.datasets.locomo:load_locomo")
datasets.register("longmemeval", "openclaw_lab.datasets.longmemeval:load_longmemeval")
datasets.register("synthetic", "openclaw_lab.datasets.synthetic:generate")

remember_policies = Registry("remember policy")
remember_policies.register("seed", "openclaw_lab.agent.remember:SeedRememberPolicy")
remember_policies.register("rules", "openclaw_lab.agent.remember:rule_policy")

agents = Registry("agent")
agents.register("scripted", "openclaw_lab.agent.protocol:ScriptedAgent")
agents.register("openai", "openclaw_lab.agent.openai_compat:OpenAICompatAgent")
