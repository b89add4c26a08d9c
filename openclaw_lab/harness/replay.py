"""Replay a conversation through a memory stack in the dataset's own time.

Sessions arrive in order with the simulated clock at each session's date, advancing per turn;
each memory unit (a turn, or a round of two turns) becomes an episodic item carrying its turn ids.
Optionally each incoming turn first retrieves as an agent would (the accesses consolidation
reads). Consolidation and decay run on a schedule in dataset time; questions are asked after the
last session, at their own time. All units of a conversation are embedded in one batch (cached).
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_lab.agent.remember import RememberPolicy
from openclaw_lab.clock import SimulatedClock
from openclaw_lab.consolidation import (
    SUPERSEDED_BY, VALID_UNTIL, ConsolidationPolicy, ConsolidationScheduler, Expiry, PrunePolicy, SessionSummaries,
    SupersessionRule, consolidation_job, decay_inputs, semantic_id,
)  # fmt: skip
from openclaw_lab.consolidation.merge import RestatementMerge, repointed
from openclaw_lab.consolidation.report import ConsolidationReport, ScoreSummary
from openclaw_lab.datasets.types import Conversation, Question, Session
from openclaw_lab.embedding import Embedder
from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import MemoryItem, MemoryTier
from openclaw_lab.stores.protocol import VectorStore
from openclaw_lab.tiers.episodic import EpisodicMemory
from openclaw_lab.tiers.semantic import SemanticMemory

__all__ = [
    "ConversationReplay", "ConsolidationPlan", "ReplayPlan", "memory_units", "unit_texts", "question_time",
    "replay_conversation", "replay_shared",
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
    merge: RestatementMerge | None = None  # joins restatements in each tier before each run (before marking)
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
        if self.merge is not None:
            job = _merging(self.merge, memory, job)
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


def _merging(merge: RestatementMerge, memory: MemoryManager, job: Callable[[datetime], Any]) -> Callable:
    """``job`` preceded by joining the restatements of each tier into one memory (the semantic tier's copies
    are judged among themselves, as their episodic sources are), so that marking sees the merged memories."""

    def run(now: datetime) -> Any:
        tiers, moved = (memory.episodic, memory.semantic), {}
        for tier in tiers:
            written, absorbed = merge.merged(list(tier.items()))
            if written:  # written before the absorbed are deleted: a crash between leaves a copy, never a lost turn
                tier.upsert(written)
                tier.delete(list(absorbed))
                moved |= absorbed
        for tier in tiers if moved else ():  # marks name the memory that absorbed their replacement
            if marks := repointed(list(tier.items()), moved):
                tier.upsert(marks)
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
        safe = _safe(cid)
        store = self.new_store(workdir / f"{safe}-semantic" if self.persist else None)
        episodic = EpisodicMemory(workdir / f"{safe}-episodic.sqlite")
        return MemoryManager(embedder=embedder, episodic=episodic, semantic=SemanticMemory(store), clock=clock, user_id=cid)


def _safe(name: str) -> str:
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


def replay_conversation(
    conversation: Conversation,
    questions: list[Question],
    plan: ReplayPlan,
    embedder: Embedder,
    workdir: str | Path | None = None,
) -> ConversationReplay:
    """Replay ``conversation`` and return the memory held when its questions are asked."""
    return replay_shared(conversation, questions, [plan], embedder, workdir)[0]


def replay_shared(
    conversation: Conversation,
    questions: list[Question],
    plans: Sequence[ReplayPlan],
    embedder: Embedder,
    workdir: str | Path | None = None,
) -> list[ConversationReplay]:
    """``replay_conversation`` for each of ``plans`` in one pass, when they differ only in what consolidation
    prunes (the points of a decay sweep; the caller guarantees it, the shape is checked here).

    The plans share one memory while their prune decisions agree. Before each consolidation run the
    memory is saved; where the decisions first differ, the plans that part from the first one continue
    in a fork restored from that save. Each plan's replay equals its own ``replay_conversation`` when the
    semantic store keeps the order items are added in (the exact store does; a fork adds them back in order).
    """
    plans = list(plans)
    _check_shareable(plans)
    sessions = sorted(conversation.sessions, key=lambda s: s.started_at)
    if not sessions:
        raise ValueError(f"conversation: {conversation.id!r} has no sessions")
    workdir = Path(workdir or tempfile.mkdtemp(prefix="openclaw-replay-"))
    replay = _SharedReplay(conversation, questions, plans, embedder, workdir, sessions)
    results: list[ConversationReplay | None] = [None] * len(plans)
    branches = [replay.start()]
    while branches:
        branch = branches.pop()
        branches += replay.run(branch)
        for member, result in replay.finish(branch):
            results[member] = result
    return results  # type: ignore[return-value]


def _check_shareable(plans: list[ReplayPlan]) -> None:
    if not plans:
        raise ValueError("plans: give at least one replay plan")
    if len(plans) == 1:
        return
    first = plans[0]
    for n, plan in enumerate(plans[1:], 1):
        for name in ("unit", "turn_seconds", "simulate_access", "access_k"):
            if getattr(plan, name) != getattr(first, name):
                raise ValueError(f"plans[{n}].{name}: {getattr(plan, name)!r} differs from plans[0]'s "
                                 f"{getattr(first, name)!r}; only prune settings may differ")  # fmt: skip
        if (plan.consolidation is None) != (first.consolidation is None):
            raise ValueError(f"plans[{n}].consolidation: on in one plan and off in another; a shared replay needs both")
    for n, plan in enumerate(plans):
        if plan.persist:
            raise ValueError(f"plans[{n}].persist: a shared replay keeps no memory folder per plan; replay it alone")
        if plan.consolidation is not None and plan.consolidation.summaries is not None:
            raise ValueError(f"plans[{n}].consolidation.summaries: summaries remember what they summarised, "
                             "which a fork cannot copy; replay it alone")  # fmt: skip


class _Decisions:
    """The prune policies of a branch's plans, consulted together: the memory follows the first one, and
    every plan's own scores and prune ids are recorded, so that the replay sees where the plans part."""

    def __init__(self, policies: list[PrunePolicy]) -> None:
        self.policies = policies
        self.calls: list[list[tuple[np.ndarray, list[str]]]] = []

    def evaluate(self, items: Any, now: datetime) -> tuple[np.ndarray, list[str]]:
        items = list(items)
        inputs = decay_inputs(items, now)  # what the plans' laws read, read once for all of them
        self.calls.append([policy.evaluate(items, now, inputs) for policy in self.policies])
        return self.calls[-1][0]

    def __repr__(self) -> str:
        return repr(self.policies[0])


