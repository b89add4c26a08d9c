"""The retriever and reranker protocols, and the batch form that yields a ranx-shaped run.

A run is ``dict[query_id, dict[item_id, score]]`` (higher score is better), exactly what
``ranx.Run`` takes, so evaluation, comparison and fusion need no glue.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k

__all__ = ["Retriever", "Reranker", "RunDict", "search_batch", "check_query"]

RunDict = dict[str, dict[str, float]]


@runtime_checkable
class Retriever(Protocol):
    def index(self, items: Sequence[MemoryItem]) -> None:
        """Add items (incrementally; an id seen again replaces the old item)."""

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """At most ``k`` hits passing ``filter``, best first (higher score is better)."""


@runtime_checkable
class Reranker(Protocol):
    def rerank(self, query: str, hits: Sequence[Hit], k: int) -> list[Hit]:
        """The best ``k`` of ``hits`` in a new order, with the reranker's scores (higher is better)."""


def check_query(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise ValueError(f"query: {query!r} is empty; give a non-empty string")
    return query


def search_batch(
    retriever: Retriever,
    queries: Mapping[str, str],
    k: int,
    filters: Mapping[str, MemoryFilter] | MemoryFilter | None = None,
) -> RunDict:
    """Search every query; a run with every query id present (empty dict where nothing was found).

    Retrievers may offer a faster ``search_many(queries, k, filters)`` with the same result.
    """
    k = check_k(k)
    if hasattr(retriever, "search_many"):
        return retriever.search_many(queries, k, filters)
    run: RunDict = {}
    for qid, text in queries.items():
        qfilter = filters.get(qid) if isinstance(filters, Mapping) else filters
        run[qid] = {hit.item.id: hit.score for hit in retriever.search(text, k, qfilter)}
    return run
