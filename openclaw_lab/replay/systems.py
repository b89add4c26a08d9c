"""A system under evaluation: anything that turns a replay's memory into a ranked run per question.

``RetrieverSystem`` builds a fresh retriever per conversation, on that conversation's memory, with
its clock at the replay's question time; ``CrossFittedReranker`` (``retrieval/crossfit.py``) fits a model
fold by fold over all conversations; ``PeerSystem`` (``peers/system.py``) replays the conversations into
another memory system. Each returns one ``SystemRun``, and the harness treats them alike.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from openclaw_lab.clock import Clock, SimulatedClock
from openclaw_lab.consolidation.supersession import SUPERSEDED_BY, VALID_UNTIL
from openclaw_lab.datasets.types import Question
from openclaw_lab.replay.conversation import ConversationReplay
from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.protocol import Retriever, RunDict, SystemRun, TrainedModel, search_batch

__all__ = ["System", "SystemRun", "RetrieverSystem", "handle_superseded"]

class System(Protocol):
    def run(
        self, replays: Sequence[ConversationReplay], questions: Mapping[str, list[Question]], depth: int
    ) -> SystemRun:
        """The best ``depth`` item ids per question, with the items, costs and models behind them."""


def _no_longer_valid(item: MemoryItem) -> bool:
    return SUPERSEDED_BY in item.metadata or VALID_UNTIL in item.metadata


def handle_superseded(run: RunDict, items: Mapping[str, MemoryItem], mode: str) -> RunDict:
    """A run with memories no longer valid (marked ``superseded_by`` or ``valid_until``: replaced or expired)
    kept as ranked, demoted below every other hit, or filtered out. ``below-successor`` moves a replaced memory
    just below the memory that replaced it when that one is among the hits (and never up), and leaves it where
    it was otherwise: the stale fact never outranks the current one, and a memory marked by mistake keeps its
    rank wherever its supposed replacement is not found; expired memories, which nothing replaced, are demoted.

    >>> from datetime import datetime
    >>> old = MemoryItem.new("x", now=datetime(2023, 1, 1), id="old", metadata={"superseded_by": "new"})
    >>> new = MemoryItem.new("y", now=datetime(2023, 2, 1), id="new")
    >>> run, items = {"q": {"old": 0.9, "new": 0.5}}, {"old": old, "new": new}
    >>> demoted = handle_superseded(run, items, "demote")["q"]  # old: 0.9 - (0.9 - 0.5 + 1) = -0.5
    >>> sorted(demoted, key=demoted.get, reverse=True), round(demoted["old"], 6)
    (['new', 'old'], -0.5)
    >>> handle_superseded(run, items, "filter")
    {'q': {'new': 0.5}}
    >>> handle_superseded({"q": {"old": 0.9, "new": 0.5, "other": 0.4}}, items | {"other": new}, "below-successor")
    {'q': {'new': 0.5, 'other': 0.4, 'old': 0.49999999999999994}}
    """
    if mode == "keep":
        return run
    out: RunDict = {}
    for qid, hits in run.items():
        current = {i: s for i, s in hits.items() if not _no_longer_valid(items[i])}
        stale = {i: s for i, s in hits.items() if i not in current}
        if mode == "below-successor":
            valid = dict(current)
            for i, s in stale.items():
                successor = _current_successor(i, items, hits)
                if successor in valid:
                    current[i] = min(s, math.nextafter(valid[successor], -math.inf))
                elif successor is not None:  # replaced by a memory this query did not find: left where it was
                    current[i] = s
            stale = {i: s for i, s in stale.items() if i not in current}
        if mode in ("demote", "below-successor") and stale:  # below the lowest current score, in their order
            floor = min(current.values(), default=0.0) - max(stale.values()) - 1.0
            current |= {i: s + floor for i, s in stale.items()}
        out[qid] = current
    return out


def _current_successor(item_id: str, items: Mapping[str, MemoryItem], hits: Mapping[str, float]) -> str | None:
    """What replaced ``item_id``, followed along the hits while that too was replaced; None: nothing replaced it."""
    successor, seen = items[item_id].metadata.get(SUPERSEDED_BY), {item_id}
    while successor in hits and successor not in seen and SUPERSEDED_BY in items[successor].metadata:
        seen.add(successor)
        successor = items[successor].metadata[SUPERSEDED_BY]
    return successor


class RetrieverSystem:
    """``make(clock)`` → a fresh retriever, indexed on each conversation's memory and searched at question time."""

    def __init__(self, make: Callable[[Clock], Retriever]) -> None:
        self.make = make

    def run(
        self, replays: Sequence[ConversationReplay], questions: Mapping[str, list[Question]], depth: int
    ) -> SystemRun:
        run: RunDict = {}
        costs = {"index_seconds": 0.0, "query_seconds": 0.0}
        for replay in replays:
            asked = questions.get(replay.conversation_id, [])
            if not asked:
                continue
            retriever = self.make(SimulatedClock(replay.asked_at))
            if isinstance(retriever, TrainedModel):  # a fitted model must never score what it was fitted on
                retriever.check_unseen([replay.conversation_id])
            started = time.perf_counter()
            retriever.index(replay.items)
            indexed = time.perf_counter()
            run |= search_batch(retriever, {q.id: q.text for q in asked}, depth)
            costs["index_seconds"] += indexed - started
            costs["query_seconds"] += time.perf_counter() - indexed
        return SystemRun(run, costs=costs)
