"""The retriever and reranker protocols, and the batch form that yields a ranx-shaped run.

A run is ``dict[query_id, dict[item_id, score]]`` (higher score is better), exactly what
``ranx.Run`` takes, so evaluation, comparison and fusion need no glue. Every retriever has
``search_many``: a fast batch form where it has one, else ``SearchEach``'s loop over ``search``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol, runtime_checkable

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k

__all__ = ["Retriever", "Reranker", "TrainedModel", "SearchEach", "RunDict", "search_batch", "check_query"]

RunDict = dict[str, dict[str, float]]
Filters = Mapping[str, MemoryFilter] | MemoryFilter | None  # one filter per query id, or one for all


@runtime_checkable
class Retriever(Protocol):
    def index(self, items: Sequence[MemoryItem]) -> None:
        """Add items (incrementally; an id seen again replaces the old item)."""

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """At most ``k`` hits passing ``filter``, best first (higher score is better)."""

    def search_many(self, queries: Mapping[str, str], k: int, filters: Filters = None) -> RunDict:
        """``search`` for every query: a run with every query id present, hits in rank order."""


@runtime_checkable
class Reranker(Protocol):
    def rerank(self, query: str, hits: Sequence[Hit], k: int) -> list[Hit]:
        """The best ``k`` of ``hits`` in a new order, with the reranker's scores (higher is better)."""


@runtime_checkable
class TrainedModel(Protocol):
    def check_unseen(self, conversation_ids: Iterable[str]) -> None:
        """Raise if any of ``conversation_ids`` was used to fit this model (it must never score them)."""


class SearchEach:
    """``search_many`` as a loop over ``search``, for retrievers without a faster batch form."""

    def search_many(self, queries: Mapping[str, str], k: int, filters: Filters = None) -> RunDict:
        run: RunDict = {}
        for qid, text in queries.items():
            qfilter = filters.get(qid) if isinstance(filters, Mapping) else filters
            run[qid] = {hit.item.id: hit.score for hit in self.search(text, k, qfilter)}  # type: ignore[attr-defined]
        return run


def check_query(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"query: {query!r} is empty; give a non-empty string")
    return query


def search_batch(retriever: Retriever, queries: Mapping[str, str], k: int, filters: Filters = None) -> RunDict:
    """Search every query; a run with every query id present (empty dict where nothing was found)."""
    return retriever.search_many(queries, check_k(k), filters)
