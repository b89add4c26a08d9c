"""A learned reranker: logistic regression over first-stage and memory features, saved as JSON.

It is fitted on the questions of some conversations and evaluated only on others: the model file
names the conversations it was fitted on, and ``evaluate`` refuses questions from them. The model
is a standardised linear score, so JSON holds all of it (no pickle) and scoring needs only numpy.

Training data: for each question, the candidates of ``HybridFirstStage.search_candidates`` (each
source's score and rank) and the ids of the relevant items among them, as a ``TrainingQuery``.

>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> item = MemoryItem.new("Alice moved to Lisbon", now=datetime(2023, 5, 8), id="a")
>>> candidate = Candidate(item, score=0.03, source_scores={"dense": 0.7}, source_ranks={"dense": 1})
>>> [hit.item.id for hit in LearnedReranker.hand_set().rerank_candidates("Where did Alice move?", [candidate], 1)]
['a']
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_lab.model import Hit, as_utc, check_k, sorted_hits
from openclaw_lab.retrieval.protocol import Candidate, check_query
from openclaw_lab.retrieval.tokenize import tokenize_many

__all__ = [
    "Candidate",
    "TrainingQuery",
    "FeatureExtractor",
    "LearnedReranker",
    "split_by_conversation",
    "conversation_folds",
    "mean_reciprocal_rank",
    "DEFAULT_MODEL_PATH",
]

DEFAULT_MODEL_PATH = Path(__file__).parent / "models" / "learned_reranker.json"
FORMAT = "openclaw-lab/learned-reranker"
SOURCES = ("dense", "bm25")
# every feature is measured against the query's own candidates or on a fixed scale: a model fitted on turns
# must not rank whole sessions by scores that grow with their size
SOURCE_FEATURES = ("score_z", "score_rel", "rank", "rr", "present")
# what held on data of another kind (scripts/rerank_lodo.py): each source's reciprocal rank (a weighted RRF), nothing
# on the scores' scale and nothing about the memory itself (its speaker, age, access or wording shift between histories)
PORTABLE_SOURCE_FEATURES = ("rr",)
MODEL_KEYS = ("sources", "feature_names", "mean", "scale", "coef", "intercept", "C", "trained_on_conversations",
              "provenance")
ITEM_FEATURES = ("recency_log_hours", "importance", "access_log", "token_jaccard", "speaker_match")
LENGTH_FEATURE = "length_rel"  # for a model fitted where it is used (cross-fitted), never for one shipped
# how the item's session fares among the candidates; like length, only for a model fitted on the units it ranks
# (one item per session, as with session units, makes them copies of the item's own scores)
SESSION_FEATURES = ("session_rank_log", "session_top3", "session_share_log", "in_session_rank_log")
SESSION_TOP = 20  # the first-stage candidates whose sessions count towards session_share_log


@dataclass(frozen=True)
class TrainingQuery:
    """One question with its first-stage candidates and the ids of the relevant items among them.

    Collect candidates at the depth the reranker will see at search time (``TwoStageRetriever``'s
    ``candidates``): rank features depend on it.
    """

    query: str
    candidates: tuple[Candidate, ...]
    relevant: frozenset[str]
    conversation_id: str
    asked_at: datetime | None = None


_CONTENT_WORDS: dict[str, frozenset[str]] = {}
_CONTENT_WORDS_HELD = 200_000  # texts; then the memo starts again


def content_words(texts: Iterable[str]) -> list[frozenset[str]]:
    """Stemmed words without the long English stopword list, one set per text. Each distinct text is read once
    per process: a cross-fitted reranker reads the same candidates in every fold, a replay the same memories at
    every consolidation."""
    texts = list(texts)
    new = [text for text in dict.fromkeys(texts) if text not in _CONTENT_WORDS]
    if new:
        if len(_CONTENT_WORDS) + len(new) > _CONTENT_WORDS_HELD:
            _CONTENT_WORDS.clear()
        _CONTENT_WORDS.update(zip(new, map(frozenset, tokenize_many(new, stopwords="en_plus", stemmer="english"))))
    return [_CONTENT_WORDS[text] for text in texts]


class FeatureExtractor:
    """The feature matrix of (query, candidate) pairs, one row per candidate.

    Per source (``dense``, ``bm25``, ``context``): its score standardised over the candidates (z-score),
    the score over the query's best score, the rank, the reciprocal rank and whether the source returned
    the item at all (an absent item gets the source's lowest score among the candidates, a rank one past
    its last, and reciprocal rank 0). Per item: log hours since last access (before ``now``, else before
    the newest candidate), importance, log access count, Jaccard overlap of content words, and whether
    the query names the item's speaker (``metadata["speaker"]``). With ``length``, also the log length in
    content words minus the candidates' median: informative where the model is fitted on the memories it
    ranks (cross-fitting), misleading for a model shipped to other memory units (turns against sessions).

    With ``portable``, only each source's reciprocal rank: the features of a model shipped to histories unlike
    the ones it was fitted on.

    With ``session``, how the item's session fares among the candidates (evidence clusters in a few
    sessions). An item's strength is the mean of its sources' z-scores; per source, the best z-score in
    the item's session; the session's rank by its best strength (log); the sum of its three best positive
    strengths; the share of the first stage's top ``SESSION_TOP`` candidates that come from it (log of the
    count); and the item's rank within its session by strength (log).
    """

    def __init__(
        self, sources: Sequence[str] = SOURCES, length: bool = False, session: bool = False, portable: bool = False
    ) -> None:
        if portable and length:
            raise ValueError("length: a portable model reads nothing about the memory itself; drop length")
        self.sources, self.length, self.session, self.portable = tuple(sources), length, session, portable

    @property
    def source_features(self) -> tuple[str, ...]:
        return PORTABLE_SOURCE_FEATURES if self.portable else SOURCE_FEATURES

    @property
    def names(self) -> list[str]:
        item_features = [] if self.portable else [*ITEM_FEATURES, *([LENGTH_FEATURE] if self.length else [])]
        session_features = [f"session_best_{s}_z" for s in self.sources] + list(SESSION_FEATURES)
        return ([f"{s}_{f}" for s in self.sources for f in self.source_features] + item_features
                + (session_features if self.session else []))

    def transform(self, query: str, candidates: Sequence[Candidate], now: datetime | None = None) -> np.ndarray:
        """An array of shape (len(candidates), len(names)).

        >>> FeatureExtractor().transform("hi", []).shape
        (0, 15)
        """
        if not candidates:
            return np.zeros((0, len(self.names)))
        per_source = [self._source_columns(source, candidates) for source in self.sources]
        kept = [SOURCE_FEATURES.index(name) for name in self.source_features]
        columns = [source_columns[i] for source_columns in per_source for i in kept]
        if not self.portable:
            columns += self._item_columns(query, candidates, now)
        if self.session:
            z_at = SOURCE_FEATURES.index("score_z")
            z = np.column_stack([cols[z_at] for cols in per_source] or [np.zeros((len(candidates), 0))])
            columns += self._session_columns(candidates, z)
        return np.column_stack(columns)

    def _source_columns(self, source: str, candidates: Sequence[Candidate]) -> list[np.ndarray]:
        present = np.array([source in c.source_scores for c in candidates])
        scores = np.array([c.source_scores.get(source, np.nan) for c in candidates], dtype=float)
        ranks = np.array([c.source_ranks.get(source, np.nan) for c in candidates], dtype=float)
        if present.any():
            scores[~present] = np.nanmin(scores)
            ranks[~present] = np.nanmax(ranks) + 1
        else:
            scores[:], ranks[:] = 0.0, len(candidates) + 1
        best, spread = np.abs(scores).max(), scores.std()
        relative = scores / best if best > 0 else np.zeros_like(scores)
        standard = (scores - scores.mean()) / spread if spread > 0 else np.zeros_like(scores)
        return [standard, relative, ranks, np.where(present, 1.0 / ranks, 0.0), present.astype(float)]

    def _item_columns(self, query: str, candidates: Sequence[Candidate], now: datetime | None) -> list[np.ndarray]:
        items = [c.item for c in candidates]
        accessed = np.array([item.last_accessed.timestamp() for item in items])
        reference = as_utc(now, "now").timestamp() if now is not None else accessed.max()
        hours = np.maximum(reference - accessed, 0.0) / 3600.0
        query_words, *words = content_words([query] + [item.content for item in items])
        union = np.array([len(query_words | w) for w in words], dtype=float)
        shared = np.array([len(query_words & w) for w in words], dtype=float)
        speakers = content_words([str(item.metadata.get("speaker", "")) for item in items])
        lengths = np.log1p([len(w) for w in words])
        return [
            np.log1p(hours),
            np.array([int(item.importance) for item in items], dtype=float),
            np.log1p([item.access_count for item in items]),
            np.divide(shared, union, out=np.zeros_like(union), where=union > 0),
            np.array([bool(s) and bool(s & query_words) for s in speakers], dtype=float),
        ] + ([lengths - np.median(lengths)] if self.length else [])

    @staticmethod
    def _session_columns(candidates: Sequence[Candidate], z: np.ndarray) -> list[np.ndarray]:
        """``z``: one column of z-scores per source (possibly none)."""
        sessions = np.array([c.item.session_id for c in candidates])
        strength = z.mean(axis=1) if z.shape[1] else np.zeros(len(candidates))
        ids, members = np.unique(sessions, return_inverse=True)
        best = np.full((len(ids), z.shape[1]), -np.inf)
        np.maximum.at(best, members, z)
        best_strength = np.full(len(ids), -np.inf)
        np.maximum.at(best_strength, members, strength)
        session_rank = np.empty(len(ids))
        session_rank[np.lexsort((ids, -best_strength))] = np.arange(len(ids))
        order = np.lexsort((-strength, members))  # by session, strongest first
        starts = np.searchsorted(members[order], np.arange(len(ids)))
        in_session = np.empty(len(candidates))
        in_session[order] = np.arange(len(candidates)) - starts[members[order]]
        top3 = np.zeros(len(ids))
        np.add.at(top3, members[order], np.where(in_session[order] < 3, np.maximum(strength[order], 0.0), 0.0))
        first = np.argsort([-c.score for c in candidates], kind="stable")[:SESSION_TOP]
        share = np.bincount(members[first], minlength=len(ids))
        return [*best[members].T, np.log1p(session_rank[members]), top3[members], np.log1p(share[members]),
                np.log1p(in_session)]


class LearnedReranker:
    """Scores candidates with a linear model on standardised features (higher score is better).

    ``fit`` trains scikit-learn's LogisticRegression (balanced class weights); the score is its
    decision function. Rerank through ``TwoStageRetriever`` over a first stage that reports each
    source's scores (``HybridFirstStage``); plain candidates carry none, and ``rerank_candidates`` says so.
    ``clock`` gives the query time for recency. ``pool`` names the source whose own ranking picks the
    candidates (``None``: every source's hits fused by RRF); ``portable``: see ``FeatureExtractor``.
    """

    def __init__(
        self, *, sources: Sequence[str] = SOURCES, C: float = 1.0, clock: Any = None, length: bool = False,
        session: bool = False, portable: bool = False, pool: str | None = None,
    ) -> None:
        if pool is not None and pool not in sources:
            raise ValueError(f"pool: {pool!r} is not one of the sources {', '.join(sources)}")
        self.sources, self.C, self.clock, self.pool = tuple(sources), C, clock, pool
        self.features = FeatureExtractor(self.sources, length, session, portable)
        self.mean_: np.ndarray | None = None
        self.scale_: np.ndarray | None = None
        self.coef_: np.ndarray | None = None
        self.intercept_: float = 0.0
        self.trained_on: frozenset[str] = frozenset()
        self.provenance: dict[str, Any] = {}

    def __repr__(self) -> str:
        return f"LearnedReranker(sources={self.sources!r}, C={self.C}, fitted={self.coef_ is not None})"

    # fitting and scoring
    def fit(self, queries: Sequence[TrainingQuery], provenance: Mapping[str, Any] | None = None) -> LearnedReranker:
        """Fit on ``queries``; their conversation ids are recorded as seen (never evaluate on them)."""
        from sklearn import __version__ as sklearn_version
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        if not isinstance(self.C, (int, float)) or isinstance(self.C, bool) or self.C <= 0:
            raise ValueError(f"C: {self.C!r} must be a number > 0")
        rows = [self.features.transform(q.query, q.candidates, q.asked_at) for q in queries]
        labels = np.array([c.item.id in q.relevant for q in queries for c in q.candidates])
        if not labels.any() or labels.all():
            raise ValueError(
                f"queries: need relevant and irrelevant candidates; got {int(labels.sum())} relevant of {labels.size}"
            )
        x = np.vstack(rows)
        scaler = StandardScaler().fit(x)
        model = LogisticRegression(C=self.C, class_weight="balanced", max_iter=2000).fit(scaler.transform(x), labels)
        self.mean_, self.scale_ = scaler.mean_.copy(), scaler.scale_.copy()
        self.coef_, self.intercept_ = model.coef_[0].copy(), float(model.intercept_[0])
        self.trained_on = frozenset(q.conversation_id for q in queries)
        self.provenance = {
            "fitted_by": f"LogisticRegression(C={self.C}, class_weight='balanced') on scikit-learn {sklearn_version}",
            "queries": len(queries),
            "candidates": int(labels.size),
            "relevant": int(labels.sum()),
            **dict(provenance or {}),
        }
        return self

    def scores(self, query: str, candidates: Sequence[Candidate], now: datetime | None = None) -> np.ndarray:
        """The model's score of each candidate (higher is better)."""
        if self.coef_ is None:
            raise ValueError("model: this LearnedReranker is not fitted; call fit, load or hand_set")
        x = self.features.transform(query, candidates, now)
        return ((x - self.mean_) / self.scale_) @ self.coef_ + self.intercept_

    def rerank_candidates(
        self, query: str, candidates: Sequence[Candidate], k: int, now: datetime | None = None
    ) -> list[Hit]:
        """The best ``k`` candidates by the model's score (higher is better)."""
        query, k = check_query(query), check_k(k)
        if not candidates:
            return []
        if not any(source in c.source_scores for c in candidates for source in self.sources):
            raise ValueError(
                f"candidates: none carries a score from {', '.join(self.sources)}; rerank with a first stage "
                "that reports them (HybridFirstStage in TwoStageRetriever)"
            )
        if now is None and self.clock is not None:
            now = self.clock.now()
        scores = self.scores(query, candidates, now)
        return sorted_hits((Hit(c.item, float(s)) for c, s in zip(candidates, scores)), k)

    # evaluation on unseen conversations
    def check_unseen(self, conversation_ids: Iterable[str]) -> None:
        """Raise if any of ``conversation_ids`` was used to fit this model."""
        seen = sorted(set(conversation_ids) & self.trained_on)
        if seen:
            raise ValueError(f"conversation_ids: {seen} were used to fit this model; evaluate on other conversations")

    def evaluate(self, queries: Sequence[TrainingQuery]) -> dict[str, float]:
        """MRR of this model's order and of the first stage's, on conversations it was not fitted on."""
        self.check_unseen(q.conversation_id for q in queries)
        reranked, first = [], []
        for q in queries:
            n = max(len(q.candidates), 1)
            reranked.append([hit.item.id for hit in self.rerank_candidates(q.query, q.candidates, n, q.asked_at)])
            first.append([hit.item.id for hit in sorted_hits((c.hit for c in q.candidates), n)])
        relevant = [q.relevant for q in queries]
        return {
            "mrr": mean_reciprocal_rank(reranked, relevant),
            "first_stage_mrr": mean_reciprocal_rank(first, relevant),
            "queries": float(len(queries)),
        }

    # persistence: JSON only
    @classmethod
    def hand_set(cls, clock: Any = None) -> LearnedReranker:
        """The fallback model while no fitted file ships: reciprocal ranks of both sources (as RRF with k=0)
        plus half the content-word overlap and a small bonus when the query names the speaker."""
        model = cls(clock=clock)
        weights = {"dense_rr": 1.0, "bm25_rr": 1.0, "token_jaccard": 0.5, "speaker_match": 0.1}
        names = model.features.names
        model.mean_, model.scale_ = np.zeros(len(names)), np.ones(len(names))
        model.coef_ = np.array([weights.get(name, 0.0) for name in names])
        model.provenance = {"fitted_by": "hand-set fallback (no fitted model file)", "weights": weights}
        return model

    def to_dict(self) -> dict[str, Any]:
        if self.coef_ is None:
            raise ValueError("model: this LearnedReranker is not fitted; nothing to save")
        return {
            "format": FORMAT,
            "version": 1,
            "sources": list(self.sources),
            "pool": self.pool,
            "feature_names": self.features.names,
            "mean": self.mean_.tolist(),
            "scale": self.scale_.tolist(),
            "coef": self.coef_.tolist(),
            "intercept": self.intercept_,
            "C": self.C,
            "trained_on_conversations": sorted(self.trained_on),
            "provenance": self.provenance,
        }

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        return path

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], clock: Any = None) -> LearnedReranker:
        if data.get("format") != FORMAT or data.get("version") != 1:
            raise ValueError(f"format: {data.get('format')!r} v{data.get('version')!r} is not {FORMAT} v1")
        missing = [key for key in MODEL_KEYS if key not in data]
        if missing:
            raise ValueError(f"model: the file lacks {', '.join(missing)}")
        names = data["feature_names"]
        model = cls(sources=data["sources"], C=data["C"], clock=clock, length=LENGTH_FEATURE in names,
                    session=SESSION_FEATURES[0] in names, portable=ITEM_FEATURES[0] not in names,
                    pool=data.get("pool"))  # files older than the pool key: RRF
        if data["feature_names"] != model.features.names:
            raise ValueError(
                f"feature_names: the file has {data['feature_names']}, this code computes {model.features.names}"
            )
        model.mean_, model.scale_ = np.array(data["mean"], dtype=float), np.array(data["scale"], dtype=float)
        model.coef_, model.intercept_ = np.array(data["coef"], dtype=float), float(data["intercept"])
        model.trained_on = frozenset(data["trained_on_conversations"])
        model.provenance = dict(data["provenance"])
        return model

    @classmethod
    def load(cls, path: str | Path = DEFAULT_MODEL_PATH, clock: Any = None) -> LearnedReranker:
        """A model saved by ``save``.

        >>> LearnedReranker.load("/no/such.json")
        Traceback (most recent call last):
        ValueError: model: no learned-reranker file at /no/such.json
        """
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"model: no learned-reranker file at {path}")
        return cls.from_dict(json.loads(path.read_text()), clock=clock)


