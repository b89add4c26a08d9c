"""A remember policy learned from labelled turns: logistic regression over TF-IDF and rule cues.

Train it on turns labelled worth remembering (e.g. LoCoMo evidence turns) against the others. The
fitted model is saved as plain JSON (vocabulary, idf, weights); it is never pickled.

>>> texts = ["I adopted a dog named Rex", "ok", "My sister lives in Porto", "haha nice", "I moved to Lisbon", "cool"]
>>> policy = LearnedRememberPolicy(min_df=1).fit(texts, [1, 0, 1, 0, 1, 0])
>>> policy.decide("My brother lives in Madrid").remember, policy.decide("haha ok").remember
(True, False)
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_lab.agent.remember import RememberDecision, RuleBasedScorer, importance_from_score
from openclaw_lab.text import split_words

__all__ = ["LearnedRememberPolicy"]

FORMAT = "openclaw_lab.LearnedRememberPolicy/1"
_RULES = RuleBasedScorer()
CUES = tuple(_RULES.features(""))  # explicit, entity, number, date, first_person, preference


def cue_features(texts: Sequence[str]) -> np.ndarray:
    """log(1 + count) of each rule cue, and log(1 + words): one row per text (a Chinese character is a word)."""
    rows = [[*_RULES.features(text).values(), len(split_words(text))] for text in texts]
    return np.log1p(np.asarray(rows, dtype=np.float64).reshape(len(texts), len(CUES) + 1))


class LearnedRememberPolicy:
    """P(worth remembering) from a logistic regression; remembered when it reaches ``threshold``.

    Constructor arguments only configure; ``fit`` learns; the score is the model's probability in
    [0, 1] (higher is more worth remembering) and sets the importance band.
    """

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        C: float = 1.0,
        max_features: int = 5000,
        min_df: int = 2,
        ngram_max: int = 2,
        balanced: bool = True,
    ) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold: {threshold!r} is not in [0, 1]")
        self.threshold, self.C, self.max_features = threshold, C, max_features
        self.min_df, self.ngram_max, self.balanced = min_df, ngram_max, balanced
        self._vectorizer: Any = None
        self._coef: np.ndarray | None = None
        self._intercept = 0.0

    def __repr__(self) -> str:
        state = "fitted" if self.is_fitted else "not fitted"
        return f"LearnedRememberPolicy(threshold={self.threshold}, C={self.C}, {state})"

    @property
    def is_fitted(self) -> bool:
        return self._coef is not None

    def get_params(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold, "C": self.C, "max_features": self.max_features,
            "min_df": self.min_df, "ngram_max": self.ngram_max, "balanced": self.balanced,
        }  # fmt: skip

    def fit(self, texts: Sequence[str], labels: Sequence[bool | int]) -> LearnedRememberPolicy:
        """Learn from turns and 0/1 labels (1 = worth remembering); returns self."""
        from sklearn.linear_model import LogisticRegression

        texts, y = list(texts), np.asarray([int(bool(label)) for label in labels])
        if len(texts) != len(y):
            raise ValueError(f"labels: {len(y)} labels for {len(texts)} texts; give one label per text")
        if set(y.tolist()) != {0, 1}:
            raise ValueError(f"labels: need both classes (0 and 1) to learn from, got {sorted(set(y.tolist()))}")
        self._vectorizer = self._new_vectorizer()
        features = self._stack(self._vectorizer.fit_transform(texts), texts)
        model = LogisticRegression(
            C=self.C, class_weight="balanced" if self.balanced else None, solver="liblinear", max_iter=1000
        )  # liblinear: ten times faster than lbfgs on these sparse binary problems
        model.fit(features, y)
        self._coef, self._intercept = model.coef_[0].astype(np.float64), float(model.intercept_[0])
        return self

    def score_many(self, texts: Sequence[str]) -> np.ndarray:
        """P(worth remembering) of each text, in [0, 1] (higher is more)."""
        if not self.is_fitted:
            raise ValueError("policy: LearnedRememberPolicy is not fitted; call fit(texts, labels) or load(path)")
        texts = list(texts)
        if not texts:
            return np.zeros(0)
        logits = self._stack(self._vectorizer.transform(texts), texts) @ self._coef + self._intercept
        return 1.0 / (1.0 + np.exp(-np.asarray(logits).ravel()))

    def score(self, message: str, reply: str = "") -> float:
        return float(self.score_many([message])[0])

    def decide(self, message: str, reply: str = "") -> RememberDecision:
        """Remember when P(worth remembering) of the message reaches the threshold."""
        score = self.score(message)
        return RememberDecision(score >= self.threshold, importance_from_score(score), score, ("learned",))

    # JSON persistence
    def to_dict(self) -> dict[str, Any]:
        if not self.is_fitted:
            raise ValueError("policy: nothing to save; the policy is not fitted")
        return {
            "format": FORMAT,
            "params": self.get_params(),
            "vocabulary": {term: int(index) for term, index in self._vectorizer.vocabulary_.items()},
            "idf": self._vectorizer.idf_.tolist(),
            "coef": self._coef.tolist(),
            "intercept": self._intercept,
            "cues": list(CUES),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LearnedRememberPolicy:
        if data.get("format") != FORMAT:
            raise ValueError(f"format: {data.get('format')!r} is not {FORMAT!r}")
        if data.get("cues") != list(CUES):
            raise ValueError(f"cues: saved cues {data.get('cues')} differ from this version's {list(CUES)}")
        policy = cls(**data["params"])
        policy._vectorizer = policy._new_vectorizer(vocabulary=data["vocabulary"])
        policy._vectorizer.idf_ = np.asarray(data["idf"], dtype=np.float64)
        policy._coef, policy._intercept = np.asarray(data["coef"], dtype=np.float64), float(data["intercept"])
        expected = len(data["vocabulary"]) + len(CUES) + 1
        if policy._coef.shape != (expected,):
            raise ValueError(f"coef: {policy._coef.shape[0]} weights for {expected} features")
        return policy

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict()), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> LearnedRememberPolicy:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))

    def _new_vectorizer(self, vocabulary: dict[str, int] | None = None) -> Any:
        from sklearn.feature_extraction.text import TfidfVectorizer

        return TfidfVectorizer(
            ngram_range=(1, self.ngram_max), sublinear_tf=True, max_features=self.max_features,
            min_df=self.min_df if vocabulary is None else 1, vocabulary=vocabulary,
        )  # fmt: skip

    @staticmethod
    def _stack(tfidf: Any, texts: Sequence[str]) -> Any:
        from scipy.sparse import csr_matrix, hstack

        return hstack([tfidf, csr_matrix(cue_features(texts))]).tocsr()
