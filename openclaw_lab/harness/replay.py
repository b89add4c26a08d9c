"""Replay a conversation through a memory stack in the dataset's own time.

Sessions arrive in order with the simulated clock at each session's date, advancing per turn;
each memory unit (a turn, or a round of two turns) becomes an episodic item carrying its turn ids.
Optionally each incoming turn first retrieves as an agent would (the accesses consolidation
reads). Consolidation and decay run on a schedule in dataset time; questions are asked after the
last session, at their own time. All units of a conversation are embedded in one batch (cached).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from openclaw_lab.agent.remember import RememberPolicy
from openclaw_lab.clock import SimulatedClock
from openclaw_lab.consolidation import (
    SUPERSEDED_BY, VALID_UNTIL, ConsolidationPolicy, ConsolidationScheduler, Expiry, PrunePolicy, SessionSummaries,
    SupersessionRule, consolidation_job, semantic_id,
)  # fmt: skip
from openclaw_lab.datasets.types import Conversation, Question, Session
from openclaw_lab.embedding import Embedder
from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import MemoryItem
from openclaw_lab.stores.protocol import VectorStore
from openclaw_lab.tiers.episodic import EpisodicMemory
from openclaw_lab.tiers.semantic import SemanticMemory

__all__ = [
    "ConversationReplay", "ConsolidationPlan", "ReplayPlan", "memory_units", "unit_texts", "question_time",
    "replay_conversation",
]  # fmt: skip


@dataclass
class ConversationReplay:
    """What a replay leaves: the items held at question time, and how memory evolved."""

    conversation_id: str
    items: list[MemoryItem]
    units_seen: int
    footprint: list[dict[str, Any]] = field(default_factory=list)  # one row per session, and at question time
    consolidations: list[dict[str, Any]] = field(default_factory=list)
    promoted_turn_ids: set[str] = field(default_factory=set)
    admitted: dict[str, bool] = field(default_factory=dict)  # turn id -> admitted by the admission policy
    asked_at: datetime | None = None  # the question time: every stage that ranks or scores reads it here
    conversation: Conversation | None = None  # what was replayed (another memory system replays it too)


def render_turn(speaker: str, text: str, caption: str = "") -> str:
    """A turn as memory content: the speaker, the text and any image caption."""
    shown = f"{speaker}: {text}".strip()
    return f"{shown} [image: {caption}]" if caption else shown


def memory_units(session: Session, unit: str, conversation_id: str) -> list[dict[str, Any]]:
    """The records (content, source ids, metadata) of a session's memory units.

    ``turn``: one item a turn; ``round``: two turns; ``session``: the whole session; ``user-session``:
    the session's user turns joined by spaces (LongMemEval's official retrieval key for a session).
    """
    turns = list(session.turns)
    if unit == "user-session":
        turns = [t for t in turns if t.speaker == "user"]
    if unit in ("session", "user-session"):
        groups = [turns] if turns else []
    else:
        groups = [turns[i : i + 2] for i in range(0, len(turns), 2)] if unit == "round" else [[t] for t in turns]
    join = (lambda group: " ".join(t.text for t in group)) if unit == "user-session" else (
        lambda group: "\n".join(render_turn(t.speaker, t.text, t.caption) for t in group))  # fmt: skip
    return [
        {
            "id": f"{conversation_id}|{group[0].id}",
            "content": join(group),
            "session_id": session.id,
            "source_ids": [t.id for t in group],
            "metadata": {"speaker": group[0].speaker, "session": session.id},
        }
        for group in groups
    ]


@dataclass(frozen=True)
class ConsolidationPlan:
    """How consolidation runs during a replay: objects, built from the config by ``harness.build``."""

    policy: ConsolidationPolicy
    prune: PrunePolicy  # semantic items
    prune_episodic: PrunePolicy | None = None  # None: episodic items are never pruned
    merge_threshold: float | None = 0.95
    interval: timedelta | None = None  # None: the scheduler's default
    supersession: SupersessionRule | None = None  # marks replaced memories before each run
    expiry: Expiry | None = None  # marks plans whose dates have passed before each run
    summaries: SessionSummaries | None = None  # writes a semantic summary of each finished session before each run

    def scheduler(self, memory: MemoryManager, clock: SimulatedClock) -> ConsolidationScheduler:
        job = consolidation_job(memory.episodic, memory.semantic, policy=self.policy, prune=self.prune,
                                prune_episodic=self.prune_episodic, merge_threshold=self.merge_threshold,
                                log=memory.episodic)  # fmt: skip
        markers, own_dates = [], []
        if self.supersession is not None:
            markers.append(lambda items, now: self.supersession.marks(items))  # type: ignore[union-attr]
        if self.expiry is not None:  # a date in a text expires any memory holding it: summaries too
            markers.append(self.expiry.marks)
            own_dates.append(self.expiry.marks)
        if markers:
            job = _marking(markers, own_dates, memory, job)
        if self.summaries is not None:
            job = _summarising(self.summaries, memory, job)
        timing = {"interval": self.interval} if self.interval is not None else {}
        return ConsolidationScheduler(job, clock, raise_errors=True, **timing)


Marker = Callable[[list[MemoryItem], datetime], list[MemoryItem]]


def _marking(markers: Sequence[Marker], semantic_markers: Sequence[Marker], memory: MemoryManager,
             job: Callable[[datetime], Any]) -> Callable:  # fmt: skip
    """``job`` preceded by marking episodic items no longer valid (replaced, expired) and the semantic
    copies they already have; ``semantic_markers`` also read semantic memory's own items (summaries)."""

    def run(now: datetime) -> Any:
        for marker in semantic_markers:
            if marks := marker(list(memory.semantic.items()), now):
                memory.semantic.upsert(marks)
        for marker in markers:
            marks = marker(list(memory.episodic.items()), now)
            if not marks:
                continue
            memory.episodic.upsert(marks)
            by_copy = {semantic_id(item.id): item for item in marks}
            copies = memory.semantic.get(list(by_copy))
            memory.semantic.upsert([copy.replace(metadata={**copy.metadata, **_validity(by_copy[copy.id])}) for copy in copies])
        return job(now)

    return run


