"""Cross-fitted learned reranking: fit on some conversations, rerank only the others' questions.

The first stage (by default dense + BM25 fused by RRF; ``sources`` may add ``context``, the
``hybrid-context`` strategy's scores) is searched once per question; each fold then fits a
``LearnedReranker`` on the training conversations' candidates and reranks the held-out ones, so
no question is ever scored by a model that saw its conversation. Fitted on the memories it ranks, the
model also reads relative length and the session features (``length``, ``session``; see
``FeatureExtractor``), which a model shipped to other memory units must not. Registered as the
strategy ``learned-crossfit``.

``CrossFittedEncoder`` (the strategy ``finetuned-crossfit``) fine-tunes the dense encoder the same way:
one copy per fold, fitted on the training conversations' questions, their evidence and hard negatives
from the first stage, ranking only the other conversations' memories. The reranker can fuse its ranking
with that encoder's (``finetuned``: the encoder's RRF weight), fold by fold.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from openclaw_lab.datasets.types import Question
from openclaw_lab.embedding import Embedder
from openclaw_lab.model import check_k
from openclaw_lab.retrieval.context import NeighbourContext, hybrid_context
from openclaw_lab.retrieval.dense import DenseRetriever
from openclaw_lab.retrieval.finetune import FineTuner, Triplet
from openclaw_lab.retrieval.fusion import fuse
from openclaw_lab.retrieval.learned import SOURCES, Candidate, LearnedReranker, TrainingQuery, conversation_folds
from openclaw_lab.retrieval.protocol import ReplayedMemory, RunDict, SystemRun
from openclaw_lab.retrieval.rerank import HybridFirstStage, first_stage_sources

__all__ = ["training_queries", "fine_tuning_triplets", "CrossFittedReranker", "CrossFittedEncoder"]

def training_queries(
    replays: Sequence[ReplayedMemory], questions: Mapping[str, list[Question]], embedder: Embedder, depth: int,
    sources: Sequence[str] = SOURCES, pool: str | None = None,
) -> dict[str, TrainingQuery]:
    """Per question: first-stage candidates (from ``sources``; ``pool``: see ``HybridFirstStage``) and the items
    among them that hold evidence turns."""
    out = {}
    for replay in replays:
        first = HybridFirstStage(first_stage_sources(sources, embedder), "rrf", pool=pool)
        first.index(replay.items)
        for q in questions.get(replay.conversation_id, []):
            candidates: tuple[Candidate, ...] = tuple(first.search_candidates(q.text, depth))
            evidence = set(q.evidence_turn_ids)
            relevant = frozenset(c.item.id for c in candidates if evidence & set(c.item.source_ids))
            out[q.id] = TrainingQuery(q.text, candidates, relevant, q.conversation_id, replay.asked_at)
    return out


POSITIVES = ("turns", "sessions")


def check_positives(positives: str) -> str:
    if positives not in POSITIVES:
        raise ValueError(f"positives: {positives!r} is not one of {', '.join(POSITIVES)}")
    return positives


def fine_tuning_triplets(
    replays: Sequence[ReplayedMemory], questions: Mapping[str, list[Question]],
    queries: Mapping[str, TrainingQuery], negatives_from: int, seed: int = 0, positives: str = "turns",
) -> dict[str, list[Triplet]]:
    """Per conversation: a triplet for each memory holding a question's evidence, its negative drawn from the
    question's best ``negatives_from`` first-stage candidates that hold none (questions without one are left out).

    ``positives``: ``turns``, the memories holding an evidence turn; ``sessions``, every memory of an evidence
    session, for whole sessions as units (a session keyed by its user turns holds no assistant evidence turn).
    """
    by_session = check_positives(positives) == "sessions"
    out: dict[str, list[Triplet]] = {}
    for replay in replays:
        triplets = out.setdefault(replay.conversation_id, [])
        for q in questions.get(replay.conversation_id, []):
            evidence = set(q.evidence_session_ids if by_session else q.evidence_turn_ids)
            holding = {item.id for item in replay.items
                       if (item.session_id in evidence if by_session else evidence & set(item.source_ids))}
            kept = list(dict.fromkeys(item.content for item in replay.items if item.id in holding))
            negatives = [c.item.content for c in queries[q.id].candidates[:negatives_from]
                         if c.item.id not in holding and c.item.content not in kept]
            if negatives:
                rng = random.Random(f"{seed}:{q.id}")  # one draw per question, whichever fold it trains
                triplets.extend(Triplet(q.text, positive, rng.choice(negatives)) for positive in kept)
    return out


class CrossFittedReranker:
    """The learned reranker, fitted ``folds`` times, each fold's model scoring only conversations it never saw.

    Each question's model reads its ``max(candidates, depth)`` best first-stage candidates (``depth``: the run's).
    """

    def __init__(
        self, embedder: Embedder, *, folds: int = 5, candidates: int = 50, C: float = 1.0, seed: int = 0,
        sources: Sequence[str] = SOURCES, length: bool = True, session: bool = True, finetuned: float = 0.0,
        finetune: Mapping[str, Any] | None = None,
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
        if isinstance(finetuned, bool) or not isinstance(finetuned, (int, float)) or finetuned < 0:
            raise ValueError(f"finetuned: {finetuned!r} must be a number >= 0 (the fine-tuned encoder's RRF weight)")
        self.finetuned = float(finetuned)
        if not isinstance(finetune, (Mapping, type(None))):
            raise ValueError(f"finetune: {finetune!r} must be a table of the fine-tuning settings")
        if finetune and not finetuned:
            raise ValueError("finetune: set only with finetuned > 0 (the fine-tuned encoder's RRF weight)")
        try:  # the encoder whose ranking is fused in when ``finetuned`` > 0, on the same folds
            settings = {"sources": sources, **dict(finetune or {})}
            self.encoder = CrossFittedEncoder(embedder, folds=folds, seed=seed, **settings)
        except TypeError as error:
            raise ValueError(f"finetune: {error}") from None

    def __repr__(self) -> str:
        return (f"CrossFittedReranker(folds={self.folds}, candidates={self.candidates}, C={self.C}, seed={self.seed}, "
                f"sources={self.sources!r}, length={self.length}, session={self.session}, finetuned={self.finetuned})")

    def run(
        self, replays: Sequence[ReplayedMemory], questions: Mapping[str, list[Question]], depth: int
    ) -> SystemRun:
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
        if self.finetuned:
            # The encoder searches its own first stage (``negatives_from`` deep, not ``candidates``): its negatives,
            # hence its models, are then those of a ``finetuned-crossfit`` system of the same settings, fitted once.
            encoded = self.encoder.run(replays, questions, depth)
            run = {qid: dict(list(ranked.items())[:depth])
                   for qid, ranked in fuse([run, encoded.run], "rrf", [1.0, self.finetuned]).items()}
            models = [{**model, "finetuned": self.finetuned, "encoder": encoder}
                      for model, encoder in zip(models, encoded.models)]
        return SystemRun(run, models=models)


RANKERS = {
    "dense": DenseRetriever,
    "context": lambda encoder: NeighbourContext(DenseRetriever(encoder)),
    "hybrid-context": hybrid_context,
}


class CrossFittedEncoder:
    """The dense encoder fine-tuned ``folds`` times, each fold's copy ranking only conversations it never saw.

    Each fold fits on its training conversations' triplets (``fine_tuning_triplets``: hard negatives from the
    ``negatives_from`` best candidates of the ``sources`` first stage); ``epochs``, ``batch_size``,
    ``learning_rate``, ``scale`` and ``mini_batch_size`` (set it for long texts) go to ``FineTuner``;
    ``positives`` picks the memories a question is paired with (see ``fine_tuning_triplets``). ``ranker`` is
    how the fitted copy ranks: ``dense`` (cosine), ``context`` (cosine plus session neighbours,
    ``NeighbourContext``) or ``hybrid-context`` (that strategy with the fitted copy as its dense half).
    """

    def __init__(
        self, embedder: Embedder, *, folds: int = 5, seed: int = 0, sources: Sequence[str] = SOURCES,
        negatives_from: int = 30, positives: str = "turns", epochs: int = 1, batch_size: int = 32,
        learning_rate: float = 2e-5, scale: float = 20.0, mini_batch_size: int | None = None, ranker: str = "dense",
    ) -> None:
        self.embedder = embedder
        self.folds, self.negatives_from = check_k(folds, "folds"), check_k(negatives_from, "negatives_from")
        first_stage_sources(sources)  # checks the names
        self.sources = tuple(sources)
        self.tuner = FineTuner(epochs=epochs, batch_size=batch_size, learning_rate=learning_rate, scale=scale,
                               seed=seed, mini_batch_size=mini_batch_size)
        self.seed = seed
        if ranker not in RANKERS:
            raise ValueError(f"ranker: {ranker!r} is not one of {', '.join(RANKERS)}")
        self.ranker = ranker
        self.positives = check_positives(positives)

    def __repr__(self) -> str:
        return (f"CrossFittedEncoder(folds={self.folds}, seed={self.seed}, sources={self.sources!r}, "
                f"negatives_from={self.negatives_from}, tuner={self.tuner!r}, ranker={self.ranker!r}, "
                f"positives={self.positives!r})")

    def fold_encoders(
        self, replays: Sequence[ReplayedMemory], questions: Mapping[str, list[Question]]
    ) -> Iterator[tuple[frozenset[str], frozenset[str], Embedder, int]]:
        """Per fold: its training and test conversations, the encoder fitted on the training ones and the
        number of triplets it was fitted on."""
        queries = training_queries(replays, questions, self.embedder, self.negatives_from, self.sources)
        triplets = fine_tuning_triplets(replays, questions, queries, self.negatives_from, self.seed, self.positives)
        conversation_ids = [r.conversation_id for r in replays if questions.get(r.conversation_id)]
        for train, test in conversation_folds(conversation_ids, min(self.folds, len(conversation_ids)), self.seed):
            fitted_on = [t for cid in sorted(train) for t in triplets[cid]]
            yield train, test, self.tuner.fit(self.embedder, fitted_on), len(fitted_on)

    def run(
        self, replays: Sequence[ReplayedMemory], questions: Mapping[str, list[Question]], depth: int
    ) -> SystemRun:
        """The run of every question, each ranked by an encoder fitted without its conversation."""
        run: RunDict = {}
        models = []
        for train, test, encoder, n_triplets in self.fold_encoders(replays, questions):
            models.append({"trained_on": sorted(train), "tested_on": sorted(test), "model": encoder.model_id,
                           "base": self.embedder.model_id, "tuner": repr(self.tuner), "triplets": n_triplets,
                           "positives": self.positives, "ranker": self.ranker})
            for replay in replays:
                if replay.conversation_id in test:
                    retriever = RANKERS[self.ranker](encoder)
                    # the items' own vectors are the base model's, not this copy's
                    retriever.index([item.replace(embedding=None) for item in replay.items])
                    for q in questions.get(replay.conversation_id, []):
                        run[q.id] = {hit.item.id: hit.score for hit in retriever.search(q.text, depth)}
        return SystemRun(run, models=models)
