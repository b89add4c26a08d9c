"""Replay in dataset time: a conversation's sessions through a memory stack (``conversation``), a sweep's shared
prefix forked where settings part (``fork``), and the systems that rank what the replay left (``systems``)."""

from openclaw_lab.replay.conversation import (
    ConversationReplay, ReplayPlan, ReplayState, ReplaySteps, memory_units, question_time, replay_conversation,
    unit_texts,
)  # fmt: skip
from openclaw_lab.replay.fork import replay_shared
from openclaw_lab.replay.systems import RetrieverSystem, System, SystemRun, handle_superseded

__all__ = [
    "ConversationReplay", "ReplayPlan", "ReplayState", "ReplaySteps", "memory_units", "question_time",
    "replay_conversation", "unit_texts", "replay_shared", "RetrieverSystem", "System", "SystemRun",
    "handle_superseded",
]  # fmt: skip