def _summarising(summaries: SessionSummaries, memory: MemoryManager, job: Callable[[datetime], Any]) -> Callable:
    """``job`` preceded by summarising the sessions that have finished, each once (a pruned summary stays gone),
    so that the same run's marking and consolidation see the new summaries."""
    done: set[str] = set()

    def run(now: datetime) -> Any:
        written = summaries.summaries(list(memory.episodic.items()), now, frozenset(done))
        if written:
            vectors = memory.embedder.encode([item.content for item in written], progress=False)
            memory.semantic.upsert([item.replace(embedding=vector) for item, vector in zip(written, vectors)])
            done.update(item.id for item in written)
        return job(now)

    return run


def _validity(item: MemoryItem) -> dict[str, Any]:
    return {key: item.metadata[key] for key in (SUPERSEDED_BY, VALID_UNTIL) if key in item.metadata}


@dataclass(frozen=True)
class ReplayPlan:
    """What a replay builds for each conversation: its store, its memory units, consolidation, admission."""

    new_store: Callable[[Path | None], VectorStore]  # a fresh semantic store (a folder, or in memory)
    unit: str = "turn"
    turn_seconds: float = 30.0
    simulate_access: bool = True
    access_k: int = 3
    persist: bool = False
    consolidation: ConsolidationPlan | None = None
    admission: RememberPolicy | None = None  # only the units it admits are stored at all

    def open_memory(self, embedder: Embedder, clock: SimulatedClock, workdir: Path, cid: str) -> MemoryManager:
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in cid)
        store = self.new_store(workdir / f"{safe}-semantic" if self.persist else None)
        episodic = EpisodicMemory(workdir / f"{safe}-episodic.sqlite")
        return MemoryManager(embedder=embedder, episodic=episodic, semantic=SemanticMemory(store), clock=clock, user_id=cid)


def unit_texts(conversation: Conversation, unit: str) -> list[str]:
    """The contents of a conversation's memory units in replay order: what the replay embeds, in one batch."""
    sessions = sorted(conversation.sessions, key=lambda s: s.started_at)
    return [record["content"] for s in sessions for record in memory_units(s, unit, conversation.id)]


def question_time(questions: Sequence[Question], replayed_until: datetime) -> datetime:
    """The one time at which a conversation's questions are answered: the latest question's time, never
    before the end of the replay (the clock cannot run back). Every stage reads it from the replay."""
    return max([replayed_until, *(q.asked_at for q in questions)])


def replay_conversation(
    conversation: Conversation,
    questions: list[Question],
    plan: ReplayPlan,
    embedder: Embedder,
    workdir: str | Path | None = None,
) -> ConversationReplay:
    """Replay ``conversation`` and return the memory held when its questions are asked."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="openclaw-replay-"))
    sessions = sorted(conversation.sessions, key=lambda s: s.started_at)
    if not sessions:
        raise ValueError(f"conversation: {conversation.id!r} has no sessions")
    clock = SimulatedClock(sessions[0].started_at)
    memory = plan.open_memory(embedder, clock, workdir, conversation.id)
    scheduler = plan.consolidation.scheduler(memory, clock) if plan.consolidation is not None else None
    per_session = [memory_units(s, plan.unit, conversation.id) for s in sessions]
    vectors = iter(embedder.encode(unit_texts(conversation, plan.unit), progress=False))
    result = ConversationReplay(conversation.id, [], units_seen=0, asked_at=sessions[0].started_at,
                                conversation=conversation)
    step = timedelta(seconds=plan.turn_seconds)
    for session, records in zip(sessions, per_session):
        clock.set(max(session.started_at, clock.now()))
        for record in records:
            vector = next(vectors)
            if scheduler is not None:
                scheduler.tick()
            if plan.simulate_access:
                memory.search_vector(vector, plan.access_k, distinct=False)
            result.units_seen += 1
            keep = True
            if plan.admission is not None:  # only what the policy admits is stored, with the importance it gives
                decision = plan.admission.decide(record["content"])
                result.admitted |= dict.fromkeys(record["source_ids"], decision.remember)
                keep, record = decision.remember, {**record, "importance": decision.importance}
            if keep:
                memory.add_many([{**record, "embedding": vector, "created_at": clock.now()}])
            clock.advance(step)
        result.footprint.append({"at": clock.now().isoformat(), "session": session.id, **memory.footprint()})
    result.asked_at = question_time(questions, clock.now())
    clock.set(result.asked_at)
    if scheduler is not None:
        scheduler.tick()
    result.footprint.append({"at": clock.now().isoformat(), "session": "questions", **memory.footprint()})
    result.items = list(memory.episodic.items()) + list(memory.semantic.items())
    result.consolidations = memory.episodic.consolidation_log()
    sources = {record["id"]: record["source_ids"] for records in per_session for record in records}
    ever_promoted = {i for report in result.consolidations for i in [*report["promoted"], *report["merged"]]}
    result.promoted_turn_ids = {t for unit_id in ever_promoted for t in sources.get(unit_id, ())}
    memory.close()
    return result
