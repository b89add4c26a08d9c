"""Replay a conversation through a memory stack in the dataset's own time.

Sessions arrive in order with the simulated clock at each session's date, advancing per turn;
each memory unit (a turn, or a round of two turns) becomes an episodic item carrying its turn ids.
Optionally each incoming turn first retrieves as an agent would (the accesses consolidation
reads). Consolidation runs on a schedule in dataset time (a ``ConsolidationPipeline``: its steps are
the config's); questions are asked after the last session, at their own time. All units of a
conversation are embedded in one batch (cached).

``ReplaySteps`` lays a conversation's replay out as steps and takes them on a ``ReplayState``;
``replay_conversation`` takes them all on one memory. A sweep that shares a replay's prefix between
settings (``fork.replay_shared``) takes the same steps on forked states.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from openclaw_lab.agent.remember import RememberPolicy
from openclaw_lab.clock import SimulatedClock
from openclaw_lab.consolidation import ConsolidationScheduler
from openclaw_lab.consolidation.pipeline import ConsolidationPipeline
from openclaw_lab.datasets.types import Conversation, Question, Session
from openclaw_lab.embedding import Embedder
from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import MemoryItem
from openclaw_lab.stores.protocol import VectorStore
from openclaw_lab.tiers.episodic import EpisodicMemory
from openclaw_lab.tiers.semantic import SemanticMemory

__all__ = [
    "ConversationReplay", "ReplayPlan", "ReplayState", "ReplaySteps", "memory_units", "unit_texts", "question_time",
    "replay_conversation", "safe_name",
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
    consolidation_seconds: float = 0.0  # wall time of the consolidation runs (shared ones counted in full)


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
class ReplayPlan:
    """What a replay builds for each conversation: its store, its memory units, consolidation, admission."""

    new_store: Callable[[Path | None], VectorStore]  # a fresh semantic store (a folder, or in memory)
    unit: str = "turn"
    turn_seconds: float = 30.0
    simulate_access: bool = True
    access_k: int = 3
    persist: bool = False
    consolidation: ConsolidationPipeline | None = None  # its steps run at every scheduled consolidation
    interval: timedelta | None = None  # between consolidation runs (None: the scheduler's default)
    admission: RememberPolicy | None = None  # only the units it admits are stored at all

    def open_memory(self, embedder: Embedder, clock: SimulatedClock, workdir: Path, cid: str) -> MemoryManager:
        safe = safe_name(cid)
        store = self.new_store(workdir / f"{safe}-semantic" if self.persist else None)
        episodic = EpisodicMemory(workdir / f"{safe}-episodic.sqlite")
        return MemoryManager(embedder=embedder, episodic=episodic, semantic=SemanticMemory(store), clock=clock,
                             user_id=cid)  # fmt: skip

    def scheduler(self, memory: MemoryManager, clock: SimulatedClock,
                  pipeline: ConsolidationPipeline | None = None) -> ConsolidationScheduler | None:  # fmt: skip
        """``memory``'s consolidation on ``clock``: this plan's pipeline (or ``pipeline``), fresh for it."""
        pipeline = pipeline or self.consolidation
        if pipeline is None:
            return None
        pipeline = pipeline.fresh()
        timing = {"interval": self.interval} if self.interval is not None else {}
        return ConsolidationScheduler(lambda now: pipeline.run(memory, now), clock, raise_errors=True, **timing)


def safe_name(name: str) -> str:
    """``name`` as part of a file name."""
    return "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)


def unit_texts(conversation: Conversation, unit: str) -> list[str]:
    """The contents of a conversation's memory units in replay order: what the replay embeds, in one batch."""
    sessions = sorted(conversation.sessions, key=lambda s: s.started_at)
    return [record["content"] for s in sessions for record in memory_units(s, unit, conversation.id)]


def question_time(questions: Sequence[Question], replayed_until: datetime) -> datetime:
    """The one time at which a conversation's questions are answered: the latest question's time, never
    before the end of the replay (the clock cannot run back). Every stage reads it from the replay."""
    return max([replayed_until, *(q.asked_at for q in questions)])




@dataclass
class ReplayState:
    """One memory part-way through a replay, and what it has recorded so far."""

    memory: MemoryManager
    clock: SimulatedClock
    scheduler: ConsolidationScheduler | None = None
    step: int = 0  # the next step to take
    footprint: list[dict[str, Any]] = field(default_factory=list)
    admitted: dict[str, bool] = field(default_factory=dict)
    consolidations: list[dict[str, Any]] = field(default_factory=list)  # the runs' reports, JSON-native
    asked_at: datetime | None = None
    consolidation_seconds: float = 0.0  # wall time spent in consolidation runs so far

    def copy(self, **changes: Any) -> ReplayState:
        """A copy whose records can grow apart from this one's (the memory is shared unless changed)."""
        records = {"footprint": list(self.footprint), "admitted": dict(self.admitted),
                   "consolidations": list(self.consolidations)}  # fmt: skip
        return replace(self, **{**records, **changes})


Due = Callable[[ReplayState, int], list[Any]]  # a consolidation run that is due at a step; returns any forks


