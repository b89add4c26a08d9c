"""Slot recency: at question time, a newer hit about the question's slot passes an older one.

A fact that changes ("the API answers in 300 ms", later "it is down to 250 ms") keeps its subject and
attribute (its slot) and changes its value; the question names the slot ("What is the API's response
time?"). Consolidation has to guess which memories share a slot; at question time the slot is known: it is
what the question asks. So the top ``window`` hits of any retriever are read again, best first: each goes
right above the highest hit placed so far that it passes, if any: it passes a hit when it is newer
(``created_at``) and its cosine to the question is at least that hit's less ``margin``. A statement and its
update are about equally close to the question and the update is newer: it passes; a newer memory on another
subject is further from the question than the answer: it stays below. No hit
enters or leaves the top ``window``: recall at ``window`` is the base retriever's, only the order inside
it changes. Nothing is fitted and no value is parsed; ``margin`` is a cosine distance.

Measured (issue 48; generator, 4,000 turns, seed 7, restatement merge on, margin 0.1): stale above current
0.725 -> 0.471 (bm25), 0.686 -> 0.412 (dense), 0.706 -> 0.392 (CombSUM), McNemar p <= 0.001, turn R@10 within
0.008 (a merged memory holds several turns, so the turns of the top ten can change a little). The cost: a
newer memory about the same subject but another attribute can pass the answer (dense MRR 0.819 -> 0.790).
The slot score is the cosine of the whole memory; in long messages on one project most memories are about
as close to the question, newer chatter passes the answer there too, and a sentence-level slot is the next step.

>>> from datetime import datetime
>>> rule = SlotRecency(window=3, margin=0.1)
>>> hits = {"old": 0.9, "new": 0.8, "chat": 0.7, "deep": 0.1}
>>> slot = {"old": 0.62, "new": 0.58, "chat": 0.30, "deep": 0.9}  # the question's cosine to each hit
>>> times = {"old": datetime(2024, 3, 1), "new": datetime(2024, 3, 9), "chat": datetime(2024, 4, 1),
...          "deep": datetime(2024, 5, 1)}
>>> reordered = rule.reorder(hits, slot, times)  # "chat" is newer but off the slot; "deep" is below the window
>>> sorted(reordered, key=reordered.get, reverse=True)
['new', 'old', 'chat', 'deep']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k
from openclaw_lab.retrieval.protocol import Retriever, RunDict, check_query, search_batch

__all__ = ["SlotRecency", "SlotResolved", "slot_recency", "BASES"]

BASES = ("bm25", "dense", "hybrid")  # the retrievers ``slot_recency`` can wrap


@dataclass(frozen=True)
class SlotRecency:
    """Let newer hits about the question's slot pass older ones in the top ``window`` (see the module doc).

    ``window``: how many of the best hits are read again (the set of them never changes); ``margin``: how far
    below an older hit's cosine to the question a newer hit may lie and still pass it.
    """

    window: int = 10
    margin: float = 0.1

    def __post_init__(self) -> None:
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 2:
            raise ValueError(f"window: {self.window!r} must be an int >= 2 (the hits read again)")
        if isinstance(self.margin, bool) or not isinstance(self.margin, (int, float)) or not 0 <= self.margin <= 2:
            raise ValueError(f"margin: {self.margin!r} must be a cosine distance in [0, 2]")

    def window_ids(self, ranked: Sequence[str], hits: Mapping[str, float]) -> list[str]:
        """The first ``window`` of ``ranked``, less any tied in score with the first hit below the window: which
        of tied hits a ranking keeps is its tie-break's choice, and reordering must not change the top's set."""
        head = list(ranked[: self.window])
        if len(ranked) > self.window:
            head = [i for i in head if hits[i] > hits[ranked[self.window]]]
        return head

    def passes(self, newer: str, older: str, slot: Mapping[str, float], times: Mapping[str, datetime]) -> bool:
        """Whether ``newer`` goes above ``older``: made later, and about as close to the question."""
        return times[newer] > times[older] and slot[newer] >= slot[older] - self.margin

    def reorder(
        self, hits: Mapping[str, float], slot: Mapping[str, float], times: Mapping[str, datetime]
    ) -> dict[str, float]:
        """``hits`` (id -> score, higher is better) with the window's scores handed out in the new order.

        ``slot``: each hit's cosine to the question (at least for the top ``window``); ``times``: when each
        hit was made.
        """
        ranked = sorted(hits, key=lambda i: (-hits[i], i))
        order: list[str] = []
        for hit in self.window_ids(ranked, hits):  # each goes right above the highest hit it passes, if any
            passes = (n for n, other in enumerate(order) if self.passes(hit, other, slot, times))
            order.insert(next(passes, len(order)), hit)
        out = dict(hits)
        out.update(zip(order, sorted((hits[i] for i in order), reverse=True)))
        return out


class SlotResolved:
    """``base``'s hits, with the top ones reordered by ``rule`` (``SlotRecency``) for each question.

    The items' own embeddings give the slot scores (items without one are encoded at ``index``), the
    question is encoded by ``embedder``; time is each item's ``created_at``.
    """

    def __init__(self, base: Retriever, embedder: Any, rule: SlotRecency | None = None) -> None:
        if embedder is None:
            raise ValueError("embedder: slot recency compares the question with the hits; give an embedder")
        self.base, self.embedder, self.rule = base, embedder, rule or SlotRecency()
        self._items: dict[str, MemoryItem] = {}
        self._vectors: dict[str, np.ndarray] = {}

    def __repr__(self) -> str:
        return f"SlotResolved({self.base!r}, rule={self.rule!r})"

    def index(self, items: Sequence[MemoryItem]) -> None:
        items = list(items)
        missing = [item for item in items if item.embedding is None]
        encoded = _unit(self.embedder.encode([item.content for item in missing])) if missing else []
        fresh = {item.id: vector for item, vector in zip(missing, encoded)}
        for item in items:
            self._items[item.id] = item
            self._vectors[item.id] = fresh[item.id] if item.id in fresh else _unit(item.embedding)[0]
        self.base.index(items)

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        hits = self.search_many({"q": check_query(query)}, k, filter)["q"]
        return [Hit(self._items[i], score) for i, score in hits.items()]

    def search_many(
        self, queries: Mapping[str, str], k: int, filters: Mapping[str, MemoryFilter] | MemoryFilter | None = None
    ) -> RunDict:
        """The base run at depth ``max(k, window)``, each query's top reordered, cut to ``k`` (best first)."""
        k = check_k(k)
        run = search_batch(self.base, queries, max(k, self.rule.window), filters)
        asked = [qid for qid in queries if run.get(qid)]
        vectors = _unit(self.embedder.encode([queries[qid] for qid in asked])) if asked else []
        out: RunDict = {qid: {} for qid in queries}
        for qid, vector in zip(asked, vectors):
            hits = run[qid]
            slot = {i: float(self._vectors[i] @ vector) for i in hits}
            reordered = self.rule.reorder(hits, slot, {i: self._items[i].created_at for i in hits})
            out[qid] = dict(sorted(reordered.items(), key=lambda pair: (-pair[1], pair[0]))[:k])
        return out


