"""A sweep's speed-up, wrapped around the plain replay: plans that differ only in what consolidation prunes
(the points of a decay sweep) share one replay of a conversation until their prune decisions part.

Before each consolidation run the shared memory is saved (the public ``snapshot`` methods of the episodic
tier and the scheduler, and the semantic tier's items); where the decisions first differ, the plans that
part from the first one continue in a fork restored from that save. Each plan's replay equals its own
``replay_conversation`` when the semantic store keeps the order items are added in (the exact store does;
a fork adds them back in order).
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_lab.clock import SimulatedClock
from openclaw_lab.consolidation import PrunePolicy, decay_inputs
from openclaw_lab.consolidation.pipeline import PromoteAndDecay
from openclaw_lab.consolidation.report import ScoreSummary
from openclaw_lab.datasets.types import Conversation, Question
from openclaw_lab.embedding import Embedder
from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import MemoryItem, MemoryTier
from openclaw_lab.replay.conversation import (
    ConversationReplay, ReplayPlan, ReplayState, ReplaySteps, replay_conversation, safe_name, timed_tick,
)  # fmt: skip
from openclaw_lab.tiers.episodic import EpisodicMemory
from openclaw_lab.tiers.semantic import SemanticMemory

__all__ = ["replay_each", "replay_shared", "check_shareable"]


def replay_each(conversation: Conversation, questions: list[Question], plans: Sequence[ReplayPlan],
                embedder: Embedder, workdir: Path | None) -> list[ConversationReplay]:  # fmt: skip
    """Each plan's replay of ``conversation`` (an engine's task): one plan alone (``replay_conversation``), several
    sharing their prefix; in ``workdir``, else in a scratch folder of the task's own."""
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="openclaw-replay-") as scratch:
            return replay_each(conversation, questions, plans, embedder, Path(scratch))
    if len(plans) == 1:
        return [replay_conversation(conversation, questions, plans[0], embedder, workdir)]
    return replay_shared(conversation, questions, plans, embedder, workdir)


def replay_shared(
    conversation: Conversation,
    questions: list[Question],
    plans: Sequence[ReplayPlan],
    embedder: Embedder,
    workdir: str | Path | None = None,
) -> list[ConversationReplay]:
    """``replay_conversation`` for each of ``plans`` in one pass (see the module doc); one replay per plan."""
    plans = list(plans)
    check_shareable(plans)
    workdir = Path(workdir or tempfile.mkdtemp(prefix="openclaw-replay-"))
    steps = ReplaySteps(conversation, questions, plans[0], embedder, workdir)  # every setting but pruning
    shared = _SharedReplay(steps, plans)
    results: list[ConversationReplay | None] = [None] * len(plans)
    branches = [shared.start()]
    while branches:
        branch = branches.pop()
        branches += steps.take(branch.state, branch.consolidate)
        for member, result in shared.finish(branch):
            results[member] = result
    return results  # type: ignore[return-value]


def check_shareable(plans: list[ReplayPlan]) -> None:
    """Refuse plans that differ in more than what consolidation prunes, or that keep state a fork cannot copy."""
    if not plans:
        raise ValueError("plans: give at least one replay plan")
    first = plans[0]
    for n, plan in enumerate(plans[1:], 1):
        for name in ("unit", "turn_seconds", "simulate_access", "access_k"):
            if getattr(plan, name) != getattr(first, name):
                raise ValueError(f"plans[{n}].{name}: {getattr(plan, name)!r} differs from plans[0]'s "
                                 f"{getattr(first, name)!r}; only prune settings may differ")  # fmt: skip
        if (plan.consolidation is None) != (first.consolidation is None):
            raise ValueError(f"plans[{n}].consolidation: on in one plan and off in another; a shared replay needs both")
    if len(plans) == 1:
        return
    for n, plan in enumerate(plans):
        if plan.persist:
            raise ValueError(f"plans[{n}].persist: a shared replay keeps no memory folder per plan; replay it alone")
        kept = [step for step in (plan.consolidation.steps if plan.consolidation else ()) if hasattr(step, "fresh")]
        if kept:
            raise ValueError(f"plans[{n}].consolidation: {kept[0]!r} remembers what it did, which a fork cannot "
                             "copy; replay it alone")  # fmt: skip


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
    """One memory replaying for ``members`` (plan indices), with each member's consolidation log."""

    members: list[int]
    state: ReplayState
    shared: _SharedReplay
    logs: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    prune: _Decisions | None = None
    prune_episodic: _Decisions | None = None

    def consolidate(self, state: ReplayState, step: int) -> list[_Branch]:
        """The due run, for every member: save first, and fork the members whose prune decisions part."""
        saved = self.shared.save(self) if len(self.members) > 1 else None
        timed_tick(state)
        groups = self.shared.record(self, state.scheduler.last_result)  # type: ignore[union-attr]
        self.shared.set_members(self, groups[0])
        if saved is None:
            return []
        forks = [self.shared.restore(saved, group, step) for group in groups[1:]]
        saved.episodic.close()
        return forks


@dataclass
class _Saved:
    """A branch as it was before a consolidation run."""

    branch: _Branch
    episodic: sqlite3.Connection
    semantic: list[MemoryItem]
    now: datetime
    timing: tuple[datetime, datetime, int]


