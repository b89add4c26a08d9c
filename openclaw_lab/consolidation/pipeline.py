"""Consolidation as steps: every kind of consolidation is a step with one contract, applied in order.

A step is anything with ``apply(memory, now)``: it reads and rewrites the tiers of ``memory`` (an
object with ``episodic`` and ``semantic`` stores and an ``embedder``: a ``MemoryManager``) at the
dataset's time ``now``, and may return a report. ``ConsolidationPipeline`` applies its steps in order at
each scheduled run and returns the last report a step gave (promotion and decay's). The replay calls
the pipeline and knows no step by name; a new kind of step is one class plus one registry line (see the
how-to "Write a consolidation rule").

>>> from datetime import datetime
>>> from types import SimpleNamespace
>>> from openclaw_lab.stores.exact import ExactStore
>>> memory = SimpleNamespace(episodic=ExactStore(), semantic=ExactStore(), embedder=None)
>>> pipeline = ConsolidationPipeline([PromoteAndDecay()])
>>> pipeline.run(memory, datetime(2023, 5, 8)).counts["promoted"]
0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from openclaw_lab.consolidation.consolidate import consolidate, semantic_id
from openclaw_lab.consolidation.expiry import Expiry
from openclaw_lab.consolidation.merge import RestatementMerge, repointed
from openclaw_lab.consolidation.policies import ConsolidationPolicy, PrunePolicy
from openclaw_lab.consolidation.report import ConsolidationLog, ConsolidationReport
from openclaw_lab.consolidation.summaries import SessionSummaries
from openclaw_lab.consolidation.supersession import SUPERSEDED_BY, VALID_UNTIL, SupersessionRule
from openclaw_lab.model import MemoryItem
from openclaw_lab.stores.protocol import VectorStore

__all__ = [
    "ConsolidationStep", "Tiers", "ConsolidationPipeline", "PromoteAndDecay", "MarkSuperseded", "MarkExpired",
    "MergeRestatements", "Summarise", "write_marks",
]  # fmt: skip


class Tiers(Protocol):
    """What a step works on: the two tiers and the embedder (a ``MemoryManager`` is one)."""

    episodic: VectorStore
    semantic: VectorStore
    embedder: Any  # encode(texts) for steps that write new texts


class ConsolidationStep(Protocol):
    """One kind of consolidation: rewrites ``memory``'s tiers at ``now``; may return a report."""

    def apply(self, memory: Tiers, now: datetime) -> Any: ...


class ConsolidationPipeline:
    """Steps applied in order at each consolidation run; ``run`` returns the last report a step gave."""

    def __init__(self, steps: Sequence[ConsolidationStep]) -> None:
        for n, step in enumerate(steps):
            if not callable(getattr(step, "apply", None)):
                raise ValueError(f"steps[{n}]: {step!r} has no apply(memory, now) method")
        self.steps = list(steps)

    def run(self, memory: Tiers, now: datetime) -> Any:
        report = None
        for step in self.steps:
            report = step.apply(memory, now) or report
        return report

    def fresh(self) -> ConsolidationPipeline:
        """The same steps, with the state a step keeps across runs started anew (one pipeline per memory)."""
        return ConsolidationPipeline([step.fresh() if hasattr(step, "fresh") else step for step in self.steps])

    def replacing(self, kind: type, **changes: Any) -> ConsolidationPipeline:
        """A copy whose steps of ``kind`` (frozen dataclasses) have ``changes`` (a sweep's decay settings)."""
        return ConsolidationPipeline([replace(s, **changes) if isinstance(s, kind) else s for s in self.steps])

    def find(self, kind: type) -> Any:
        """The first step of ``kind``, or None."""
        return next((step for step in self.steps if isinstance(step, kind)), None)

    def __repr__(self) -> str:
        return f"ConsolidationPipeline({self.steps!r})"


