"""Cross-fitted learned reranking: fit on some conversations, rerank only the others' questions.

The first stage (by default dense + BM25 fused by RRF; ``sources`` may add ``context``, the
``hybrid-context`` strategy's scores) is searched once per question; each fold then fits a
``LearnedReranker`` on the training conversations' candidates and reranks the held-out ones, so
no question is ever scored by a model that saw its conversation. Fitted on the memories it ranks, the
model also reads relative length and the session features (``length``, ``session``; see
``FeatureExtractor``), which a model shipped to other memory units must not. Registered as the
strategy ``learned-crossfit``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openclaw_lab.datasets.types import Question
from openclaw_lab.embedding import Embedder
from openclaw_lab.harness.replay import ConversationReplay
from openclaw_lab.model import check_k
from openclaw_lab.retrieval.learned import SOURCES, Candidate, LearnedReranker, TrainingQuery, conversation_folds
from openclaw_lab.retrieval.protocol import RunDict
from openclaw_lab.retrieval.rerank import HybridFirstStage, first_stage_sources

__all__ = ["training_queries", "CrossFittedReranker"]

def training_queries(
    replays: Sequence[ConversationReplay], questions: Mapping[str, list[Question]], embedder: Embedder, depth: int,
    sources: Sequence[str] = SOURCES,
) -> dict[str, TrainingQuery]:
    """Per question: first-stage candidates (from ``sources``) and the items among them that hold evidence turns."""
    out = {}
    for replay in replays:
        first = HybridFirstStage(first_stage_sources(sources, embedder), "rrf")
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
        sources: Sequence[str] = SOURCES, length: bool = True, session: bool = True,
    ) -> None:
        self.embedder = embedder
        self.folds, self.candidates = check_k(folds, "folds"), check_k(candidates, "candidates")
        if isinstance(C, bool) or not isinstance(C, (int, float)) or C <= 0:
            raise ValueError(f"C: {C!r} must be a number > 0")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed: {seed!r} must be an integer")
        self.C, self.seed = C, seed
        first_stage_sources(sources)  # checks the names
        self.sources = tuple(sources)
        for name, flag in (("length", length), ("session", session)):
            if not isinstance(flag, bool):
                raise ValueError(f"{name}: {flag!r} must be true or false")
        self.length, self.session = length, session

    def __repr__(self) -> str:
        return (f"CrossFittedReranker(folds={self.folds}, candidates={self.candidates}, C={self.C}, seed={self.seed}, "
                f"sources={self.sources!r}, length={self.length}, session={self.session})")

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
            model = LearnedReranker(C=self.C, sources=self.sources, length=self.length, session=self.session)
            model.fit(fitted_on)
            models.append({"trained_on": sorted(train), "tested_on": sorted(test), "sources": list(self.sources),
                           "features": model.features.names, **model.provenance})
            for qid, q in queries.items():
                if q.conversation_id in test:
                    hits = model.rerank_candidates(q.query, q.candidates, depth, now=q.asked_at) if q.candidates else []
                    run[qid] = {hit.item.id: hit.score for hit in hits}
        return run, models