class ReplaySteps:
    """A conversation's replay as steps (a session starts, the clock ticks, a unit arrives, memory is
    measured, the questions are asked), taken on a ``ReplayState``."""

    def __init__(self, conversation: Conversation, questions: Sequence[Question], plan: ReplayPlan,
                 embedder: Embedder, workdir: Path) -> None:  # fmt: skip
        sessions = sorted(conversation.sessions, key=lambda s: s.started_at)
        if not sessions:
            raise ValueError(f"conversation: {conversation.id!r} has no sessions")
        self.conversation, self.questions, self.plan, self.embedder, self.workdir = (
            conversation, list(questions), plan, embedder, workdir)  # fmt: skip
        per_session = [memory_units(s, plan.unit, conversation.id) for s in sessions]
        self.sources = {record["id"]: record["source_ids"] for records in per_session for record in records}
        self.vectors = embedder.encode(unit_texts(conversation, plan.unit), progress=False)
        self.steps: list[tuple[str, Any]] = []
        units = iter(range(len(self.vectors)))
        for session, records in zip(sessions, per_session):
            self.steps.append(("session", session))
            for record in records:
                self.steps += [("tick", None), ("unit", (record, next(units)))]
            self.steps.append(("footprint", session.id))
        self.steps += [("ask", None), ("tick", None), ("footprint", "questions")]
        self.started_at = sessions[0].started_at

    def start(self) -> ReplayState:
        """A fresh memory at the first session's time, with its consolidation scheduled."""
        clock = SimulatedClock(self.started_at)
        memory = self.plan.open_memory(self.embedder, clock, self.workdir, self.conversation.id)
        return ReplayState(memory, clock, self.plan.scheduler(memory, clock))

    def take(self, state: ReplayState, due: Due) -> list[Any]:
        """Take ``state``'s remaining steps; ``due`` runs each consolidation that falls due. Returns the forks
        ``due`` made on the way."""
        forks: list[Any] = []
        memory, clock, plan = state.memory, state.clock, self.plan
        step_length = timedelta(seconds=plan.turn_seconds)
        for step in range(state.step, len(self.steps)):
            kind, value = self.steps[step]
            if kind == "tick":
                if state.scheduler is not None and clock.now() >= state.scheduler.next_due:
                    forks += due(state, step)
            elif kind == "unit":
                self._arrive(state, value[0], self.vectors[value[1]])
                clock.advance(step_length)
            elif kind == "session":
                clock.set(max(value.started_at, clock.now()))
            elif kind == "footprint":
                state.footprint.append({"at": clock.now().isoformat(), "session": value, **memory.footprint()})
            else:  # "ask"
                state.asked_at = question_time(self.questions, clock.now())
                clock.set(state.asked_at)
        state.step = len(self.steps)
        return forks

    def _arrive(self, state: ReplayState, record: dict[str, Any], vector: Any) -> None:
        """A memory unit arrives: retrieved with first (as an agent would), then stored if admitted."""
        plan = self.plan
        if plan.simulate_access:
            state.memory.search_vector(vector, plan.access_k, distinct=False)
        if plan.admission is not None:  # only what the policy admits is stored, with the importance it gives
            decision = plan.admission.decide(record["content"])
            state.admitted |= dict.fromkeys(record["source_ids"], decision.remember)
            if not decision.remember:
                return
            record = {**record, "importance": decision.importance}
        state.memory.add_many([{**record, "embedding": vector, "created_at": state.clock.now()}])

    def finish(self, state: ReplayState, consolidations: list[dict[str, Any]] | None = None,
               items: list[MemoryItem] | None = None) -> ConversationReplay:  # fmt: skip
        """The replay ``state`` ended in: its items (``items``, when several plans share them) and its log."""
        log = state.consolidations if consolidations is None else consolidations
        memory = state.memory
        if items is None:
            items = list(memory.episodic.items()) + list(memory.semantic.items())
        ever_promoted = {i for report in log for i in [*report["promoted"], *report["merged"]]}
        return ConversationReplay(
            self.conversation.id, items, units_seen=sum(kind == "unit" for kind, _ in self.steps),
            footprint=list(state.footprint), consolidations=log, admitted=dict(state.admitted),
            asked_at=state.asked_at, conversation=self.conversation, consolidation_seconds=state.consolidation_seconds,
            promoted_turn_ids={t for unit_id in ever_promoted for t in self.sources.get(unit_id, ())},
        )  # fmt: skip


def consolidate_now(state: ReplayState, step: int) -> list[Any]:
    """Run the consolidation that is due and log its report (as the episodic tier's log reads it back)."""
    scheduler = state.scheduler
    timed_tick(state)
    state.consolidations.append(json.loads(json.dumps(scheduler.last_result.to_dict())))  # type: ignore[union-attr]
    return []


def timed_tick(state: ReplayState) -> None:
    """The scheduler's due run, its wall time added to ``state.consolidation_seconds``."""
    started = time.perf_counter()
    state.scheduler.tick()  # type: ignore[union-attr]
    state.consolidation_seconds += time.perf_counter() - started


def replay_conversation(
    conversation: Conversation,
    questions: list[Question],
    plan: ReplayPlan,
    embedder: Embedder,
    workdir: str | Path | None = None,
) -> ConversationReplay:
    """Replay ``conversation`` and return the memory held when its questions are asked."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="openclaw-replay-"))
    steps = ReplaySteps(conversation, questions, plan, embedder, workdir)
    state = steps.start()
    steps.take(state, consolidate_now)
    replay = steps.finish(state)
    state.memory.close()
    return replay