@dataclass(frozen=True)
class PromoteAndDecay:
    """Promote episodic items to semantic memory (merging near-duplicates above ``merge_threshold``), then
    score both tiers by decay and prune below the threshold (``consolidate``); reports the run."""

    policy: ConsolidationPolicy = field(default_factory=ConsolidationPolicy)
    prune: PrunePolicy = field(default_factory=PrunePolicy)  # semantic items
    prune_episodic: PrunePolicy | None = None  # None: episodic items are never pruned
    merge_threshold: float | None = 0.95

    def apply(self, memory: Tiers, now: datetime) -> ConsolidationReport:
        log = memory.episodic if isinstance(memory.episodic, ConsolidationLog) else None
        return consolidate(memory.episodic, memory.semantic, now=now, policy=self.policy, prune=self.prune,
                           prune_episodic=self.prune_episodic, merge_threshold=self.merge_threshold, log=log)


def write_marks(memory: Tiers, marks: Sequence[MemoryItem]) -> None:
    """Write episodic items marked no longer valid, and copy their marks onto their semantic copies."""
    if not marks:
        return
    memory.episodic.upsert(list(marks))
    by_copy = {semantic_id(item.id): item for item in marks}
    copies = memory.semantic.get(list(by_copy))
    memory.semantic.upsert([copy.replace(metadata={**copy.metadata, **_validity(by_copy[copy.id])}) for copy in copies])


def _validity(item: MemoryItem) -> dict[str, Any]:
    return {key: item.metadata[key] for key in (SUPERSEDED_BY, VALID_UNTIL) if key in item.metadata}


@dataclass(frozen=True)
class MarkSuperseded:
    """Mark the episodic memories that a newer one replaces (``rule.marks``), and their semantic copies."""

    rule: SupersessionRule

    def apply(self, memory: Tiers, now: datetime) -> None:
        write_marks(memory, self.rule.marks(list(memory.episodic.items())))


@dataclass(frozen=True)
class MarkExpired:
    """Mark memories whose dates have passed (``Expiry``): semantic memory's own items (summaries hold dates
    too), then the episodic ones and their copies."""

    grace_days: float = 0.0

    @property
    def expiry(self) -> Expiry:
        return Expiry(self.grace_days)

    def apply(self, memory: Tiers, now: datetime) -> None:
        if marks := self.expiry.marks(list(memory.semantic.items()), now):
            memory.semantic.upsert(marks)
        write_marks(memory, self.expiry.marks(list(memory.episodic.items()), now))


@dataclass(frozen=True)
class MergeRestatements:
    """Join the restatements of each tier into one memory (the semantic copies are judged among themselves,
    as their episodic sources are); marks that named an absorbed memory name the one that absorbed it."""

    merge: RestatementMerge

    def apply(self, memory: Tiers, now: datetime) -> None:
        tiers, moved = (memory.episodic, memory.semantic), {}
        for tier in tiers:
            written, absorbed = self.merge.merged(list(tier.items()))
            if written:  # written before the absorbed are deleted: a crash between leaves a copy, never a lost turn
                tier.upsert(written)
                tier.delete(list(absorbed))
                moved |= absorbed
        for tier in tiers if moved else ():
            if marks := repointed(list(tier.items()), moved):
                tier.upsert(marks)


class Summarise:
    """Summarise each finished session into one semantic item, once (a pruned summary stays gone): the step
    remembers what it summarised, so each memory needs its own (``fresh``)."""

    def __init__(self, statements: int = 3, idle_hours: float = 1.0, speaker: str | None = "user") -> None:
        self.summaries = SessionSummaries(statements, idle_hours, speaker)
        self.done: set[str] = set()

    def fresh(self) -> Summarise:
        return Summarise(self.summaries.statements, self.summaries.idle_hours, self.summaries.speaker)

    def apply(self, memory: Tiers, now: datetime) -> None:
        written = self.summaries.summaries(list(memory.episodic.items()), now, frozenset(self.done))
        if written:
            vectors = memory.embedder.encode([item.content for item in written], progress=False)
            memory.semantic.upsert([item.replace(embedding=vector) for item, vector in zip(written, vectors)])
            self.done.update(item.id for item in written)

    def __repr__(self) -> str:
        return f"Summarise({self.summaries!r})"
