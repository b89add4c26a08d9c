"""A system under evaluation: anything that turns a replay's memory into a ranked run per question.

``RetrieverSystem`` builds a fresh retriever per conversation, on that conversation's memory, with
its clock at the replay's question time; ``CrossFittedReranker`` (``crossfit.py``) fits a model
fold by fold over all conversations. The harness treats them alike.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from openclaw_lab.clock import Clock, SimulatedClock
from openclaw_lab.datasets.types import Question
from openclaw_lab.harness.replay import ConversationReplay
from openclaw_lab.retrieval.protocol import Retriever, RunDict, TrainedModel, search_batch

__all__ = ["System", "RetrieverSystem"]

Models = list[dict[str, Any]]  # provenance of whatever a system fitted (empty when nothing was)


class System(Protocol):
    def run(
        self, replays: Sequence[ConversationReplay], questions: Mapping[str, list[Question]], depth: int
    ) -> tuple[RunDict, Models]:
        """The best ``depth`` item ids per question (higher score is better), and the fitted models' provenance."""


class RetrieverSystem:
    """``make(clock)`` → a fresh retriever, indexed on each conversation's memory and searched at question time."""

    def __init__(self, make: Callable[[Clock], Retriever]) -> None:
        self.make = make

    def run(
        self, replays: Sequence[ConversationReplay], questions: Mapping[str, list[Question]], depth: int
    ) -> tuple[RunDict, Models]:
        run: RunDict = {}
        for replay in replays:
            asked = questions.get(replay.conversation_id, [])
            if not asked:
                continue
            retriever = self.make(SimulatedClock(replay.asked_at))
            if isinstance(retriever, TrainedModel):  # a fitted model must never score what it was fitted on
                retriever.check_unseen([replay.conversation_id])
            retriever.index(replay.items)
            run |= search_batch(retriever, {q.id: q.text for q in asked}, depth)
        return run, []
