"""Retrieval strategies of one shape: ``index(items)`` and ``search(query, k, filter) -> list[Hit]``.

First stages: ``DenseRetriever`` (through any vector store), ``BM25Retriever`` (bm25s), ``SpladeRetriever``
(learned sparse), their fusion (``FusedRetriever``, ``fuse``, ``hybrid``); wrappers:
``MemoryAwareRetriever`` (Generative Agents scoring), ``TimeAwareRetriever`` (time expressions in the
question); two-stage reranking in ``rerank``/``learned``. Attributes resolve lazily, so importing the
package loads no backend.
Strategy names (``dense``, ``hybrid``, …) are resolved by the harness (``harness.build``), not here.

>>> from openclaw_lab.retrieval import fuse
>>> fuse([{"q": {"a": 1.0}}, {"q": {"a": 2.0, "b": 1.0}}])["q"]["a"] > 0
True
"""

from __future__ import annotations

import importlib
from typing import Any

from openclaw_lab.retrieval.protocol import Reranker, Retriever, RunDict, SearchEach, TrainedModel, check_query, search_batch

# public name -> module (in this package) that defines it; imported on first access
_LAZY = {
    "DenseRetriever": "dense",
    "BM25Retriever": "bm25",
    "BM25_METHODS": "bm25",
    "SpladeRetriever": "splade",
    "tokenize_many": "tokenize",
    "fuse": "fusion",
    "normalise": "fusion",
    "FusedRetriever": "fusion",
    "hybrid": "fusion",
    "FUSION_METHODS": "fusion",
    "MemoryAwareRetriever": "scoring",
    "recency": "scoring",
    "importance_score": "scoring",
    "min_max": "scoring",
    "TimeAwareRetriever": "temporal",
    "TimeWindow": "temporal",
    "parse_time_window": "temporal",
    # two-stage reranking (rerank.py, learned.py)
    "TwoStageRetriever": "rerank",
    "HybridFirstStage": "rerank",
    "CrossEncoderReranker": "rerank",
    "MMRReranker": "rerank",
    "default_rerank": "rerank",
    "LearnedReranker": "learned",
}

__all__ = ["Retriever", "Reranker", "TrainedModel", "SearchEach", "RunDict", "search_batch", "check_query", *_LAZY]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
