"""Cross-fitted learned reranking: fit on some conversations, rerank only the others' questions.

The first stage (by default dense + BM25 fused by RRF; ``sources`` may add ``context``, the
``hybrid-context`` strategy's scores) is searched once per question; each fold then fits a
``LearnedReranker`` on the training conversations' candidates and reranks the held-out ones, so
no question is ever scored by a model that saw its conversation. Registered as the strategy
``learned-crossfit``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openclaw_lab.datasets.types import Question
from openclaw_lab.embedding import Embedder
from openclaw_lab.harness.replay import ConversationReplay
from openclaw_lab.model import check_k
from openclaw_lab.retrieval.bm25 import BM25Retriever
from openclaw_lab.retrieval.context import hybrid_context
from openclaw_lab.retrieval.dense import DenseRetriever
from openclaw_lab.retrieval.learned import SOURCES, Candidate, LearnedReranker, TrainingQuery, conversation_folds
from openclaw_lab.retrieval.protocol import RunDict
from openclaw_lab.retrieval.rerank import HybridFirstStage

__all__ = ["training_queries", "CrossFittedReranker", "FIRST_STAGES"]

# the first-stage sources a reranker can read: each one's score and rank become features
FIRST_STAGES = {
    "dense": lambda embedder: DenseRetriever(embedder),
    "bm25": lambda embedder: BM25Retriever(),
    "context": lambda embedder: hybrid_context(embedder),  # dense + BM25 with session-neighbour context
}


def training_queries(
    replays: Sequence[ConversationReplay], questions: Mapping[str, list[Question]], embedder: Embedder, depth: int,
    sources: Sequence[str] = SOURCES,
) -> dict[str, TrainingQuery]:
    """Per question: first-stage candidates (from ``sources``) and the items among them that hold evidence turns."""
    out = {}
    for replay in replays:
        first = HybridFirstStage({name: FIRST_STAGES[name](embedder) for name in sources}, "rrf")
        first.index(replay.items)
        for q in questions.get(replay.conversation_id, []):
            candidates: tuple[Candidate, ...] = tuple(first.search_candidates(q.text, depth))
            evidence = set(q.evidence_turn_ids)
            relevant = frozenset(c.item.id for c in candidates if evidence & set(c.item.source_ids))
            out[q.id] = TrainingQuery(q.text, candidates, relevant, q.conversation_id, replay.asked_at)
    return out


class CrossFittedReranker:
    """The learned reranker, fitted ``folds`` times, each fold's model scoring only conversations it never saw."""

    def __init__(
        self, embedder: Embedder, *, folds: int = 5, candidates: int = 50, C: float = 1.0, seed: int = 0,
        sources: Sequence[str] = SOURCES,
    ) -> None:
        self.embedder = embedder
        self.folds, self.candidates = check_k(folds, "folds"), check_k(candidates, "candidates")
        if isinstance(C, bool) or not isinstance(C, (int, float)) or C <= 0:
            raise ValueError(f"C: {C!r} must be a number > 0")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed: {seed!r} must be an integer")
        self.C, self.seed = C, seed
        if isinstance(sources, str) or not sources or set(sources) - set(FIRST_STAGES):
            raise ValueError(f"sources: {sources!r} must name first stages among {', '.join(FIRST_STAGES)}")
        self.sources = tuple(sources)

    def __repr__(self) -> str:
        return (f"CrossFittedReranker(folds={self.folds}, candidates={self.candidates}, C={self.C}, seed={self.seed}, "
                f"sources={self.sources!r})")

    def run(
        self, replays: Sequence[ConversationReplay], questions: Mapping[str, list[Question]], depth: int
    ) -> tuple[RunDict, list[dict[str, Any]]]:
        """The run of every question, each reranked by a model fitted without its conversation."""
        queries = training_queries(replays, questions, self.embedder, max(self.candidates, depth), self.sources)
        conversation_ids = [r.conversation_id for r in replays if questions.get(r.conversation_id)]
        run: RunDict = {}
        models = []
        for train, test in conversation_folds(conversation_ids, min(self.folds, len(conversation_ids)), self.seed):
            fitted_on = [q for q in queries.values() if q.conversation_id in train and q.relevant]
            model = LearnedReranker(C=self.C, sources=self.sources).fit(fitted_on)
            models.append({"trained_on": sorted(train), "tested_on": sorted(test), "sources": list(self.sources),
                           **model.provenance})
            for qid, q in queries.items():
                if q.conversation_id in test:
                    hits = model.rerank_candidates(q.query, q.candidates, depth, now=q.asked_at) if q.candidates else []
                    run[qid] = {hit.item.id: hit.score for hit in hits}
        return run, models
