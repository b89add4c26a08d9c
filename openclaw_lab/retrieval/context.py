"""Context along a session: an item's score gains a share of its best neighbour's score.

A turn often means something only beside its neighbours: "Yes, last Saturday!" answers the turn
before it, and the evidence of a question is often that short reply. ``NeighbourContext`` reranks
another retriever's candidates by ``score + weight · max(score of the neighbours)``, where the
neighbours are the memories stored just before and after it in the same session (``window`` on each
side, in time order). Copies of one memory (an episodic item and its semantic copy, which keep its
session and time) share one place in the session, so a copy is never its own neighbour. No rule here
knows a dataset: only ``session_id`` and ``created_at``, which every memory has.

>>> from datetime import datetime, timedelta
>>> from openclaw_lab.model import MemoryItem
>>> class Fixed:  # a first stage with set scores
...     def index(self, items): self.items = items
...     def search(self, query, k, filter=None): return [Hit(i, s) for i, s in zip(self.items, (0.9, 0.6, 0.2))]
>>> texts = ["Did you go to the pottery class?", "Yes, last Saturday!", "The weather was nice"]
>>> t0 = datetime(2023, 5, 8)
>>> items = [MemoryItem.new(t, now=t0 + timedelta(minutes=n), id=f"t{n}", session_id="s") for n, t in enumerate(texts)]
>>> retriever = NeighbourContext(Fixed(), weight=0.5)
>>> retriever.index(items)
>>> [(hit.item.id, round(hit.score, 2)) for hit in retriever.search("When was the pottery class?", 3)]
[('t0', 1.2), ('t1', 1.05), ('t2', 0.5)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k, sorted_hits
from openclaw_lab.retrieval.protocol import Filters, Retriever, RunDict, check_query, search_batch

__all__ = ["NeighbourContext", "hybrid_context"]


class NeighbourContext:
    """``base``'s best ``candidates`` rescored with their session neighbours' scores (higher is better).

    ``weight`` ≥ 0 is the share of the best neighbour's score; ``window`` ≥ 1 the neighbours on each side.
    A neighbour counts only when ``base`` returned it among the candidates, so keep ``candidates`` above a
    conversation's memory count (the default, 1,000) for neighbours to count everywhere.
    """

    def __init__(self, base: Retriever, *, weight: float = 0.5, window: int = 1, candidates: int = 1000) -> None:
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight < float("inf"):
            raise ValueError(f"weight: {weight!r} must be a number >= 0")
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise ValueError(f"window: {window!r} must be an integer >= 1")
        self.base, self.weight, self.window = base, float(weight), window
        self.candidates = check_k(candidates, "candidates")
        self._items: dict[str, MemoryItem] = {}
        self._place: dict[str, tuple[str, int]] = {}  # item id -> (session, its place in the session's time order)

    def __repr__(self) -> str:
        return (f"NeighbourContext({self.base!r}, weight={self.weight}, window={self.window}, "
                f"candidates={self.candidates})")

    def index(self, items: Sequence[MemoryItem]) -> None:
        items = list(items)
        self.base.index(items)
        self._items |= {item.id: item for item in items}
        times: dict[str, set] = {}
        for item in self._items.values():
            times.setdefault(item.session_id, set()).add(item.created_at)
        order = {session: {t: n for n, t in enumerate(sorted(found))} for session, found in times.items()}
        self._place = {i: (item.session_id, order[item.session_id][item.created_at]) for i, item in self._items.items()}

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        query, k = check_query(query), check_k(k)
        hits = self.base.search(query, max(self.candidates, k), filter)
        scores = self._with_context({hit.item.id: hit.score for hit in hits})
        return sorted_hits((Hit(hit.item, scores[hit.item.id]) for hit in hits), k)

    def search_many(self, queries: Mapping[str, str], k: int, filters: Filters = None) -> RunDict:
        k = check_k(k)
        run = search_batch(self.base, queries, max(self.candidates, k), filters)
        out: RunDict = {}
        for qid in queries:
            scores = self._with_context(run.get(qid, {}))
            out[qid] = dict(sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k])
        return out

    def _with_context(self, scores: Mapping[str, float]) -> dict[str, float]:
        best: dict[tuple[str, int], float] = {}  # a place's best score, over the copies held there
        for item_id, score in scores.items():
            place = self._place[item_id]
            best[place] = max(score, best.get(place, score))
        out = {}
        for item_id, score in scores.items():
            session, n = self._place[item_id]
            near = [best[(session, n + step)] for step in range(-self.window, self.window + 1)
                    if step and (session, n + step) in best]  # fmt: skip
            out[item_id] = score + self.weight * max(near) if near else score
        return out


def hybrid_context(
    embedder: Any = None,
    *,
    store: Any = None,
    weight: float = 0.5,
    window: int = 1,
    candidates: int = 1000,
    weights: Sequence[float] | None = None,
    bm25: Mapping[str, Any] | None = None,
    lexical: str = "bm25",
) -> NeighbourContext:
    """The ``hybrid-context`` strategy: dense + BM25 (or SPLADE: ``lexical``, see ``hybrid``) fused by CombSUM of
    min-max scores, every candidate of a conversation kept, then each memory rescored with its session
    neighbours (``NeighbourContext``)."""
    from openclaw_lab.retrieval.fusion import hybrid

    base = hybrid(embedder, store=store, bm25=bm25, method="wsum", weights=weights, candidates=candidates,
                  norm="min-max", lexical=lexical)
    return NeighbourContext(base, weight=weight, window=window, candidates=candidates)
