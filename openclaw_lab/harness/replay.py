"""Replay a conversation through a memory stack in the dataset's own time.

Sessions arrive in order with the simulated clock at each session's date, advancing per turn;
each memory unit (a turn, or a round of two turns) becomes an episodic item carrying its turn ids.
Optionally each incoming turn first retrieves as an agent would (the accesses consolidation
reads). Consolidation and decay run on a schedule in dataset time; questions are asked after the
last session, at their own time. All units of a conversation are embedded in one batch (cached).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from openclaw_lab import registry
from openclaw_lab.clock import SimulatedClock
from openclaw_lab.consolidation import ConsolidationPolicy, ConsolidationScheduler, PrunePolicy, consolidation_job
from openclaw_lab.datasets.types import Conversation, Question, Session
from openclaw_lab.embedding import Embedder
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import MemoryItem, MemoryTier
from openclaw_lab.tiers.episodic import EpisodicMemory
from openclaw_lab.tiers.semantic import SemanticMemory

__all__ = ["ConversationReplay", "memory_units", "replay_conversation"]


@dataclass
class ConversationReplay:
    """What a replay leaves: the items held at question time, and how memory evolved."""

    conversation_id: str
    items: list[MemoryItem]
    units_seen: int
    footprint: list[dict[str, Any]] = field(default_factory=list)  # one row per session, and at question time
    consolidations: list[dict[str, Any]] = field(default_factory=list)
    promoted_turn_ids: set[str] = field(default_factory=set)
    remembered: dict[str, bool] = field(default_factory=dict)  # turn id -> kept by the remember policy


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


def _scheduler(config: ExperimentConfig, memory: MemoryManager, clock: SimulatedClock) -> ConsolidationScheduler | None:
    settings = config.consolidation
    if not settings.enabled:
        return None
    prune = PrunePolicy(law=registry.decay_laws.create(settings.law, **settings.law_params), threshold=settings.threshold)
    job = consolidation_job(
        memory.episodic,
        memory.semantic,
        policy=ConsolidationPolicy(**settings.policy),
        prune=prune if MemoryTier.SEMANTIC.value in settings.prune_tiers else PrunePolicy(law=registry.decay_laws.create("none")),
        prune_episodic=prune if MemoryTier.EPISODIC.value in settings.prune_tiers else None,
        merge_threshold=settings.merge_threshold,
        log=memory.episodic,
    )
    return ConsolidationScheduler(job, clock, interval=timedelta(hours=settings.interval_hours), raise_errors=True)


def _open_memory(config: ExperimentConfig, embedder: Embedder, clock: SimulatedClock, workdir: Path, cid: str) -> MemoryManager:
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in cid)
    path = workdir / f"{safe}-semantic" if config.memory.persist else None
    store = registry.stores.create(
        config.memory.store, path=path, embedding_model=embedder.model_id, **config.memory.store_params
    )
    episodic = EpisodicMemory(workdir / f"{safe}-episodic.sqlite")
    return MemoryManager(embedder=embedder, episodic=episodic, semantic=SemanticMemory(store), clock=clock, user_id=cid)


def replay_conversation(
    conversation: Conversation,
    questions: list[Question],
    config: ExperimentConfig,
    embedder: Embedder,
    workdir: str | Path | None = None,
) -> ConversationReplay:
    """Replay ``conversation`` and return the memory held when its questions are asked."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix="openclaw-replay-"))
    sessions = sorted(conversation.sessions, key=lambda s: s.started_at)
    if not sessions:
        raise ValueError(f"conversation: {conversation.id!r} has no sessions")
    clock = SimulatedClock(sessions[0].started_at)
    memory = _open_memory(config, embedder, clock, workdir, conversation.id)
    scheduler = _scheduler(config, memory, clock)
    per_session = [memory_units(s, config.memory.unit, conversation.id) for s in sessions]
    vectors = iter(embedder.encode([r["content"] for records in per_session for r in records]))
    result = ConversationReplay(conversation.id, [], units_seen=0)
    step = timedelta(seconds=config.memory.turn_seconds)
    remember = config.memory.remember
    policy = registry.remember_policies.create(remember, **config.memory.remember_params) if remember else None
    for session, records in zip(sessions, per_session):
        clock.set(max(session.started_at, clock.now()))
        for record in records:
            vector = next(vectors)
            if scheduler is not None:
                scheduler.tick()
            if config.memory.simulate_access:
                memory.search_vector(vector, config.memory.access_k)
            result.units_seen += 1
            keep = True
            if policy is not None:  # only what the policy keeps is stored, with the importance it gives
                decision = policy.decide(record["content"])
                result.remembered |= dict.fromkeys(record["source_ids"], decision.remember)
                keep, record = decision.remember, {**record, "importance": decision.importance}
            if keep:
                memory.add_many([{**record, "embedding": vector, "created_at": clock.now()}])
            clock.advance(step)
        result.footprint.append({"at": clock.now().isoformat(), "session": session.id, **memory.footprint()})
    asked_at = max((q.asked_at for q in questions), default=clock.now())
    clock.set(max(asked_at, clock.now()))
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
