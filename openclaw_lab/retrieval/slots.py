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
as close to the question, newer chatter passes the answer there too.

Three settings sharpen it for such histories. ``unit = "sentence"``: a hit's slot score is its closest
sentence's cosine to the question (a long message states the fact in one sentence); ``cue``: a newer hit
passes only when that sentence has a word of change ("now", "new", "moved", "increased", "现在", …:
``text.says_change``), which an update usually has and a restatement or an aside usually has not;
``same_speaker``: it passes only a hit of its own speaker (the user updates what the user said; an
assistant's echo of the new value passes nothing). Measured in ``docs/results/consolidation-quality.md``.

>>> from datetime import datetime
>>> rule = SlotRecency(window=3, margin=0.1)
>>> at = lambda slot, day, changed=True: Said(slot, datetime(2024, 3, day), "user", changed)
>>> hits = {"old": 0.9, "new": 0.8, "chat": 0.7, "deep": 0.1}
>>> said = {"old": at(0.62, 1), "new": at(0.58, 9), "chat": at(0.30, 20), "deep": at(0.9, 30)}
>>> reordered = rule.reorder(hits, said)  # "chat" is newer but off the slot; "deep" is below the window
>>> sorted(reordered, key=reordered.get, reverse=True)
['new', 'old', 'chat', 'deep']
>>> said["new"] = at(0.58, 9, changed=False)  # with cue, an update must say that something changed
>>> reordered = SlotRecency(window=3, margin=0.1, cue=True).reorder(hits, said)
>>> sorted(reordered, key=reordered.get, reverse=True)
['old', 'new', 'chat', 'deep']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k
from openclaw_lab.retrieval.protocol import Retriever, RunDict, check_query, search_batch
from openclaw_lab.text import says_change, sentences

__all__ = ["SlotRecency", "SlotResolved", "Said", "slot_recency", "BASES", "UNITS"]

BASES = ("bm25", "dense", "hybrid")  # the retrievers ``slot_recency`` can wrap
UNITS = ("memory", "sentence")  # what a hit's slot score is read from


@dataclass(frozen=True)
class Said:
    """What the rule reads of a hit: its slot score (cosine to the question), when it was made, who said it,
    and whether the part read says that something changed."""

    slot: float
    at: datetime
    speaker: str | None = None
    changed: bool = True


@dataclass(frozen=True)
class SlotRecency:
    """Let newer hits about the question's slot pass older ones in the top ``window`` (see the module doc).

    ``window``: how many of the best hits are read again (the set of them never changes); ``margin``: how far
    below an older hit's cosine to the question a newer hit may lie and still pass it; ``cue``: a newer hit
    passes only if it says that something changed; ``same_speaker``: only a hit of its own speaker.
    """

    window: int = 10
    margin: float = 0.1
    cue: bool = False
    same_speaker: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.window, bool) or not isinstance(self.window, int) or self.window < 2:
            raise ValueError(f"window: {self.window!r} must be an int >= 2 (the hits read again)")
        if isinstance(self.margin, bool) or not isinstance(self.margin, (int, float)) or not 0 <= self.margin <= 2:
            raise ValueError(f"margin: {self.margin!r} must be a cosine distance in [0, 2]")
        for name in ("cue", "same_speaker"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name}: {getattr(self, name)!r} must be true or false")

    def window_ids(self, hits: Mapping[str, float]) -> list[str]:
        """The best ``window`` hits (ties by id), less any tied in score with the first hit below the window: which
        of tied hits a ranking keeps is its tie-break's choice, and reordering must not change the top's set."""
        ranked = sorted(hits, key=lambda i: (-hits[i], i))
        head = ranked[: self.window]
        if len(ranked) > self.window:
            head = [i for i in head if hits[i] > hits[ranked[self.window]]]
        return head

    def passes(self, newer: Said, older: Said) -> bool:
        """Whether ``newer`` goes above ``older``: made later, about as close to the question, and (as set)
        saying that something changed, by the same speaker."""
        return (newer.at > older.at and newer.slot >= older.slot - self.margin and (newer.changed or not self.cue)
                and (newer.speaker == older.speaker or not self.same_speaker))  # fmt: skip

    def reorder(self, hits: Mapping[str, float], said: Mapping[str, Said]) -> dict[str, float]:
        """``hits`` (id -> score, higher is better) with the window's scores handed out in the new order;
        ``said``: what the rule reads of each hit (at least of ``window_ids``)."""
        order: list[str] = []
        for hit in self.window_ids(hits):  # each goes right above the highest hit it passes, if any
            passes = (n for n, other in enumerate(order) if self.passes(said[hit], said[other]))
            order.insert(next(passes, len(order)), hit)
        out = dict(hits)
        out.update(zip(order, sorted((hits[i] for i in order), reverse=True)))
        return out


