"""The vector-store protocol that the semantic tier and the dense retriever are handed.

Stores hold whole ``MemoryItem`` objects with their embeddings. ``search`` returns hits with
cosine similarity (higher is better), with the filter applied before the top k is cut.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem

__all__ = ["VectorStore", "AccessCounter"]


@runtime_checkable
class VectorStore(Protocol):
    def upsert(self, items: Sequence[MemoryItem]) -> None:
        """Insert or replace items by id; every item must carry an embedding of the store's dim."""

    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        """The stored items among ``ids``, in the order asked; missing ids are skipped."""

    def delete(self, ids: Sequence[str]) -> None:
        """Remove these ids; unknown ids are ignored."""

    def count(self) -> int: ...

    def search(self, vector: np.ndarray, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """The ``k`` most similar items that pass ``filter``, by cosine similarity descending."""

    def items(self, filter: MemoryFilter | None = None) -> Iterator[MemoryItem]:
        """Every stored item that passes ``filter`` (for consolidation, decay and audits)."""


@runtime_checkable
class AccessCounter(Protocol):
    def record_access(self, ids: Sequence[str], now: datetime) -> None:
        """Count one access of each id at ``now`` atomically (no write-back of a cached copy)."""