class _SharedReplay:
    """The branches of one conversation's shared replay: their schedules, records, saves and forks."""

    def __init__(self, steps: ReplaySteps, plans: list[ReplayPlan]) -> None:
        self.steps, self.plans, self.forks = steps, plans, 0

    def start(self) -> _Branch:
        state = self.steps.start()
        branch = _Branch(list(range(len(self.plans))), state, self, logs={m: [] for m in range(len(self.plans))})
        self._schedule(branch)
        return branch

    def _schedule(self, branch: _Branch, timing: tuple[datetime, datetime, int] | None = None) -> None:
        """Give ``branch`` a scheduler whose runs consult every member's prune policies."""
        pipeline = self.plans[branch.members[0]].consolidation
        if pipeline is None:
            return
        decay = pipeline.find(PromoteAndDecay)
        branch.prune = _Decisions([])
        branch.prune_episodic = _Decisions([]) if decay.prune_episodic is not None else None
        self.set_members(branch, branch.members)
        consulting = pipeline.replacing(PromoteAndDecay, prune=branch.prune, prune_episodic=branch.prune_episodic)
        state = branch.state
        state.scheduler = self.steps.plan.scheduler(state.memory, state.clock, consulting)
        if timing is not None:
            state.scheduler.resume(timing)  # type: ignore[union-attr]

    def set_members(self, branch: _Branch, members: list[int]) -> None:
        branch.members = members
        decays = [self.plans[m].consolidation.find(PromoteAndDecay) for m in members]  # type: ignore[union-attr]
        branch.prune.policies = [d.prune for d in decays]  # type: ignore[union-attr]
        if branch.prune_episodic is not None:
            branch.prune_episodic.policies = [d.prune_episodic for d in decays]

    def record(self, branch: _Branch, report: Any) -> list[list[int]]:
        """Log the run for every member (its own scores and settings) and group the members by what they
        pruned: the first group holds the first member, whose decisions the memory followed."""
        episodic = branch.prune_episodic
        calls = branch.prune.calls + (episodic.calls if episodic is not None else [])  # type: ignore[union-attr]
        semantic_call, episodic_call = calls  # without an episodic policy, the semantic one scores both tiers
        decided = calls if episodic is not None else [semantic_call]  # episodic scores alone delete nothing
        groups: dict[tuple, list[int]] = {}
        shared = json.loads(json.dumps(report.to_dict()))  # as the episodic tier's log reads it back
        for position, member in enumerate(branch.members):
            decay = self.plans[member].consolidation.find(PromoteAndDecay)  # type: ignore[union-attr]
            scores = {MemoryTier.SEMANTIC.value: ScoreSummary.of(semantic_call[position][0]).to_dict(),
                      MemoryTier.EPISODIC.value: ScoreSummary.of(episodic_call[position][0]).to_dict()}
            config = {**shared["config"], "prune": repr(decay.prune),
                      "prune_episodic": repr(decay.prune_episodic) if decay.prune_episodic is not None else None}
            branch.logs[member].append(json.loads(json.dumps({**shared, "scores": scores, "config": config})))
            groups.setdefault(tuple(tuple(call[position][1]) for call in decided), []).append(member)
        branch.prune.calls.clear()  # type: ignore[union-attr]
        if episodic is not None:
            episodic.calls.clear()
        return list(groups.values())

    def save(self, branch: _Branch) -> _Saved:
        state = branch.state
        copy = _Branch(list(branch.members), state.copy(), self, logs={m: list(log) for m, log in branch.logs.items()})
        return _Saved(copy, state.memory.episodic.snapshot(), list(state.memory.semantic.items()), state.clock.now(),
                      state.scheduler.timing())  # type: ignore[union-attr]

    def restore(self, saved: _Saved, members: list[int], step: int) -> _Branch:
        """A fork for ``members`` from ``saved``, at ``step`` (the consolidation run, made again for them)."""
        self.forks += 1
        steps = self.steps
        path = steps.workdir / f"{safe_name(steps.conversation.id)}-fork{self.forks}-episodic.sqlite"
        clock = SimulatedClock(saved.now)
        memory = MemoryManager(embedder=steps.embedder, episodic=EpisodicMemory.restored(saved.episodic, path),
                               semantic=SemanticMemory(steps.plan.new_store(None)), clock=clock,
                               user_id=steps.conversation.id)  # fmt: skip
        memory.semantic.upsert(saved.semantic)  # in the saved order, so that ties rank as they did
        state = saved.branch.state.copy(memory=memory, clock=clock, step=step)
        branch = _Branch(members, state, self, logs={m: list(saved.branch.logs[m]) for m in members})
        self._schedule(branch, saved.timing)
        return branch

    def finish(self, branch: _Branch) -> list[tuple[int, ConversationReplay]]:
        """Each member's replay, from the branch's memory at question time (then closed); the members share
        one list of items, which tells a sweep that their memories are the same."""
        memory = branch.state.memory
        items = list(memory.episodic.items()) + list(memory.semantic.items())
        out = [(m, self.steps.finish(branch.state, branch.logs[m], items)) for m in branch.members]
        memory.close()
        return out
