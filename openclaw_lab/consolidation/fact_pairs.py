"""Fact pairs: which two memories restate one fact, and which one updates another, as a fitted model says.

Both decisions read the same pairs. Candidates are an item's ``k`` nearest older items by embedding, plus
every older item naming a subject it names (a capitalised name other than the speaker's) at a cosine of at
least ``min_similarity``: restatements sit among the nearest neighbours, while an update ("Ana moved to
Lyon" after "Ana lives in Porto") may sit further away but names the same subject. Each pair is described
by ``PAIR_FEATURES``: how close the two are (cosine, the older one's rank among the newer one's older
neighbours and among the older items that name the same subject), what they share and what only one of
them says (content words, names), and whether either says that something changed or asks a question, who
said them, and the days between them. None of them moves as later memories arrive: a replay judges a pair
again at every consolidation run, and a feature that drifted with the memory's size (how rare a word is
among the memories, or the newer item's rank among the older one's neighbours) let early, small memories
merge what the model would not merge in a full one. A small neural network (one
hidden layer, fitted by ``scripts/train_fact_pairs.py``) turns a row into three probabilities:
``unrelated``, ``restatement`` (same fact, same value) and ``update`` (same fact, newer value).

The model is JSON (weights, no pickle) and records its provenance: data, seed, and its precision and recall
cross-fitted by conversation. It is fitted on the synthetic generator's labels; ``merge.RestatementMerge``
and ``PairSupersession`` read it; the hand-written set under ``datasets/fact-updates`` measures how far it
carries beyond the generator's templates.

>>> from datetime import datetime
>>> porto = MemoryItem.new("user: My sister Ana lives in Porto.", now=datetime(2023, 1, 1), id="a", embedding=[1.0, 0.0, 0.0])
>>> lyon = MemoryItem.new("user: Ana moved to Lyon last week.", now=datetime(2023, 3, 1), id="b", embedding=[0.8, 0.6, 0.0])
>>> live, pairs = neighbour_pairs([lyon, porto], k=1)
>>> [(live[i].id, live[j].id) for i, j, _ in pairs]
[('a', 'b')]
>>> pair_features(live, pairs).shape == (1, len(PAIR_FEATURES))
True
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_lab.consolidation.supersession import SUPERSEDED_BY, mark_newest, subjects
from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.learned import content_words
from openclaw_lab.retrieval.tokenize import resolve_stopwords

__all__ = ["neighbour_pairs", "pair_features", "FactPairModel", "PairSupersession", "PAIR_FEATURES", "RELATIONS",
           "DEFAULT_PAIR_MODEL", "PairRows"]  # fmt: skip

DEFAULT_PAIR_MODEL = Path(__file__).parent / "models" / "fact_pairs.json"
FORMAT = "openclaw-lab/fact-pairs"
RELATIONS = ("unrelated", "restatement", "update")
PAIR_FEATURES = (
    "cosine", "older_rank", "subject_rank", "word_overlap", "name_overlap", "older_only_words",
    "newer_only_words", "older_only_names",
    "newer_only_names", "newer_change", "older_change", "newer_question", "older_question", "same_speaker",
    "gap_log_days", "both_first_person",
)  # fmt: skip
_FAR = 200  # the rank given past the ranks computed
# Words that say a fact changed, in any conversation (not the generator's templates).
_CHANGE = re.compile(r"\b(now|new|moved|relocated|changed|switched|quit|sold|replaced|left|no longer|any ?more|"
                     r"actually|instead|these days|anymore|not any|started|stopped|gave up|got rid)\b",
                     re.IGNORECASE)  # fmt: skip
_FIRST_PERSON = re.compile(r"\b(I|my|me|mine|I'm|I've)\b")
_STOPWORDS = resolve_stopwords("en_plus")


def _said(item: MemoryItem) -> str:
    """The words of a memory without the ``speaker:`` prefix a replay writes."""
    speaker = item.metadata.get("speaker")
    prefix = f"{speaker}:"
    return item.content[len(prefix):] if speaker and item.content.startswith(prefix) else item.content


def _names(item: MemoryItem) -> frozenset[str]:
    """``subjects`` without capitalised function words that open a sentence ("Did", "These")."""
    return frozenset(name for name in subjects(item) if name.lower() not in _STOPWORDS)


def _cosines(live: Sequence[MemoryItem], block: int = 2048) -> np.ndarray:
    unit = _unit(live)
    return np.vstack([_cosine_rows(unit, range(start, min(start + block, len(live))), range(len(live)))
                      for start in range(0, len(live), block)])  # fmt: skip


def neighbour_pairs(
    items: Sequence[MemoryItem], k: int = 20, min_similarity: float = 0.3
) -> tuple[list[MemoryItem], list[tuple[int, int, float]]]:
    """The unmarked items with embeddings, oldest first (ties by id), and the (older, newer, cosine) pairs:
    each item's ``k`` nearest older items, and the older items naming one of its subjects at a cosine of at
    least ``min_similarity``."""
    live, pairs, _ = _neighbours(items, k, min_similarity)
    return live, pairs


def _neighbours(
    items: Sequence[MemoryItem], k: int, min_similarity: float
) -> tuple[list[MemoryItem], list[tuple[int, int, float]], np.ndarray | None]:
    """``neighbour_pairs`` and the cosine matrix it read, which the features read again."""
    if k < 0:
        raise ValueError(f"k: {k!r} must be >= 0")
    live = sorted((i for i in items if i.embedding is not None and SUPERSEDED_BY not in i.metadata),
                  key=lambda item: (item.created_at, item.id))  # fmt: skip
    if len(live) < 2:
        return live, [], None
    cosine = _cosines(live)
    nearest = _top(cosine, np.tril(np.ones_like(cosine, dtype=bool), -1), k)
    found = {(int(i), newer) for newer in range(1, len(live)) for i in nearest[newer, : min(k, newer)]}
    for holders in _by_name(live).values():
        found.update((a, b) for n, b in enumerate(holders) for a in holders[:n] if cosine[a, b] >= min_similarity)
    return live, [(a, b, float(cosine[a, b])) for a, b in sorted(found)], cosine


def _by_name(live: Sequence[MemoryItem]) -> dict[str, list[int]]:
    holders: dict[str, list[int]] = defaultdict(list)
    for index, item in enumerate(live):
        for name in _names(item):
            holders[name].append(index)
    return holders


def _top(scores: np.ndarray, allowed: np.ndarray, depth: int, block: int = 2048) -> np.ndarray:
    """Each row's first ``depth`` allowed columns, best score first and ties by lower column (a stable sort's
    order), padded with -1. A partial sort, row block by row block: a full sort of every pair of a long
    memory was most of a consolidation run's time, and only the first ``_FAR`` ranks are ever read.

    >>> _top(np.array([[0.2, 0.9, 0.9, 0.5]]), np.array([[True, True, True, False]]), 2).tolist()
    [[1, 2]]
    """
    rows, columns = scores.shape
    depth = min(depth, columns)
    out = np.full((rows, depth), -1, dtype=np.int64)
    for start in range(0, rows, block) if depth else ():
        key = np.where(allowed[start : start + block], -scores[start : start + block], np.inf)
        part = np.argpartition(key, depth - 1, axis=1)[:, :depth]
        values = np.take_along_axis(key, part, axis=1)
        order = np.lexsort((part, values), axis=1)  # by key, then by column: the stable order
        part, values = np.take_along_axis(part, order, axis=1), np.take_along_axis(values, order, axis=1)
        edge = values[:, -1:]  # a tie at the edge may have left out a lower column: those rows take the lowest
        cut = np.isfinite(edge[:, 0]) & ((key == edge).sum(axis=1) > (values == edge).sum(axis=1))
        for row in np.flatnonzero(cut):
            above = part[row][values[row] < edge[row, 0]]
            part[row] = np.concatenate([above, np.flatnonzero(key[row] == edge[row, 0])[: depth - above.size]])
            values[row] = key[row, part[row]]
        out[start : start + block] = np.where(np.isfinite(values), part, -1)
    return out


def _rank_of(top: np.ndarray, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Each (row, column)'s place in ``top`` (``_FAR`` where it is not there: past ``_FAR`` or not allowed)."""
    found = top[rows] == columns[:, None]
    return np.where(found.any(axis=1), found.argmax(axis=1), _FAR)


