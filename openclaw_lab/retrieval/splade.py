"""Learned sparse retrieval: the dot product of SPLADE vectors (see ``openclaw_lab.splade``).

Where BM25 matches the words a memory uses, SPLADE also weighs the words it implies, and it weighs a
query's words by what they mean to a search rather than by their rarity alone. Over the candidates of the
other first stages it finds evidence they miss, which makes it a strong extra source for the learned
reranker (``first_stage_sources``). Registered as the strategy ``splade``.

>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> splade = SpladeRetriever()
>>> splade.index([MemoryItem.new(text, now=datetime(2023, 5, 8), id=str(i))
...               for i, text in enumerate(["I adopted a puppy", "We went hiking", "The dog chewed my shoes"])])
>>> [hit.item.id for hit in splade.search("my new puppy", k=2)]
['0', '2']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import sparse

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k
from openclaw_lab.retrieval.protocol import Filters, RunDict, check_query

__all__ = ["SpladeRetriever"]


class SpladeRetriever:
    """Scores are SPLADE dot products (higher is better); only items sharing a weighted word are hits.

    ``encoder`` is a ``SpladeEncoder`` (default: the packaged SPLADE-tiny with the default cache); items
    are encoded in one batch per ``index`` call, queries in one batch per ``search_many``.
    """

    def __init__(self, encoder: Any = None) -> None:
        if encoder is None:
            from openclaw_lab.splade import default_splade_path

            default_splade_path()  # a missing extra fails here, where the strategy is named (before any replay)
        self.encoder = encoder
        self._items: dict[str, MemoryItem] = {}
        self._vectors: dict[str, sparse.csr_matrix] = {}
        self._stale = True
        self._ids: list[str] = []
        self._matrix: sparse.csr_matrix | None = None
        self._id_rank = np.zeros(0, dtype=np.int64)

    def __repr__(self) -> str:
        return f"SpladeRetriever(encoder={self.encoder!r})"

    @property
    def sparse_encoder(self) -> Any:
        if self.encoder is None:
            from openclaw_lab.splade import SpladeEncoder

            self.encoder = SpladeEncoder()
        return self.encoder

    def count(self) -> int:
        return len(self._items)

    def index(self, items: Sequence[MemoryItem]) -> None:
        """Add or replace items by id (encoded now; the search matrix is rebuilt at the next search)."""
        items = list(items)
        for i, item in enumerate(items):
            if not isinstance(item, MemoryItem):
                raise ValueError(f"items[{i}]: {item!r} is not a MemoryItem")
        if not items:
            return
        vectors = self.sparse_encoder.encode([item.content for item in items])
        for row, item in enumerate(items):
            self._items[item.id], self._vectors[item.id] = item, vectors[row]
        self._stale = True

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """At most ``k`` items that share a weighted word with ``query`` and pass ``filter``, best first."""
        return self._search_many({"q": check_query(query)}, check_k(k), filter)["q"]

    def search_many(self, queries: Mapping[str, str], k: int, filters: Filters = None) -> RunDict:
        """A ranx-shaped run (every query id present), the queries encoded in one batch."""
        hits = self._search_many({qid: check_query(text) for qid, text in queries.items()}, check_k(k), filters)
        return {qid: {hit.item.id: hit.score for hit in found} for qid, found in hits.items()}

    def _search_many(self, queries: Mapping[str, str], k: int, filters: Filters) -> dict[str, list[Hit]]:
        if not self._items:
            return {qid: [] for qid in queries}
        self._build()
        scores = (self._matrix @ self.sparse_encoder.encode(list(queries.values())).T).toarray()
        out = {}
        for column, qid in enumerate(queries):
            qfilter = filters.get(qid) if isinstance(filters, Mapping) else filters
            out[qid] = self._best(scores[:, column], k, qfilter)
        return out

    def _best(self, scores: np.ndarray, k: int, filter: MemoryFilter | None) -> list[Hit]:
        """Walk the rows with a positive score in ``sorted_hits``'s order (score, then id), keeping ``k``."""
        rows = np.flatnonzero(scores > 0)
        hits = []
        for row in rows[np.lexsort((self._id_rank[rows], -scores[rows]))]:
            item = self._items[self._ids[row]]
            if filter is None or filter.matches(item):
                hits.append(Hit(item, float(scores[row])))
                if len(hits) == k:
                    break
        return hits

    def _build(self) -> None:
        if not self._stale:
            return
        self._ids = list(self._items)
        self._matrix = sparse.vstack([self._vectors[i] for i in self._ids], format="csr")
        self._id_rank = np.empty(len(self._ids), dtype=np.int64)  # each row's place in id order, for ties
        self._id_rank[sorted(range(len(self._ids)), key=self._ids.__getitem__)] = np.arange(len(self._ids))
        self._stale = False
