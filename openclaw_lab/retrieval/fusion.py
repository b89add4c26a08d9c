"""Fusion of runs (``dict[query_id, dict[item_id, score]]``) and the fused retriever built on it.

Methods, with ranx's semantics (``ranx.fuse`` gives the same scores):

- ``rrf``: sum over runs of ``weight / (k + rank)``, rank 1 for a run's best item; an item absent
  from a run gets nothing from it.
- ``wsum``: weighted CombSUM of per-query normalised scores: ``min-max`` ((s - min) / (max - min),
  with a floor of 1e-9 on the spread, so a run with one item gives it 0), ``z-score`` ((s - mean) /
  std, population std, ranx's ``zmuv``) or ``None`` (raw scores); an absent item counts 0.
- ``seed-blend``: the seed's blend, ``weights[i]`` (0.7 dense, 0.3 sparse) for being in run i,
  whatever the rank. Kept for comparison only: it ignores scores and ranks.

Fused scores: higher is better.

>>> dense = {"q": {"a": 0.9, "b": 0.5}}
>>> sparse = {"q": {"b": 7.0, "c": 3.0}}
>>> {doc: round(score, 4) for doc, score in fuse([dense, sparse], k=60)["q"].items()}
{'b': 0.0325, 'a': 0.0164, 'c': 0.0161}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k, sorted_hits
from openclaw_lab.retrieval.protocol import Retriever, RunDict, check_query, search_batch

__all__ = ["fuse", "FusedRetriever", "hybrid", "FUSION_METHODS", "NORMS"]

FUSION_METHODS = ("rrf", "wsum", "seed-blend")
NORMS = ("min-max", "z-score", None)
SEED_BLEND_WEIGHTS = (0.7, 0.3)
LEXICAL = ("bm25", "splade")  # hybrid's second retriever


def fuse(
    runs: Sequence[Mapping[str, Mapping[str, float]]],
    method: str = "rrf",
    weights: Sequence[float] | None = None,
    k: float = 60,
    norm: str | None = "min-max",
) -> RunDict:
    """One run from several; every query id of any run is present, items best first.

    ``k`` is RRF's constant; ``norm`` applies to ``wsum`` only.

    >>> fuse([{"q": {"a": 1.0}}, {"q": {"b": 2.0}}], method="seed-blend")
    {'q': {'a': 0.7, 'b': 0.3}}
    """
    weights = _check_fusion(runs, method, weights, k, norm)
    query_ids = list(dict.fromkeys(qid for run in runs for qid in run))
    fused: RunDict = {}
    for qid in query_ids:
        totals: dict[str, float] = {}
        for run, weight in zip(runs, weights):
            for doc, value in _contributions(run.get(qid, {}), method, k, norm).items():
                totals[doc] = totals.get(doc, 0.0) + weight * value
        fused[qid] = dict(sorted(totals.items(), key=lambda pair: (-pair[1], pair[0])))
    return fused


def _contributions(results: Mapping[str, float], method: str, k: float, norm: str | None) -> dict[str, float]:
    """What one run gives each of its items for one query, before weighting."""
    if not results:
        return {}
    if method == "rrf":
        ranked = sorted(results.items(), key=lambda pair: (-pair[1], pair[0]))
        return {doc: 1.0 / (k + rank) for rank, (doc, _) in enumerate(ranked, start=1)}
    if method == "seed-blend":
        return {doc: 1.0 for doc in results}
    return normalise(results, norm)


def normalise(results: Mapping[str, float], norm: str | None) -> dict[str, float]:
    """Per-query normalised scores, as ranx's ``min-max`` and ``zmuv`` (order is kept).

    >>> normalise({"a": 3.0, "b": 1.0, "c": 2.0}, "min-max")
    {'a': 1.0, 'b': 0.0, 'c': 0.5}
    """
    if norm is None or not results:
        return dict(results)
    scores = np.fromiter(results.values(), dtype=np.float64, count=len(results))
    if norm == "min-max":
        low, spread = scores.min(), max(scores.max() - scores.min(), 1e-9)
        values = (scores - low) / spread
    else:
        values = (scores - scores.mean()) / max(scores.std(), 1e-9)
    return dict(zip(results, values.tolist()))


def _check_fusion(runs: Any, method: str, weights: Any, k: Any, norm: Any) -> list[float]:
    if method not in FUSION_METHODS:
        raise ValueError(f"method: unknown fusion {method!r}; choose one of {', '.join(FUSION_METHODS)}")
    if norm not in NORMS:
        raise ValueError(f"norm: unknown normalisation {norm!r}; choose one of min-max, z-score, None")
    if isinstance(k, bool) or not isinstance(k, (int, float)) or not k > 0:
        raise ValueError(f"k: RRF's constant {k!r} must be a number > 0")
    if isinstance(runs, Mapping) or not isinstance(runs, Sequence) or not runs:
        raise ValueError(f"runs: expected a non-empty list of runs, got {type(runs).__name__}")
    if weights is None:
        if method == "seed-blend" and len(runs) != 2:
            raise ValueError(f"weights: seed-blend weighs 2 runs (0.7, 0.3); give weights for {len(runs)} runs")
        return list(SEED_BLEND_WEIGHTS) if method == "seed-blend" else [1.0] * len(runs)
    weights = list(weights)
    if len(weights) != len(runs):
        raise ValueError(f"weights: {len(weights)} weights for {len(runs)} runs")
    for weight in weights:
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight):
            raise ValueError(f"weights: {weight!r} is not a finite number")
    return [float(weight) for weight in weights]


class FusedRetriever:
    """Search every retriever for ``candidates`` hits (filter applied in each), fuse, keep the top k.

    ``params`` go to ``fuse`` (``k``: RRF's constant, ``norm``). The item of a hit comes from the
    first retriever that found it (the dense one, with its embedding, in ``hybrid``).
    """

    def __init__(
        self,
        retrievers: Sequence[Retriever],
        method: str = "rrf",
        weights: Sequence[float] | None = None,
        candidates: int = 100,
        **params: Any,
    ) -> None:
        self.retrievers = list(retrievers)
        self.method, self.weights, self.candidates, self.params = method, weights, candidates, params
        # a bad method, weight, constant or parameter name fails here, not at the first search
        if unknown := set(params) - {"k", "norm"}:
            raise ValueError(f"params: unknown fusion parameters {sorted(unknown)}; choose from k, norm")
        if self.retrievers:
            _check_fusion([{}] * len(self.retrievers), method, weights, **{"k": 60, "norm": "min-max", **params})

    def __repr__(self) -> str:
        return (
            f"FusedRetriever({self.retrievers!r}, method={self.method!r}, weights={self.weights!r}, "
            f"candidates={self.candidates}, **{self.params!r})"
        )

    def index(self, items: Sequence[MemoryItem]) -> None:
        items = list(items)
        for retriever in self.retrievers:
            retriever.index(items)

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """The best ``k`` items by fused score (higher is better)."""
        query, k = check_query(query), check_k(k)
        depth = self._depth(k)
        runs, items = [], {}
        for retriever in self.retrievers:
            hits = retriever.search(query, depth, filter)
            runs.append({"q": {hit.item.id: hit.score for hit in hits}})
            for hit in hits:
                items.setdefault(hit.item.id, hit.item)
        fused = self._fuse(runs)["q"]
        return sorted_hits((Hit(items[doc], score) for doc, score in fused.items()), k)

    def search_many(
        self,
        queries: Mapping[str, str],
        k: int,
        filters: Mapping[str, MemoryFilter] | MemoryFilter | None = None,
    ) -> RunDict:
        """The fused run of every retriever's batch run, top ``k`` per query (every query id present)."""
        k = check_k(k)
        depth = self._depth(k)
        fused = self._fuse([search_batch(retriever, queries, depth, filters) for retriever in self.retrievers])
        return {qid: dict(list(fused.get(qid, {}).items())[:k]) for qid in queries}

    def _depth(self, k: int) -> int:
        if not self.retrievers:
            raise ValueError("retrievers: a FusedRetriever needs at least one retriever")
        return max(check_k(self.candidates, "candidates"), k)

    def _fuse(self, runs: list[RunDict]) -> RunDict:
        return fuse(runs, method=self.method, weights=self.weights, **self.params)


def hybrid(
    embedder: Any = None,
    *,
    store: Any = None,
    bm25: Mapping[str, Any] | None = None,
    method: str = "rrf",
    weights: Sequence[float] | None = None,
    candidates: int = 100,
    k: float = 60,
    norm: str | None = "min-max",
    lexical: str = "bm25",
) -> FusedRetriever:
    """Dense + BM25 fused with RRF by default (the ``hybrid`` strategy); ``bm25`` holds BM25Retriever arguments.

    ``k`` is RRF's constant, ``norm`` the normalisation of ``wsum`` (see ``fuse``). ``lexical``: the second
    retriever, ``bm25`` or ``splade`` (learned sparse, ``SpladeRetriever``).

    >>> hybrid(method="wsum", norm="z-score").method
    'wsum'
    """
    from openclaw_lab.retrieval.bm25 import BM25Retriever
    from openclaw_lab.retrieval.dense import DenseRetriever
    from openclaw_lab.retrieval.splade import SpladeRetriever

    if lexical not in LEXICAL:
        raise ValueError(f"lexical: {lexical!r} is not one of {', '.join(LEXICAL)}")
    if lexical == "splade" and bm25:
        raise ValueError("bm25: BM25 settings were given, but lexical is 'splade'")
    second = BM25Retriever(**dict(bm25 or {})) if lexical == "bm25" else SpladeRetriever()
    retrievers = [DenseRetriever(embedder, store=store), second]
    return FusedRetriever(retrievers, method=method, weights=weights, candidates=candidates, k=k, norm=norm)