class SlotResolved:
    """``base``'s hits, with the top ones reordered by ``rule`` (``SlotRecency``) for each question.

    ``unit = "memory"``: a hit's slot score is its own embedding's cosine to the question (items without one
    are encoded at ``index``); ``"sentence"``: its closest sentence's (each memory's sentences encoded once,
    through the embedder's cache). The question is encoded by ``embedder``; time is each item's ``created_at``,
    the speaker its ``metadata["speaker"]``.
    """

    def __init__(self, base: Retriever, embedder: Any, rule: SlotRecency | None = None, unit: str = "memory") -> None:
        if embedder is None:
            raise ValueError("embedder: slot recency compares the question with the hits; give an embedder")
        if unit not in UNITS:
            raise ValueError(f"unit: {unit!r} is not one of {', '.join(UNITS)}")
        self.base, self.embedder, self.rule, self.unit = base, embedder, rule or SlotRecency(), unit
        self._items: dict[str, MemoryItem] = {}
        self._vectors: dict[str, np.ndarray] = {}
        self._sentences: dict[str, tuple[list[str], np.ndarray]] = {}  # id -> its sentences and their vectors

    def __repr__(self) -> str:
        return f"SlotResolved({self.base!r}, rule={self.rule!r}, unit={self.unit!r})"

    def index(self, items: Sequence[MemoryItem]) -> None:
        items = list(items)
        missing = [item for item in items if item.embedding is None and self.unit == "memory"]
        encoded = _unit(self.embedder.encode([item.content for item in missing])) if missing else []
        fresh = {item.id: vector for item, vector in zip(missing, encoded)}
        for item in items:
            self._items[item.id] = item
            self._sentences.pop(item.id, None)  # a merge may have rewritten it
            if self.unit == "memory":
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
        heads = {qid: self.rule.window_ids(run[qid]) for qid in asked}  # all the rule reads
        if self.unit == "sentence":
            self._read_sentences({i for head in heads.values() for i in head})
        out: RunDict = {qid: {} for qid in queries}
        for qid, vector in zip(asked, vectors):
            hits = run[qid]
            reordered = self.rule.reorder(hits, {i: self._said(i, vector) for i in heads[qid]})
            out[qid] = dict(sorted(reordered.items(), key=lambda pair: (-pair[1], pair[0]))[:k])
        return out

    def _read_sentences(self, ids: set[str]) -> None:
        """Split and encode the sentences of the memories among ``ids`` not read yet, in one batch."""
        new = sorted(i for i in ids if i not in self._sentences)
        split = [sentences(self._items[i].content) for i in new]
        flat = [sentence for parts in split for sentence in parts]
        matrix = _unit(self.embedder.encode(flat, progress=False)) if flat else np.zeros((0, 0), dtype=np.float32)
        start = 0
        for i, parts in zip(new, split):
            self._sentences[i] = (parts, matrix[start : start + len(parts)])
            start += len(parts)

    def _said(self, item_id: str, question: np.ndarray) -> Said:
        item = self._items[item_id]
        if self.unit == "sentence":
            parts, matrix = self._sentences[item_id]
            cosines = matrix @ question
            best = int(cosines.argmax())
            slot, text = float(cosines[best]), parts[best]
        else:
            slot, text = float(self._vectors[item_id] @ question), item.content
        return Said(slot, item.created_at, item.metadata.get("speaker"), says_change(text))


def _unit(vectors: Any) -> np.ndarray:
    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def slot_recency(
    embedder: Any = None, *, base: str = "hybrid", base_params: Mapping[str, Any] | None = None,
    window: int = 10, margin: float = 0.1, unit: str = "memory", cue: bool = False, same_speaker: bool = False,
) -> SlotResolved:
    """The ``slot-recency`` strategy: ``base`` (one of ``BASES``, built with ``base_params``) reordered by
    ``SlotRecency(window, margin, cue, same_speaker)``, slot scores read from each ``unit`` (one of ``UNITS``).
    CombSUM: ``base = "hybrid"``, ``base_params = {method = "wsum"}``.

    >>> slot_recency(object(), base="bm25", window=5).rule
    SlotRecency(window=5, margin=0.1, cue=False, same_speaker=False)
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
    return SlotResolved(retriever, embedder, SlotRecency(window, margin, cue, same_speaker), unit)