def mean_reciprocal_rank(rankings: Sequence[Sequence[str]], relevant: Sequence[frozenset[str]]) -> float:
    """Mean over queries of 1 / rank of the first relevant id (0 where none is ranked).

    >>> mean_reciprocal_rank([["a", "b"], ["c", "d"]], [frozenset({"b"}), frozenset({"x"})])
    0.25
    """
    if not rankings:
        return 0.0
    ranks = [next((1.0 / r for r, i in enumerate(ids, 1) if i in rel), 0.0) for ids, rel in zip(rankings, relevant)]
    return float(np.mean(ranks))


def _distinct(conversation_ids: Iterable[str], minimum: int) -> list[str]:
    ids = sorted(set(conversation_ids))
    if len(ids) < minimum:
        raise ValueError(f"conversation_ids: {len(ids)} distinct conversations; need at least {minimum}")
    return ids


def split_by_conversation(
    conversation_ids: Iterable[str], test_fraction: float = 0.3, seed: int = 0
) -> tuple[frozenset[str], frozenset[str]]:
    """(train, test) conversation ids: no conversation is on both sides; at least one on each.

    >>> train, test = split_by_conversation(["c1", "c1", "c2", "c3", "c4"], test_fraction=0.25)
    >>> len(train), len(test), train.isdisjoint(test)
    (3, 1, True)
    """
    if not isinstance(test_fraction, (int, float)) or not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction: {test_fraction!r} must be strictly between 0 and 1")
    ids = _distinct(conversation_ids, 2)
    order = np.random.default_rng(seed).permutation(len(ids))
    n_test = min(max(1, round(test_fraction * len(ids))), len(ids) - 1)
    test = frozenset(ids[i] for i in order[:n_test])
    return frozenset(ids) - test, test


def conversation_folds(
    conversation_ids: Iterable[str], n_folds: int = 5, seed: int = 0
) -> list[tuple[frozenset[str], frozenset[str]]]:
    """k-fold by conversation: ``n_folds`` (train, test) pairs whose tests partition the conversations.

    >>> sorted(sorted(test) for _, test in conversation_folds(["a", "b", "c", "d"], n_folds=2))
    [['a', 'c'], ['b', 'd']]
    """
    ids = _distinct(conversation_ids, 2)
    if isinstance(n_folds, bool) or not isinstance(n_folds, int) or not 2 <= n_folds <= len(ids):
        raise ValueError(f"n_folds: {n_folds!r} must be an integer from 2 to {len(ids)} (the conversations)")
    order = np.random.default_rng(seed).permutation(len(ids))
    folds = [frozenset(ids[i] for i in part) for part in np.array_split(order, n_folds)]
    return [(frozenset(ids) - test, test) for test in folds]