def pair_features(live: Sequence[MemoryItem], pairs: Sequence[tuple[int, int, float]],
                  cosine: np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """One row of ``PAIR_FEATURES`` per (older, newer, cosine) pair of ``live`` (oldest first); ``cosine``: their
    cosine matrix, when the caller has it already."""
    if not pairs:
        return np.zeros((0, len(PAIR_FEATURES)))
    cosine = _cosines(live) if cosine is None else cosine
    older = np.tril(np.ones_like(cosine, dtype=bool), -1)
    shares_name = np.zeros_like(older)
    for holders in _by_name(live).values():
        shares_name[np.ix_(holders, holders)] = True
    newer_of, older_of = np.array([b for _, b, _ in pairs]), np.array([a for a, _, _ in pairs])
    older_rank = _rank_of(_top(cosine, older, _FAR), newer_of, older_of)
    subject_rank = _rank_of(_top(cosine, older & shares_name, _FAR), newer_of, older_of)
    own = np.asarray(_own_features(live, [(a, b) for a, b, _ in pairs]), dtype=float)
    return np.column_stack([[c for _, _, c in pairs], np.log1p(older_rank), np.log1p(subject_rank), own])


@dataclass(frozen=True)
class _Row:
    """One newer memory's candidate pairs: its older partners (by key) and their feature rows, with what
    they were read from: the older memories in its ranks or paired with it (``depends``), the cosine an
    arriving older memory must reach to enter its ranks (``floor``), and its names."""

    partners: np.ndarray
    features: np.ndarray
    depends: frozenset[int]
    floor: float
    names: frozenset[str]


class PairRows:
    """Each memory's row of candidate pairs (it is the newer one) and their features, kept from call to call:
    a replay asks at every consolidation run, and most rows are as they were. A row is read again only when
    its memory is new (or rewritten: a memory is known by its id, time, words, speaker and vector), when an
    older memory it was read from left, or when an arriving older one names one of its subjects or is close
    enough to enter its ranks. So a run reads the memories that arrived since the last one and the rows a mark or a
    merge touched, not every pair again. The rows equal a fresh reading's: cosines are summed in float64 and
    rounded to float32, so the order in which a block of rows is multiplied leaves no trace."""

    def __init__(self, k: int, min_similarity: float, limit: int = 1_000_000) -> None:
        self.k, self.min_similarity, self.limit = k, min_similarity, limit
        self.numbers: dict[tuple, int] = {}  # a memory's key -> its number
        self.own: dict[tuple[int, int], tuple] = {}  # what a pair says on its own, by (older, newer) number
        self.rows: dict[int, _Row] = {}
        self.held: set[int] = set()  # the numbers of the last call's memories

    def read(self, items: Sequence[MemoryItem]) -> tuple[list[MemoryItem], list[tuple[int, int, float]], np.ndarray]:
        """``neighbour_pairs``'s live items and pairs, and their ``PAIR_FEATURES`` rows."""
        if self.k < 0:
            raise ValueError(f"k: {self.k!r} must be >= 0")
        live = sorted((i for i in items if i.embedding is not None and SUPERSEDED_BY not in i.metadata),
                      key=lambda item: (item.created_at, item.id))  # fmt: skip
        if len(live) < 2:
            return live, [], np.zeros((0, len(PAIR_FEATURES)))
        if len(self.own) > self.limit:  # started again rather than grown without end (the rows keep theirs)
            self.own.clear()
        unit = _unit(live)
        keys = [(item.id, item.created_at, item.content, item.metadata.get("speaker"), vector.tobytes())
                for item, vector in zip(live, unit)]  # fmt: skip
        numbers = [self.numbers.setdefault(key, len(self.numbers)) for key in keys]
        names = [_names(item) for item in live]
        self._forget(numbers, unit, names)
        todo = [n for n, number in enumerate(numbers) if n and number not in self.rows]
        for start in range(0, len(todo), 256):
            self._read_rows(live, numbers, unit, names, todo[start : start + 256])
        return live, *self._pairs(numbers)

    def _forget(self, numbers: list[int], unit: np.ndarray, names: list[frozenset[str]]) -> None:
        """Drop the rows that a memory's leaving or arriving may have changed."""
        now = set(numbers)
        gone, came = self.held - now, now - self.held
        self.held = now
        touched = [number for number, row in self.rows.items() if number in gone or not row.depends.isdisjoint(gone)]
        for number in touched:
            del self.rows[number]
        arrived = np.asarray([n for n, number in enumerate(numbers) if number in came], dtype=np.int64)
        later = [n for n in range(arrived.min(initial=len(numbers)) + 1, len(numbers)) if numbers[n] in self.rows]
        cosine = _cosine_rows(unit, later, arrived) if later else None  # rows with an older arrival
        for r, n in enumerate(later):
            row, older = self.rows[numbers[n]], arrived < n
            if any(names[a] & row.names for a in arrived[older].tolist()) or (cosine[r, older] >= row.floor).any():
                del self.rows[numbers[n]]

    def _read_rows(self, live: Sequence[MemoryItem], numbers: list[int], unit: np.ndarray,
                   names: list[frozenset[str]], rows: list[int]) -> None:  # fmt: skip
        width = rows[-1]
        cosine = _cosine_rows(unit, rows, range(width))
        older = np.arange(width)[None, :] < np.asarray(rows)[:, None]
        holders: dict[str, list[int]] = defaultdict(list)
        for index, found in enumerate(names[:width]):
            for name in found:
                holders[name].append(index)
        shares_name = np.zeros_like(older)
        for r, n in enumerate(rows):
            for name in names[n]:
                shares_name[r, holders[name]] = True
        ranked, by_subject = _top(cosine, older, max(self.k, _FAR)), _top(cosine, older & shares_name, _FAR)
        named = older & shares_name & (cosine >= self.min_similarity)
        partners = [np.union1d(ranked[r, : min(self.k, n)], np.flatnonzero(named[r])) for r, n in enumerate(rows)]
        row_of = np.concatenate([np.full(found.size, r) for r, found in enumerate(partners)])
        older_of = np.concatenate(partners).astype(np.int64)
        older_rank, subject_rank = _rank_of(ranked[:, :_FAR], row_of, older_of), _rank_of(by_subject, row_of, older_of)
        pairs = [(numbers[a], numbers[rows[r]]) for r, a in zip(row_of.tolist(), older_of.tolist())]
        unread = [(a, rows[r]) for key, r, a in zip(pairs, row_of.tolist(), older_of.tolist()) if key not in self.own]
        self.own.update(zip(((numbers[a], numbers[b]) for a, b in unread), _own_features(live, unread)))
        own = np.asarray([self.own[key] for key in pairs], dtype=float).reshape(len(pairs), len(PAIR_FEATURES) - 3)
        features = np.column_stack([cosine[row_of, older_of], np.log1p(older_rank), np.log1p(subject_rank), own])
        shares = shares_name[row_of, older_of]
        number = np.asarray(numbers, dtype=np.int64)
        for r, n in enumerate(rows):
            mine = row_of == r
            # what the row was read from: each list down to its deepest partner (all of it when one is past it)
            deep = min(int(older_rank[mine].max(initial=0)), ranked.shape[1] - 1)
            deep_subject = int(subject_rank[mine & shares].max(initial=-1))
            ranks = ranked[r, : deep + 1]
            read = np.concatenate([ranks, by_subject[r, : deep_subject + 1], older_of[mine]])
            self.rows[numbers[n]] = _Row(
                partners=number[older_of[mine]], features=features[mine],
                depends=frozenset(number[read[read >= 0]].tolist()),
                floor=float(cosine[r, ranks[-1]]) if n >= self.k and ranks[-1] >= 0 else -np.inf, names=names[n],
            )  # fmt: skip

    def _pairs(self, numbers: list[int]) -> tuple[list[tuple[int, int, float]], np.ndarray]:
        rows = [(n, self.rows[number]) for n, number in enumerate(numbers) if n and self.rows[number].partners.size]
        if not rows:
            return [], np.zeros((0, len(PAIR_FEATURES)))
        position = np.full(len(self.numbers), -1, dtype=np.int64)
        position[numbers] = np.arange(len(numbers))
        newer = np.concatenate([np.full(row.partners.size, n) for n, row in rows])
        older = position[np.concatenate([row.partners for _, row in rows])]
        features = np.vstack([row.features for _, row in rows])
        order = np.lexsort((newer, older))  # by older, then newer: the order of ``neighbour_pairs``
        pairs = list(zip(older[order].tolist(), newer[order].tolist(), features[order, 0].tolist()))
        return pairs, features[order]


def _unit(live: Sequence[MemoryItem]) -> np.ndarray:
    matrix = np.vstack([item.embedding for item in live]).astype(np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return matrix


def _cosine_rows(unit: np.ndarray, rows: Sequence[int], columns: Sequence[int]) -> np.ndarray:
    """The cosines of ``rows`` with ``columns``, summed in float64 and rounded to float32: equal whichever rows
    are read together (a float32 product's last bits depend on the block it was computed in)."""
    rows_, columns_ = np.asarray(rows, dtype=np.int64), np.asarray(columns, dtype=np.int64)
    return (unit[rows_].astype(np.float64) @ unit[columns_].astype(np.float64).T).astype(np.float32)


def _own_features(live: Sequence[MemoryItem], pairs: Sequence[tuple[int, int]]) -> list[tuple]:
    """``PAIR_FEATURES`` after the ranks, for each (older, newer) pair: what the two items say, who said them, when."""
    used = sorted({i for pair in pairs for i in pair})
    names = {i: _names(live[i]) for i in used}
    said = {i: _said(live[i]) for i in used}
    # what each item says on its own, read once per item rather than once per pair it is in
    found = content_words([said[i] for i in used])
    words = {i: content - {name.lower() for name in names[i]} for i, content in zip(used, found)}
    change = {i: bool(_CHANGE.search(said[i])) for i in used}
    question = {i: "?" in said[i] for i in used}
    first_person = {i: bool(_FIRST_PERSON.search(said[i])) for i in used}
    speaker = {i: live[i].metadata.get("speaker") for i in used}
    rows = []
    for a, b in pairs:
        union, shared = words[a] | words[b], words[a] & words[b]
        both_names = names[a] | names[b]
        rows.append((
            len(shared) / len(union) if union else 0.0,
            len(names[a] & names[b]) / len(both_names) if both_names else 0.0,
            len(words[a]) - len(shared), len(words[b]) - len(shared),
            len(both_names) - len(names[b]), len(both_names) - len(names[a]),
            change[b], change[a], question[b], question[a],
            speaker[a] is not None and speaker[a] == speaker[b],
            np.log1p(max((live[b].created_at - live[a].created_at).total_seconds(), 0.0) / 86400),
            first_person[a] and first_person[b],
        ))  # fmt: skip
    return rows


class FactPairModel:
    """The fitted pair model: ``probabilities`` gives each pair's chance of each of ``RELATIONS``."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else DEFAULT_PAIR_MODEL
        model = json.loads(self.path.read_text())
        if model.get("format") != FORMAT or tuple(model.get("features", ())) != PAIR_FEATURES:
            raise ValueError(f"path: {self.path} is not a {FORMAT} model over {PAIR_FEATURES}")
        self.mean, self.scale = np.asarray(model["mean"]), np.asarray(model["scale"])
        self.layers = [(np.asarray(w), np.asarray(b)) for w, b in zip(model["weights"], model["biases"])]
        self.k, self.min_similarity = int(model["k"]), float(model["min_similarity"])
        self.provenance: dict[str, Any] = model.get("provenance", {})
        self.rows: dict[frozenset, PairRows] = {}

    def pairs(self, items: Sequence[MemoryItem]) -> tuple[list[MemoryItem], list[tuple[int, int, float]], np.ndarray]:
        """The candidate pairs of ``items`` (the model's own ``k`` and ``min_similarity``) and their probabilities.

        A replay asks again at every consolidation run, mostly about rows it read before: ``PairRows`` reads
        only what changed since the last call. The probabilities are those of a model without that memory,
        to the last bit.
        """
        tiers = frozenset(item.tier for item in items)  # each tier's memories change from run to run on their own
        rows = self.rows.setdefault(tiers, PairRows(self.k, self.min_similarity))
        live, pairs, features = rows.read(items)
        return live, pairs, self.probabilities(features)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        """One row of ``RELATIONS`` probabilities per feature row (a ReLU layer, then softmax)."""
        h = (x - self.mean) / self.scale
        for weights, bias in self.layers[:-1]:
            h = np.maximum(h @ weights + bias, 0.0)
        logits = h @ self.layers[-1][0] + self.layers[-1][1]
        logits -= logits.max(axis=1, keepdims=True)
        odds = np.exp(logits)
        return odds / odds.sum(axis=1, keepdims=True)

    @staticmethod
    def save(path: str | Path, x: np.ndarray, labels: np.ndarray, *, k: int, min_similarity: float,
             provenance: Mapping[str, Any], hidden: int = 32) -> dict[str, Any]:  # fmt: skip
        """Fit scikit-learn's MLPClassifier on standardised ``x`` (labels: indices of ``RELATIONS``); write JSON."""
        from sklearn import __version__ as sklearn_version
        from sklearn.neural_network import MLPClassifier
        from sklearn.preprocessing import StandardScaler

        if set(np.unique(labels)) != set(range(len(RELATIONS))):
            raise ValueError(f"labels: need every one of {RELATIONS}; got counts {np.bincount(labels).tolist()}")
        scaler = StandardScaler().fit(x)
        scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
        fitted = MLPClassifier((hidden,), alpha=1e-3, max_iter=2000, random_state=0).fit((x - scaler.mean_) / scale, labels)
        model = {"format": FORMAT, "features": list(PAIR_FEATURES), "relations": list(RELATIONS), "k": k,
                 "min_similarity": min_similarity, "mean": scaler.mean_.tolist(), "scale": scale.tolist(),
                 "weights": [w.tolist() for w in fitted.coefs_], "biases": [b.tolist() for b in fitted.intercepts_],
                 "provenance": {"fitted_by": f"MLPClassifier(({hidden},), alpha=1e-3) on scikit-learn {sklearn_version}",
                                "pairs": int(labels.size), "per_relation": np.bincount(labels).tolist(), **provenance}}  # fmt: skip
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(model) + "\n")
        return model


class PairSupersession:
    """Mark an older memory superseded when the pair model says a newer one updates it (``update`` probability
    at least ``threshold``); the newest such replacement is named. Items already marked are left alone."""

    def __init__(self, path: str | Path | None = None, *, threshold: float = 0.5) -> None:
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold: {threshold!r} must be a probability strictly between 0 and 1")
        self.threshold, self.model = threshold, FactPairModel(path)

    def __repr__(self) -> str:
        return f"PairSupersession(threshold={self.threshold})"

    def marks(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        live, pairs, chances = self.model.pairs(items)
        update = RELATIONS.index("update")
        return mark_newest(live, [pair for pair, p in zip(pairs, chances[:, update]) if p >= self.threshold])