def _unit(vectors: Any) -> np.ndarray:
    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def slot_recency(
    embedder: Any = None, *, base: str = "hybrid", base_params: Mapping[str, Any] | None = None,
    window: int = 10, margin: float = 0.1,
) -> SlotResolved:
    """The ``slot-recency`` strategy: ``base`` (one of ``BASES``, built with ``base_params``) reordered by
    ``SlotRecency(window, margin)``. CombSUM: ``base = "hybrid"``, ``base_params = {method = "wsum"}``.

    >>> slot_recency(object(), base="bm25", window=5).rule
    SlotRecency(window=5, margin=0.1)
    >>> slot_recency(object(), base="splade")
    Traceback (most recent call last):
    ...
    ValueError: base: 'splade' is not one of bm25, dense, hybrid
    """
    from openclaw_lab.retrieval.bm25 import BM25Retriever
    from openclaw_lab.retrieval.dense import DenseRetriever
    from openclaw_lab.retrieval.fusion import hybrid

    params = dict(base_params or {})
    if base == "bm25":
        retriever: Retriever = BM25Retriever(**params)
    elif base == "dense":
        retriever = DenseRetriever(embedder, **params)
    elif base == "hybrid":
        retriever = hybrid(embedder, **params)
    else:
        raise ValueError(f"base: {base!r} is not one of {', '.join(BASES)}")
    return SlotResolved(retriever, embedder, SlotRecency(window=window, margin=margin))
