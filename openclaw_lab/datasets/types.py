"""The shapes every dataset loader returns: conversations of sessions of turns, and questions.

Turn ids are the dataset's own (LoCoMo ``D3:12``; LongMemEval ``<session id>:<turn index>``), so that a
retrieved memory maps back to evidence through its ``source_ids``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

__all__ = ["Turn", "Session", "Conversation", "Question", "LoadReport", "Benchmark", "Statement", "FactLabels"]


@dataclass(frozen=True)
class Turn:
    id: str
    speaker: str
    text: str
    caption: str = ""  # an image caption where the dataset has one (LoCoMo's blip_caption)
    has_answer: bool = False  # LongMemEval's turn-level evidence flag


@dataclass(frozen=True)
class Session:
    id: str
    started_at: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Conversation:
    """One user's history: sessions in chronological order."""

    id: str
    sessions: tuple[Session, ...]
    speakers: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    """A question about one conversation, asked at ``asked_at``, with its evidence ids."""

    id: str
    conversation_id: str
    text: str
    answer: str
    category: str
    asked_at: datetime
    evidence_turn_ids: tuple[str, ...] = ()
    evidence_session_ids: tuple[str, ...] = ()  # label set "answer-sessions": every session the dataset names
    abstention: bool = False
    # label set "has-answer" (LongMemEval's evaluation rule): the answer sessions holding a user turn marked
    # has_answer; None where a dataset has no such marks
    has_answer_session_ids: tuple[str, ...] | None = None
    superseded_turn_ids: tuple[str, ...] = ()  # earlier statements of the fact that the evidence replaced


@dataclass
class LoadReport:
    """What the loader normalised or could not resolve; nothing is dropped silently."""

    normalised: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)  # (question id, raw, ids)
    unresolved: list[tuple[str, str]] = field(default_factory=list)  # (question id, raw evidence id)
    notes: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (what: "turn D1:3" / "question q7", why)

    def skip(self, what: str, why: str) -> None:
        """Count a record that could not be used, and why."""
        self.skipped.append((what, why))

    @property
    def skipped_questions(self) -> int:
        return sum(what.startswith("question") for what, _ in self.skipped)

    def summary(self) -> str:
        skipped = ""
        if self.skipped:
            what, why = self.skipped[0]
            labels = sum(what.startswith("label") for what, _ in self.skipped)
            turns = len(self.skipped) - self.skipped_questions - labels
            counted = f"{self.skipped_questions} questions and {turns} turns" + (f" and {labels} labels" if labels else "")
            skipped = f"; skipped {counted} (first: {what}: {why})"
        return (
            f"{len(self.normalised)} evidence ids normalised, {len(self.unresolved)} unresolved"
            + skipped + "".join(f"; {note}" for note in self.notes)
        )


@dataclass(frozen=True)
class Statement:
    """A turn that states a fact: which fact (subject and attribute), its version, what it replaced."""

    turn_id: str
    fact: str  # "<conversation>/<subject>|<attribute>": unique in the dataset (names recur across conversations)
    version: int  # 1 for the first statement, then 2, 3, … for each update
    supersedes: str | None = None  # the turn id of the statement it replaced
    retracted: bool = False  # this version says the fact no longer holds


@dataclass
class FactLabels:
    """Ground truth for consolidation: every fact statement, and restatements labelled as duplicates."""

    statements: dict[str, Statement] = field(default_factory=dict)  # turn id -> statement
    duplicates: list[tuple[str, str]] = field(default_factory=list)  # (statement turn, its paraphrase's turn)
    expires: dict[str, datetime] = field(default_factory=dict)  # turn id of a plan -> when its date has passed

    def validated(self, turn_ids: Collection[str], report: LoadReport) -> FactLabels:
        """These labels without the ones that cannot be right, each counted in ``report`` (never an error):
        a statement of no dataset turn, one that supersedes no statement or whose supersedes chain cycles,
        a duplicate pair or an expiring plan naming an unknown turn.

        >>> labels = FactLabels({"t1": Statement("t1", "a", 2, "t2"), "t2": Statement("t2", "a", 1, "t1"),
        ...                      "t3": Statement("t3", "b", 2, "t9")}, [("t3", "t7")])
        >>> report = LoadReport()
        >>> labels.validated({"t1", "t2", "t3"}, report).statements, [what for what, _ in report.skipped]
        ({}, ['label t1', 'label t2', 'label t3', 'label t3~t7'])
        """
        kept: dict[str, Statement] = {}
        for turn, statement in self.statements.items():
            problem = None
            if turn not in turn_ids:
                problem = "names no turn of the dataset"
            elif statement.supersedes is not None and statement.supersedes not in self.statements:
                problem = f"supersedes {statement.supersedes!r}, which is no labelled statement"
            elif self._on_cycle(turn):
                problem = "its chain of supersedes links runs into a cycle"
            if problem:
                report.skip(f"label {turn}", problem)
            else:
                kept[turn] = statement
        pairs = []
        for a, b in self.duplicates:
            if a in turn_ids and b in turn_ids:
                pairs.append((a, b))
            else:
                report.skip(f"label {a}~{b}", "a duplicate pair naming a turn not in the dataset")
        expires = {}
        for turn, end in self.expires.items():
            if turn in turn_ids:
                expires[turn] = end
            else:
                report.skip(f"label {turn}", "an expiring plan naming no turn of the dataset")
        return FactLabels(kept, pairs, expires)

    def _on_cycle(self, turn: str) -> bool:
        seen, current = {turn}, self.statements[turn].supersedes
        while current is not None and current in self.statements:
            if current in seen:
                return True
            seen.add(current)
            current = self.statements[current].supersedes
        return False

    @property
    def superseded(self) -> set[str]:
        """Turn ids of statements (restatements included) of a value that a later version replaced."""
        latest: dict[str, int] = {}
        for s in self.statements.values():
            latest[s.fact] = max(latest.get(s.fact, 0), s.version)
        return {s.turn_id for s in self.statements.values() if s.version < latest[s.fact]}


@dataclass
class Benchmark:
    """A loaded dataset: conversations, questions, its file's sha256 and the load report."""

    name: str
    conversations: list[Conversation]
    questions: list[Question]
    sha256: str = ""
    source: str = ""
    report: LoadReport = field(default_factory=LoadReport)
    labels: FactLabels | None = None  # consolidation ground truth, where the dataset has it (synthetic)

    def conversation(self, conversation_id: str) -> Conversation:
        for conversation in self.conversations:
            if conversation.id == conversation_id:
                return conversation
        raise ValueError(f"conversation_id: {conversation_id!r} is not in {self.name}")

    def subset(self, conversation_ids: list[str] | None = None, limit: int | None = None) -> Benchmark:
        """The same benchmark restricted to some conversations (by id, or the first ``limit``)."""
        keep = [c for c in self.conversations if conversation_ids is None or c.id in conversation_ids][:limit]
        ids = {c.id for c in keep}
        if conversation_ids is not None and (unknown := set(conversation_ids) - ids):
            raise ValueError(f"conversation_ids: {sorted(unknown)} are not in {self.name}")
        questions = [q for q in self.questions if q.conversation_id in ids]
        return Benchmark(self.name, keep, questions, self.sha256, self.source, self.report, self.labels)
