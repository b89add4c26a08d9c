"""Cross-fitted learned reranking: fit on some conversations, rerank only the others' questions.

The first stage (dense + BM25 fused by RRF) is searched once per question; each fold then fits a
``LearnedReranker`` on the training conversations' candidates and reranks the held-out ones, so
no question is ever scored by a model that saw it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openclaw_lab.datasets.types import Question
from openclaw_lab.embedding import Embedder
from openclaw_lab.harness.replay import ConversationReplay
from openclaw_lab.retrieval.bm25 import BM25Retriever
from openclaw_lab.retrieval.dense import DenseRetriever
from openclaw_lab.retrieval.learned import Candidate, LearnedReranker, TrainingQuery, conversation_folds
from openclaw_lab.retrieval.protocol import RunDict
from openclaw_lab.retrieval.rerank import HybridFirstStage

__all__ = ["training_queries", "crossfit_run"]


def training_queries(
    replays: Sequence[ConversationReplay], questions: Mapping[str, list[Question]], embedder: Embedder, depth: int
) -> dict[str, TrainingQuery]:
    """Per question: first-stage candidates and the items among them that hold evidence turns."""
    out = {}
    for replay in replays:
        first = HybridFirstStage({"dense": DenseRetriever(embedder), "bm25": BM25Retriever()}, "rrf")
        first.index(replay.items)
        for q in questions.get(replay.conversation_id, []):
            candidates: tuple[Candidate, ...] = tuple(first.search_candidates(q.text, depth))
            evidence = set(q.evidence_turn_ids)
            relevant = frozenset(c.item.id for c in candidates if evidence & set(c.item.source_ids))
            out[q.id] = TrainingQuery(q.text, candidates, relevant, q.conversation_id, q.asked_at)
    return out


def crossfit_run(
    replays: Sequence[ConversationReplay], questions: Mapping[str, list[Question]], embedder: Embedder, k: int,
    *, folds: int = 5, candidates: int = 50, C: float = 1.0, seed: int = 0,
) -> tuple[RunDict, list[dict[str, Any]]]:
    """The run of every question, each reranked by a model fitted without its conversation."""
    queries = training_queries(replays, questions, embedder, max(candidates, k))
    conversation_ids = [r.conversation_id for r in replays if questions.get(r.conversation_id)]
    run: RunDict = {}
    models = []
    for train, test in conversation_folds(conversation_ids, min(folds, len(conversation_ids)), seed):
        fitted = [q for q in queries.values() if q.conversation_id in train and q.relevant]
        model = LearnedReranker(C=C).fit(fitted)
        models.append({"trained_on": sorted(train), "tested_on": sorted(test), **model.provenance})
        for qid, q in queries.items():
            if q.conversation_id in test:
                hits = model.rerank_candidates(q.query, q.candidates, k, now=q.asked_at) if q.candidates else []
                run[qid] = {hit.item.id: hit.score for hit in hits}
    return run, models
