"""Learned supersession: of the pairs that similarity supersession would consider, which are real updates?

Similarity alone marks too much: a newer memory that names Ana and sits close in embedding space is as
often small talk about Ana as news that replaces what was known. Here a logistic regression decides, over
features of each candidate pair (the pairs of ``supersession.candidate_pairs``: a shared subject name and a
cosine in ``[min_similarity, max_similarity)``): their cosine, their content-word overlap without the names,
how many names they share, the days between them, whether either says something changed ("now", "moved",
"no longer", …), whether the newer one is a question, and whether one speaker said both. The older item is
marked by its newest replacement whose probability reaches ``threshold``.

The shipped model (``models/supersession.json``) was fitted by ``scripts/train_supersession.py`` on the
synthetic generator's labels with a seed no committed experiment uses, and records its provenance and its
cross-fitted precision and recall (folds by conversation). Like the reranker it is JSON: weights, no pickle.

>>> from datetime import datetime
>>> from openclaw_lab.consolidation.supersession import candidate_pairs
>>> porto = MemoryItem.new("user: My sister Ana lives in Porto.", now=datetime(2023, 1, 1), id="a", embedding=[1.0, 0.0, 0.0])
>>> lyon = MemoryItem.new("user: Ana moved to Lyon last week.", now=datetime(2023, 3, 1), id="b", embedding=[0.8, 0.6, 0.0])
>>> chat = MemoryItem.new("user: Remind me to call Ana?", now=datetime(2023, 4, 1), id="c", embedding=[0.8, 0.0, 0.6])
>>> model = LearnedSupersession(threshold=0.05)
>>> live, pairs = candidate_pairs([porto, lyon, chat], model.min_similarity, model.max_similarity)
>>> [(live[i].id, live[j].id) for i, j, _ in pairs], model.probabilities(live, pairs).round(3).tolist()
([('a', 'b'), ('a', 'c'), ('b', 'c')], [0.091, 0.0, 0.0])
>>> [(item.id, item.metadata[SUPERSEDED_BY]) for item in model.marks([porto, lyon, chat])]
[('a', 'b')]
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_lab.consolidation.supersession import SUPERSEDED_BY, candidate_pairs, mark_newest, subjects
from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.learned import content_words

__all__ = ["LearnedSupersession", "pair_features", "FEATURES", "DEFAULT_MODEL_PATH"]

DEFAULT_MODEL_PATH = Path(__file__).parent / "models" / "supersession.json"
FORMAT = "openclaw-lab/learned-supersession"
FEATURES = ("cosine", "word_overlap", "name_overlap", "gap_log_days", "newer_change", "older_change",
            "newer_question", "same_speaker")  # fmt: skip
# Words that say a fact changed, in any conversation (not the generator's templates).
_CHANGE = re.compile(r"\b(now|new|moved|relocated|changed|switched|quit|sold|replaced|left|no longer|any ?more|"
                     r"actually|instead|these days|anymore|not any)\b", re.IGNORECASE)  # fmt: skip


def pair_features(live: Sequence[MemoryItem], pairs: Sequence[tuple[int, int, float]]) -> np.ndarray:
    """One row of ``FEATURES`` per (older, newer, cosine) pair of ``live``."""
    if not pairs:
        return np.zeros((0, len(FEATURES)))
    used = sorted({i for older, newer, _ in pairs for i in (older, newer)})
    names = {i: subjects(live[i]) for i in used}
    said = content_words([live[i].content for i in used])
    words = {i: found - {name.lower() for name in names[i]} for i, found in zip(used, said)}  # names are their own feature
    change = {i: bool(_CHANGE.search(live[i].content)) for i in used}
    rows = []
    for older, newer, cosine in pairs:
        a, b = live[older], live[newer]
        union = words[older] | words[newer]
        rows.append((
            cosine,
            len(words[older] & words[newer]) / len(union) if union else 0.0,
            len(names[older] & names[newer]) / len(names[older] | names[newer]),
            np.log1p(max((b.created_at - a.created_at).total_seconds(), 0.0) / 86400),
            change[newer],
            change[older],
            "?" in b.content,
            a.metadata.get("speaker") is not None and a.metadata.get("speaker") == b.metadata.get("speaker"),
        ))  # fmt: skip
    return np.asarray(rows, dtype=float)


class LearnedSupersession:
    """Mark older memories that a newer one replaces, as a fitted model decides (see the module doc)."""

    def __init__(self, path: str | Path | None = None, *, threshold: float = 0.5, min_similarity: float = 0.3,
                 max_similarity: float = 0.95) -> None:  # fmt: skip
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold: {threshold!r} must be a probability strictly between 0 and 1")
        if not -1.0 <= min_similarity < max_similarity <= 1.0:
            raise ValueError(f"min_similarity/max_similarity: {min_similarity}, {max_similarity} must satisfy "
                             "-1 <= min < max <= 1")  # fmt: skip
        self.threshold, self.min_similarity, self.max_similarity = threshold, min_similarity, max_similarity
        self.path = Path(path) if path is not None else DEFAULT_MODEL_PATH
        model = json.loads(self.path.read_text())
        if model.get("format") != FORMAT or tuple(model.get("features", ())) != FEATURES:
            raise ValueError(f"path: {self.path} is not a {FORMAT} model over {FEATURES}")
        self.mean, self.scale = np.asarray(model["mean"]), np.asarray(model["scale"])
        self.coef, self.intercept = np.asarray(model["coef"]), float(model["intercept"])
        self.provenance: dict[str, Any] = model.get("provenance", {})

    def __repr__(self) -> str:
        return f"LearnedSupersession(threshold={self.threshold}, min_similarity={self.min_similarity})"

    def probabilities(self, live: Sequence[MemoryItem], pairs: Sequence[tuple[int, int, float]]) -> np.ndarray:
        """The model's probability that each pair's newer item replaces its older one."""
        x = pair_features(live, pairs)
        return 1.0 / (1.0 + np.exp(-(((x - self.mean) / self.scale) @ self.coef + self.intercept)))

    def marks(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        """The items to rewrite, marked by their newest replacement; items already marked are left alone."""
        live, pairs = candidate_pairs(items, self.min_similarity, self.max_similarity)
        accepted = [pair for pair, p in zip(pairs, self.probabilities(live, pairs)) if p >= self.threshold]
        return mark_newest(live, accepted)

    @staticmethod
    def save(path: str | Path, x: np.ndarray, labels: np.ndarray, provenance: Mapping[str, Any], C: float = 1.0) -> dict:
        """Fit scikit-learn's LogisticRegression on standardised ``x`` and write the model as JSON."""
        from sklearn import __version__ as sklearn_version
        from sklearn.linear_model import LogisticRegression
        from sklearn.preprocessing import StandardScaler

        if not labels.any() or labels.all():
            raise ValueError(f"labels: need both classes; got {int(labels.sum())} positive of {labels.size}")
        scaler = StandardScaler().fit(x)
        fitted = LogisticRegression(C=C, max_iter=2000).fit(scaler.transform(x), labels)
        model = {"format": FORMAT, "features": list(FEATURES), "mean": scaler.mean_.tolist(),
                 "scale": scaler.scale_.tolist(), "coef": fitted.coef_[0].tolist(),
                 "intercept": float(fitted.intercept_[0]),
                 "provenance": {"fitted_by": f"LogisticRegression(C={C}) on scikit-learn {sklearn_version}",
                                "pairs": int(labels.size), "positive": int(labels.sum()), **provenance}}  # fmt: skip
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(model, indent=2) + "\n")
        return model

