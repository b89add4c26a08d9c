"""The retriever and reranker protocols, and the batch form that yields a ranx-shaped run.

A run is ``dict[query_id, dict[item_id, score]]`` (higher score is better), exactly what
``ranx.Run`` takes, so evaluation, comparison and fusion need no glue. Every retriever has
``search_many``: a fast batch form where it has one, else ``SearchEach``'s loop over ``search``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k

__all__ = [
    "Retriever", "Reranker", "Candidate", "HitReranker", "TrainedModel", "SearchEach", "RunDict", "SystemRun",
    "ReplayedMemory", "search_batch", "check_query",
]  # fmt: skip

RunDict = dict[str, dict[str, float]]
Filters = Mapping[str, MemoryFilter] | MemoryFilter | None  # one filter per query id, or one for all


class ReplayedMemory(Protocol):
    """What a system reads of one conversation's replay (``replay.ConversationReplay`` is one): the memory
    held when its questions are asked, and when that is."""

    conversation_id: str
    items: list[MemoryItem]
    asked_at: datetime | None


@dataclass(frozen=True)
class SystemRun:
    """What running a system over a replay gives, in one record: its run (the best item ids per question,
    higher score is better), the items it ranked that the replay does not hold (another memory system's own
    memories), what it cost (seconds and counts) and the provenance of the models it fitted."""

    run: RunDict
    items: Mapping[str, MemoryItem] = field(default_factory=dict)
    costs: Mapping[str, float] = field(default_factory=dict)
    models: list[dict[str, Any]] = field(default_factory=list)


@runtime_checkable
class Retriever(Protocol):
    def index(self, items: Sequence[MemoryItem]) -> None:
        """Add items (incrementally; an id seen again replaces the old item)."""

    def search(self, query: str, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """At most ``k`` hits passing ``filter``, best first (higher score is better)."""

    def search_many(self, queries: Mapping[str, str], k: int, filters: Filters = None) -> RunDict:
        """``search`` for every query: a run with every query id present, hits in rank order."""


@dataclass(frozen=True)
class Candidate:
    """A first-stage hit: its fused ``score`` and each source's score and 1-based rank (higher score is better).

    A source that did not return the item has no entry; a source has a score exactly where it has a rank.
    """

    item: MemoryItem
    score: float
    source_scores: Mapping[str, float] = field(default_factory=dict)
    source_ranks: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if set(self.source_scores) != set(self.source_ranks):
            ranked, scored = sorted(self.source_ranks), sorted(self.source_scores)
            raise ValueError(f"source_ranks: sources {ranked} differ from source_scores' {scored}")
        for name, value in self.source_scores.items():
            if not np.isfinite(value):
                raise ValueError(f"source_scores[{name!r}]: {value!r} for item {self.item.id!r} is not finite")
        for name, rank in self.source_ranks.items():
            if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 1:
                raise ValueError(f"source_ranks[{name!r}]: {rank!r} for item {self.item.id!r} is not a rank >= 1")

    @property
    def hit(self) -> Hit:
        return Hit(self.item, self.score)


@runtime_checkable
class Reranker(Protocol):
    def rerank_candidates(self, query: str, candidates: Sequence[Candidate], k: int) -> list[Hit]:
        """The best ``k`` candidates in a new order, with the reranker's scores (higher is better).

        Each candidate carries its first-stage score and, from a fused first stage, each source's
        score and rank; a reranker reads what it needs.
        """


class HitReranker:
    """``rerank_candidates`` for rerankers that read only the items and first-stage scores (``rerank``)."""

    def rerank_candidates(self, query: str, candidates: Sequence[Candidate], k: int) -> list[Hit]:
        return self.rerank(query, [c.hit for c in candidates], k)  # type: ignore[attr-defined]


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