@dataclass
class _Branch:
    """One memory replaying for ``members`` (plan indices), and what it has recorded so far."""

    members: list[int]
    memory: MemoryManager
    clock: SimulatedClock
    step: int = 0  # the next step to take
    footprint: list[dict[str, Any]] = field(default_factory=list)
    admitted: dict[str, bool] = field(default_factory=dict)
    logs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # plan -> its consolidation reports
    asked_at: datetime | None = None
    scheduler: ConsolidationScheduler | None = None
    prune: _Decisions | None = None
    prune_episodic: _Decisions | None = None


@dataclass
class _Saved:
    """A branch as it was before a consolidation run: the episodic file in memory, the semantic items."""

    branch: _Branch
    episodic: sqlite3.Connection
    semantic: list[MemoryItem]
    now: datetime
    timing: tuple[datetime, datetime, int]  # the scheduler's start, next run and runs so far


class _SharedReplay:
    """The steps of one conversation's replay, taken by branches of memory (see ``replay_shared``)."""

    def __init__(self, conversation: Conversation, questions: list[Question], plans: list[ReplayPlan],
                 embedder: Embedder, workdir: Path, sessions: list[Session]) -> None:  # fmt: skip
        self.conversation, self.questions, self.plans, self.embedder, self.workdir = (
            conversation, questions, plans, embedder, workdir)  # fmt: skip
        self.plan = plans[0]  # every setting but pruning, for all of them
        per_session = [memory_units(s, self.plan.unit, conversation.id) for s in sessions]
        self.sources = {record["id"]: record["source_ids"] for records in per_session for record in records}
        self.vectors = embedder.encode(unit_texts(conversation, self.plan.unit), progress=False)
        self.steps: list[tuple[str, Any]] = []
        units = iter(range(len(self.vectors)))
        for session, records in zip(sessions, per_session):
            self.steps.append(("session", session))
            for record in records:
                self.steps += [("tick", None), ("unit", (record, next(units)))]
            self.steps.append(("footprint", session.id))
        self.steps += [("ask", None), ("tick", None), ("footprint", "questions")]
        self.started_at = sessions[0].started_at
        self.forks = 0

    def start(self) -> _Branch:
        clock = SimulatedClock(self.started_at)
        memory = self.plan.open_memory(self.embedder, clock, self.workdir, self.conversation.id)
        branch = _Branch(list(range(len(self.plans))), memory, clock, logs={m: [] for m in range(len(self.plans))})
        self._schedule(branch)
        return branch

    def _schedule(self, branch: _Branch, timing: tuple[datetime, datetime, int] | None = None) -> None:
        """Give ``branch`` a scheduler whose runs consult every member's prune policies."""
        consolidation = self.plans[branch.members[0]].consolidation
        if consolidation is None:
            return
        branch.prune = _Decisions([])
        branch.prune_episodic = _Decisions([]) if consolidation.prune_episodic is not None else None
        self._members(branch, branch.members)
        plan = replace(consolidation, prune=branch.prune, prune_episodic=branch.prune_episodic)
        branch.scheduler = plan.scheduler(branch.memory, branch.clock)
        if timing is not None:
            branch.scheduler.start_time, branch.scheduler.next_due, branch.scheduler.runs = timing

    def _members(self, branch: _Branch, members: list[int]) -> None:
        branch.members = members
        consolidations = [self.plans[m].consolidation for m in members]
        branch.prune.policies = [c.prune for c in consolidations]  # type: ignore[union-attr]
        if branch.prune_episodic is not None:
            branch.prune_episodic.policies = [c.prune_episodic for c in consolidations]  # type: ignore[union-attr]

    def run(self, branch: _Branch) -> list[_Branch]:
        """Take the branch's remaining steps; returns the forks made on the way, each at its own step."""
        forks: list[_Branch] = []
        memory, clock, plan = branch.memory, branch.clock, self.plan
        step_length = timedelta(seconds=plan.turn_seconds)
        for step in range(branch.step, len(self.steps)):
            kind, value = self.steps[step]
            if kind == "tick":
                forks += self._tick(branch, step)
            elif kind == "unit":
                record, vector = value[0], self.vectors[value[1]]
                if plan.simulate_access:
                    memory.search_vector(vector, plan.access_k, distinct=False)
                keep = True
                if plan.admission is not None:  # only what the policy admits is stored, with the importance it gives
                    decision = plan.admission.decide(record["content"])
                    branch.admitted |= dict.fromkeys(record["source_ids"], decision.remember)
                    keep, record = decision.remember, {**record, "importance": decision.importance}
                if keep:
                    memory.add_many([{**record, "embedding": vector, "created_at": clock.now()}])
                clock.advance(step_length)
            elif kind == "session":
                clock.set(max(value.started_at, clock.now()))
            elif kind == "footprint":
                branch.footprint.append({"at": clock.now().isoformat(), "session": value, **memory.footprint()})
            else:  # "ask"
                branch.asked_at = question_time(self.questions, clock.now())
                clock.set(branch.asked_at)
        branch.step = len(self.steps)
        return forks

    def _tick(self, branch: _Branch, step: int) -> list[_Branch]:
        scheduler = branch.scheduler
        if scheduler is None or branch.clock.now() < scheduler.next_due:
            return []
        saved = self._save(branch) if len(branch.members) > 1 else None
        scheduler.tick()
        groups = self._record(branch, scheduler.last_result)
        self._members(branch, groups[0])
        forks = [self._restore(saved, group, step) for group in groups[1:]] if saved is not None else []
        if saved is not None:
            saved.episodic.close()
        return forks

    def _record(self, branch: _Branch, report: ConsolidationReport) -> list[list[int]]:
        """Log the run for every member (its own scores and settings) and group the members by what they
        pruned: the first group holds the first member, whose decisions the memory followed."""
        episodic = branch.prune_episodic
        calls = branch.prune.calls + (episodic.calls if episodic is not None else [])  # type: ignore[union-attr]
        semantic_call, episodic_call = calls  # without an episodic policy, the semantic one scores both tiers
        decided = calls if episodic is not None else [semantic_call]  # episodic scores alone delete nothing
        groups: dict[tuple, list[int]] = {}
        shared = json.loads(json.dumps(report.to_dict()))  # as the episodic tier's log reads it back
        for position, member in enumerate(branch.members):
            consolidation = self.plans[member].consolidation
            scores = {MemoryTier.SEMANTIC.value: ScoreSummary.of(semantic_call[position][0]).to_dict(),
                      MemoryTier.EPISODIC.value: ScoreSummary.of(episodic_call[position][0]).to_dict()}
            config = {**shared["config"], "prune": repr(consolidation.prune),
                      "prune_episodic": repr(consolidation.prune_episodic)
                      if consolidation.prune_episodic is not None else None}  # fmt: skip
            entry = {**shared, "scores": scores, "config": config}  # JSON-native; the rest is shared, read only
            branch.logs[member].append(entry)
            groups.setdefault(tuple(tuple(call[position][1]) for call in decided), []).append(member)
        branch.prune.calls.clear()  # type: ignore[union-attr]
        if episodic is not None:
            episodic.calls.clear()
        return list(groups.values())

    def _save(self, branch: _Branch) -> _Saved:
        episodic = sqlite3.connect(":memory:", check_same_thread=False)
        with closing(sqlite3.connect(branch.memory.episodic.db.path)) as source:
            source.backup(episodic)
        scheduler = branch.scheduler
        assert scheduler is not None
        logs = {m: list(log) for m, log in branch.logs.items()}
        copy = replace(branch, members=list(branch.members), footprint=list(branch.footprint),
                       admitted=dict(branch.admitted), logs=logs)  # fmt: skip
        return _Saved(copy, episodic, list(branch.memory.semantic.items()), branch.clock.now(),
                      (scheduler.start_time, scheduler.next_due, scheduler.runs))  # fmt: skip

    def _restore(self, saved: _Saved, members: list[int], step: int) -> _Branch:
        """A fork for ``members`` from ``saved``, at ``step`` (the consolidation run, made again for them)."""
        self.forks += 1
        path = self.workdir / f"{_safe(self.conversation.id)}-fork{self.forks}-episodic.sqlite"
        with closing(sqlite3.connect(path)) as target:
            saved.episodic.backup(target)
        clock = SimulatedClock(saved.now)
        memory = MemoryManager(embedder=self.embedder, episodic=EpisodicMemory(path),
                               semantic=SemanticMemory(self.plan.new_store(None)), clock=clock,
                               user_id=self.conversation.id)  # fmt: skip
        memory.semantic.upsert(saved.semantic)  # in the saved order, so that ties rank as they did
        branch = replace(saved.branch, members=members, memory=memory, clock=clock, step=step,
                         footprint=list(saved.branch.footprint), admitted=dict(saved.branch.admitted),
                         logs={m: list(saved.branch.logs[m]) for m in members})  # fmt: skip
        self._schedule(branch, saved.timing)
        return branch

    def finish(self, branch: _Branch) -> list[tuple[int, ConversationReplay]]:
        """Each member's replay, from the branch's memory at question time (then closed); the members share
        one list of items, which tells a sweep that their memories are the same."""
        memory = branch.memory
        items = list(memory.episodic.items()) + list(memory.semantic.items())
        units = sum(kind == "unit" for kind, _ in self.steps)
        out = []
        for member in branch.members:
            log = branch.logs[member]
            ever_promoted = {i for report in log for i in [*report["promoted"], *report["merged"]]}
            out.append((member, ConversationReplay(
                self.conversation.id, items, units_seen=units, footprint=list(branch.footprint),
                consolidations=log, admitted=dict(branch.admitted), asked_at=branch.asked_at,
                conversation=self.conversation,
                promoted_turn_ids={t for unit_id in ever_promoted for t in self.sources.get(unit_id, ())},
            )))  # fmt: skip
        memory.close()
        return out
