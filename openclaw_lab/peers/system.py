"""Another memory system on the same replay as ours: ``PeerSystem`` adapts any ``MemorySystem``.

It receives every conversation that has questions, session by session in dataset order, each turn
stamped with the replay's dataset time (the session's start, advancing per turn), then answers
every question at the replay's question time. The memories it returns become items that map back to
their source turns, so metrics, comparison, reports and the gate treat it like our own systems.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path

from tqdm.auto import tqdm

from openclaw_lab.datasets.types import Conversation, Question
from openclaw_lab.replay.conversation import ConversationReplay, render_turn
from openclaw_lab.replay.systems import SystemRun
from openclaw_lab.model import MemoryItem
from openclaw_lab.peers.protocol import MemorySystem, Observation, Recalled
from openclaw_lab.retrieval.protocol import RunDict

__all__ = ["PeerSystem", "observations"]


def observations(conversation: Conversation, turn_seconds: float) -> list[list[Observation]]:
    """A conversation's turns as a memory system receives them: per session, in order, in dataset time."""
    step = timedelta(seconds=turn_seconds)
    return [
        [Observation(t.id, render_turn(t.speaker, t.text, t.caption), t.speaker, s.id, s.started_at + i * step)
         for i, t in enumerate(s.turns)]
        for s in sorted(conversation.sessions, key=lambda s: s.started_at)
    ]  # fmt: skip


class PeerSystem:
    """``open(folder)`` → a fresh ``MemorySystem`` holding every conversation (one user each) for one run; its
    run's record holds the memories it returned (as items) and its ingest and query time."""

    def __init__(self, open: Callable[[Path], MemorySystem], turn_seconds: float = 30.0) -> None:
        self.open = open
        self.turn_seconds = turn_seconds

    def run(
        self, replays: Sequence[ConversationReplay], questions: Mapping[str, list[Question]], depth: int
    ) -> SystemRun:
        run: RunDict = {}
        items: dict[str, MemoryItem] = {}
        ingest, search, turns, queries = 0.0, 0.0, 0, 0
        with tempfile.TemporaryDirectory(prefix="openclaw-peer-") as folder:
            memory = self.open(Path(folder))
            try:
                # one bar for this long stage (an add() per turn); tqdm hides it when the output is not a terminal
                for replay in tqdm(replays, desc="ingest and ask", unit="conversation", leave=False, disable=None):
                    asked = questions.get(replay.conversation_id, [])
                    if not asked:
                        continue
                    if replay.conversation is None:
                        raise ValueError(f"replays: {replay.conversation_id!r} does not carry its conversation")
                    conversation, started = replay.conversation, time.perf_counter()
                    for session in observations(conversation, self.turn_seconds):
                        memory.add(conversation.id, session)
                        turns += len(session)
                    ingest += time.perf_counter() - started
                    sessions = {t.id: s.id for s in conversation.sessions for t in s.turns}
                    for question in asked:
                        started = time.perf_counter()
                        hits = memory.search(conversation.id, question.text, depth, replay.asked_at)
                        search += time.perf_counter() - started
                        queries += 1
                        run[question.id] = _ranked(conversation.id, hits, sessions, replay, items)
            finally:
                memory.close()
        costs = {"ingest_seconds": ingest, "turns": turns, "query_seconds": search, "queries": queries}
        return SystemRun(run, items=items, costs=costs)


def _ranked(cid: str, hits: list[Recalled], sessions: Mapping[str, str], replay: ConversationReplay,
            items: dict[str, MemoryItem]) -> dict[str, float]:  # fmt: skip
    """A question's hits as a run, each recalled memory added to ``items`` as an item of its source turns."""
    ranked = {}
    for hit in hits:
        item_id = f"{cid}|peer|{hit.id}"
        known = tuple(t for t in hit.source_ids if t in sessions)
        items[item_id] = MemoryItem.new(
            hit.content.strip() or "(empty memory)", now=replay.asked_at, id=item_id, source_ids=known,
            session_id=sessions[known[0]] if known else "", source="peer",
        )  # fmt: skip
        ranked[item_id] = hit.score
    return ranked
