"""Semantic memory: long-term items in a vector store that is handed in (never picked by name).

>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> from openclaw_lab.stores.exact import ExactStore
>>> memory = SemanticMemory(ExactStore())
>>> memory.upsert([MemoryItem.new("Ana lives in Porto", now=datetime(2023, 5, 8), id="s1", embedding=[1.0, 0.0])])
>>> memory.get(["s1"])[0].tier.value
'semantic'

Promotion from episodic memory (``sem_<id>`` copies with provenance) is ``consolidation.promote``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, MemoryTier
from openclaw_lab.stores.protocol import AccessCounter, VectorStore

__all__ = ["SemanticMemory"]

class SemanticMemory:
    """A VectorStore whose items are all of the semantic tier."""

    def __init__(self, store: VectorStore) -> None:
        self.store = store

    @property
    def embedding_model(self) -> str | None:
        return getattr(self.store, "embedding_model", None)

    def close(self) -> None:
        getattr(self.store, "close", lambda: None)()

    def upsert(self, items: Sequence[MemoryItem]) -> None:
        self.store.upsert([item if item.tier is MemoryTier.SEMANTIC else item.replace(tier=MemoryTier.SEMANTIC)
                           for item in items])  # fmt: skip

    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        return self.store.get(ids)

    def delete(self, ids: Sequence[str]) -> None:
        self.store.delete(ids)

    def count(self) -> int:
        return self.store.count()

    def exists(self, item_id: str) -> bool:
        return bool(self.store.get([item_id]))

    def search(self, vector: np.ndarray, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """Most similar items (cosine similarity, higher is better) that pass ``filter``."""
        return self.store.search(vector, k, filter)

    def items(self, filter: MemoryFilter | None = None) -> Iterator[MemoryItem]:
        return self.store.items(filter)

    def record_access(self, ids: Sequence[str], now: datetime) -> None:
        """One access of each id: atomic where the store counts (``AccessCounter``), else read, count, write."""
        if isinstance(self.store, AccessCounter):
            self.store.record_access(ids, now)
        else:
            self.store.upsert([item.accessed(now) for item in self.store.get(ids)])
