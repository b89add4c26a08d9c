"""Dense retrieval: cosine similarity of embeddings, through any VectorStore.

The default store is the exact numpy ``ExactStore`` (the reference, and the fast path for small
collections); hand in another store (``ChromaStore(path)``, the semantic tier's store) to search
through it. The store applies the filter before it cuts the top k.

>>> import numpy as np
>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> class TwoWords:  # a stand-in embedder: "cat" and "dog" axes
...     def encode(self, texts):
...         return np.array([[t.count("cat") + 0.1, t.count("dog") + 0.1] for t in texts], dtype=np.float32)
>>> dense = DenseRetriever(TwoWords())
>>> dense.index([MemoryItem.new(t, now=datetime(2023, 5, 8), id=t) for t in ["cat cat", "dog"]])
>>> [hit.item.id for hit in dense.search("a dog", k=1)]
['dog']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k
from openclaw_lab.retrieval.protocol import RunDict, check_query
from openclaw_lab.stores.protocol import VectorStore

__all__ = ["DenseRetriever"]


class DenseRetriever:
    """Embedding search; scores are cosine similarities (higher is better).

    Items keep their own embedding when they carry one; the others are encoded by ``embedder``
    (default: the packaged all-MiniLM-L6-v2, loaded on first use) in one batch per ``index`` call.
    """

    def __init__(self, embedder: Any = None, *, store: VectorStore | None = None) -> None:
        self.embedder = embedder
        self.store = store

    def __repr__(self) -> str:
        return f"DenseRetriever(embedder={self.embedder!r}, store={self.store!r})"

    @property
    def vector_store(self) -> VectorStore:
        if self.store is None:
            from openclaw_lab.stores.exact import ExactStore

            self.store = ExactStore()
        return self.store

    @property
    def encoder(self) -> Any:
        if self.embedder is None:
            from openclaw_lab.embedding import Embedder

            self.embedder = Embedder()
        return self.embedder

    def count(self) -> int:
        return self.vector_store.count()

    def index(self, items: Sequence[MemoryItem]) -> None:
        """Embed the items that lack an embedding (one encode call) and upsert them all."""
        items = list(items)
        for i, item in enumerate(items):
            if not isinstance(item, MemoryItem):
                raise ValueError(f"items[{i}]: {item!r} is not a MemoryItem")
        missing = [i for i, item in enumerate(items) if item.embedding is None]
        if missing:
            vectors = self._encode([items[i].content for i in missing])
            for i, vector in zip(missing, vectors):
                items[i] = items[i].replace(embedding=vector)
        if items:
            self.vector_store.upsert(items)

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """The ``k`` items most similar to ``query`` that pass ``filter``, by cosine descending."""
        query, k = check_query(query), check_k(k)
        if self.count() == 0:
            return []  # no model load for an empty index
        return self.vector_store.search(self._encode([query])[0], k, filter)

    def search_many(
        self,
        queries: Mapping[str, str],
        k: int,
        filters: Mapping[str, MemoryFilter] | MemoryFilter | None = None,
    ) -> RunDict:
        """A ranx-shaped run for many queries, encoded in one batch (every query id present).

        >>> DenseRetriever(store=None).search_many({"q1": "anything"}, k=3)
        {'q1': {}}
        """
        k = check_k(k)
        texts = [check_query(text) for text in queries.values()]
        if self.count() == 0:
            return {qid: {} for qid in queries}
        vectors = self._encode(texts)
        run: RunDict = {}
        for (qid, _), vector in zip(queries.items(), vectors):
            qfilter = filters.get(qid) if isinstance(filters, Mapping) else filters
            run[qid] = {hit.item.id: hit.score for hit in self.vector_store.search(vector, k, qfilter)}
        return run

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self.encoder.encode(texts), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(f"embedder: returned shape {vectors.shape} for {len(texts)} texts; expected (n, dim)")
        return vectors
