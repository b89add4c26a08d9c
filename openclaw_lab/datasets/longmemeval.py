"""LongMemEval (Wu et al., ICLR 2025): 500 questions, each with its own haystack of timestamped sessions.

One Conversation per question (id = question_id) holds that question's haystack in date order; a session
keeps its haystack session id and a turn is ``<session id>:<n>`` with n counted from 1 (as the official
retrieval code numbers turns). The file is streamed one question at a time (``iter_longmemeval``), so a
270 MB LongMemEval_S (or the much larger LongMemEval_M) never has to sit in memory as JSON.

>>> bench = load_longmemeval("tests/datasets/fixtures/lme_format_tiny.json", drop_abstention=True)
>>> bench.questions[0].evidence_session_ids
('answer_ana_city',)
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from openclaw_lab.errors import DataError
from openclaw_lab.datasets.datapath import check_sha256, find_dataset
from openclaw_lab.datasets.gcpause import gc_paused
from openclaw_lab.datasets.jsonstream import iter_json_array
from openclaw_lab.datasets.types import Benchmark, Conversation, FactLabels, LoadReport, Question, Session, Statement, Turn

__all__ = ["SPLITS", "load_longmemeval", "iter_longmemeval", "session_documents", "superseded_turns", "parse_longmemeval_date"]

SPLITS = ("s", "m", "oracle")
_REQUIRED = (
    "question_id",
    "question_type",
    "question",
    "answer",
    "question_date",
    "haystack_dates",
    "haystack_session_ids",
    "haystack_sessions",
    "answer_session_ids",
)
_DATE = re.compile(r"(\d{4})/(\d{1,2})/(\d{1,2})\s*(?:\([A-Za-z]{3}\))?\s*(\d{1,2}):(\d{2})")


def parse_longmemeval_date(text: str, field_name: str = "question_date") -> datetime:
    """Parse ``"2023/04/10 (Mon) 23:07"`` into an aware UTC datetime (the data has no zone).

    >>> parse_longmemeval_date("2023/04/10 (Mon) 23:07").isoformat()
    '2023-04-10T23:07:00+00:00'
    """
    match = _DATE.fullmatch(str(text).strip())
    if match is None:
        raise ValueError(f"{field_name}: {text!r} is not a date like '2023/04/10 (Mon) 23:07'")
    year, month, day, hour, minute = map(int, match.groups())
    return datetime(year, month, day, hour, minute, tzinfo=timezone.utc)


def superseded_turns(question_type: str, ordered: list[Session], evidence_sessions: list[str]) -> tuple[str, ...]:
    """A knowledge-update question's stale evidence: the answer turns of every evidence session but the latest
    one that has any (the answer is the newest statement). They stay evidence, as the official retrieval
    metrics count them; the stale-fact figures read them as the superseded statements.

    >>> s = lambda sid, day, *marks: Session(sid, datetime(2023, 1, day), tuple(Turn(f"{sid}:{n}", "user", "x", has_answer=m)
    ...                                                                        for n, m in enumerate(marks, 1)))
    >>> superseded_turns("knowledge-update", [s("a", 1, True, False), s("b", 2, False), s("c", 3, True)], ["a", "b", "c"])
    ('a:1',)
    >>> superseded_turns("single-session-user", [s("a", 1, True), s("c", 3, True)], ["a", "c"])
    ()
    """
    if question_type != "knowledge-update":
        return ()
    answering = [s for s in ordered if s.id in evidence_sessions and any(t.has_answer for t in s.turns)]
    return tuple(t.id for s in answering[:-1] for t in s.turns if t.has_answer)


def session_documents(conversation: Conversation) -> dict[str, str]:
    """The official retrieval protocol's session keys: each session's user turns joined by a space.

    >>> from datetime import datetime
    >>> s = Session("s1", datetime(2023, 1, 1), (Turn("s1:1", "user", "hi"), Turn("s1:2", "assistant", "yo"),
    ...     Turn("s1:3", "user", "bye")))
    >>> session_documents(Conversation("q", (s,)))
    {'s1': 'hi bye'}
    """
    return {
        session.id: " ".join(turn.text for turn in session.turns if turn.speaker == "user")
        for session in conversation.sessions
    }


def iter_longmemeval(
    path: str | Path,
    *,
    limit: int | None = None,
    drop_abstention: bool = False,
    report: LoadReport | None = None,
    chunk_size: int = 1 << 20,
) -> Iterator[tuple[Conversation, Question]]:
    """Yield (Conversation, Question) pairs from a LongMemEval file, reading one question at a time.

    ``limit`` stops after that many yielded questions (the rest of the file is not read); ``report``, if
    given, collects what was renamed or could not be resolved.

    >>> pairs = iter_longmemeval("tests/datasets/fixtures/lme_format_tiny.json", limit=1)
    >>> [(c.id, len(c.sessions)) for c, q in pairs]
    [('q_ana_city', 3)]
    """
    parser = _Parser(report if report is not None else LoadReport(), shared=None)
    try:
        yield from _pairs(path, parser, limit, drop_abstention, chunk_size)
    finally:
        parser.finish()


def load_longmemeval(
    path: str | Path | None = None,
    *,
    limit: int | None = None,
    drop_abstention: bool = False,
    split: str = "s",
    strict: bool = False,
) -> Benchmark:
    """Load a LongMemEval file (``longmemeval_<split>.json`` from the data path when ``path`` is None).

    Sessions that recur across questions with the same date and turns are one shared Session object, so
    memory holds each distinct session once. No sha256 is pinned upstream; the file's is recorded.

    >>> load_longmemeval("tests/datasets/fixtures/lme_format_tiny.json").report.summary()
    '0 evidence ids normalised, 0 unresolved; 1 haystacks reordered by date'
    """
    if split not in SPLITS:
        raise ValueError(f"split: {split!r} is not a LongMemEval split; choose one of {', '.join(SPLITS)}")
    path = Path(path) if path is not None else find_dataset("longmemeval", f"longmemeval_{split}.json")
    sha256, checksum_note = check_sha256(path, "longmemeval", strict=strict)
    report = LoadReport(notes=[checksum_note] if checksum_note else [])
    parser = _Parser(report, shared={})
    conversations, questions = [], []
    with gc_paused():
        for conversation, question in _pairs(path, parser, limit, drop_abstention, 1 << 20):
            conversations.append(conversation)
            questions.append(question)
    parser.finish()
    labels = FactLabels(parser.statements) if parser.statements else None
    return Benchmark("longmemeval", conversations, questions, sha256=sha256, source=str(path), report=report, labels=labels)


def _pairs(
    path: str | Path, parser: _Parser, limit: int | None, drop_abstention: bool, chunk_size: int
) -> Iterator[tuple[Conversation, Question]]:
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit: {limit!r} must be a non-negative int or None")
    if limit == 0:
        return
    yielded = 0
    records = iter_json_array(path, chunk_size=chunk_size)
    for index in itertools.count():
        try:
            raw = next(records)
        except StopIteration:
            break
        except ValueError as error:  # the file itself: truncated, or not a JSON array
            raise DataError(f"{path}: {error}; is the file whole?") from None
        if drop_abstention and isinstance(raw, dict) and str(raw.get("question_id", "")).endswith("_abs"):
            continue
        try:
            yield parser.parse(raw)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError) as error:
            what = f"the field {error} is missing" if isinstance(error, KeyError) else str(error)
            raise DataError(f"{path}: record {index} (question_id {_question_id(raw)!r}): {what}") from None
        yielded += 1
        if yielded == limit:
            return  # the rest of the file is never read
    if index == 0:
        raise DataError(f"{path}: holds no question records")


def _question_id(raw: Any) -> Any:
    return raw.get("question_id") if isinstance(raw, dict) else None


class _Parser:
    """Turns one raw question record into (Conversation, Question), counting quirks into a report."""

    def __init__(self, report: LoadReport, shared: dict[tuple[str, datetime], Session] | None) -> None:
        self.report, self.shared = report, shared
        self.renamed = self.reordered = 0
        self.statements: dict[str, Statement] = {}  # optional fact labels (``fact``, ``fact_version`` on a turn)

    def parse(self, raw: dict[str, Any]) -> tuple[Conversation, Question]:
        if not isinstance(raw, dict):
            raise ValueError(f"question: {type(raw).__name__} found where a question object was expected")
        question_id = str(raw.get("question_id", "?"))
        if missing := [key for key in _REQUIRED if key not in raw]:
            raise ValueError(f"{missing[0]}: missing in question {question_id} (needs {', '.join(_REQUIRED)})")
        ids, dates, bodies = raw["haystack_session_ids"], raw["haystack_dates"], raw["haystack_sessions"]
        if not len(ids) == len(dates) == len(bodies):
            raise ValueError(
                f"haystack_sessions: question {question_id} has {len(ids)} session ids, {len(dates)} dates "
                f"and {len(bodies)} sessions; they must match"
            )
        sessions = [self._session(s, d, b, question_id) for s, d, b in zip(self._unique(ids), dates, bodies)]
        ordered = sorted(sessions, key=lambda s: s.started_at)  # the oracle file is not sorted
        self._label(question_id, ordered, {session.id: body for session, body in zip(sessions, bodies)})
        self.reordered += ordered != sessions
        evidence_sessions = []
        known = {session.id for session in ordered}
        for session_id in map(str, raw["answer_session_ids"]):
            if session_id in known:
                evidence_sessions.append(session_id)
            else:
                self.report.unresolved.append((question_id, session_id))
        conversation = Conversation(
            question_id, tuple(ordered), ("user", "assistant"), {"question_type": raw["question_type"]}
        )
        question = Question(
            id=question_id,
            conversation_id=question_id,
            text=str(raw["question"]),
            answer=str(raw["answer"]),
            category=str(raw["question_type"]),
            asked_at=parse_longmemeval_date(raw["question_date"], f"question_date of {question_id}"),
            evidence_turn_ids=tuple(t.id for s in ordered for t in s.turns if t.has_answer),
            evidence_session_ids=tuple(dict.fromkeys(evidence_sessions)),
            has_answer_session_ids=tuple(dict.fromkeys(
                s.id for s in ordered if s.id in evidence_sessions and any(t.has_answer and t.speaker == "user" for t in s.turns)
            )),  # fmt: skip
            abstention=question_id.endswith("_abs"),
            superseded_turn_ids=superseded_turns(raw["question_type"], ordered, evidence_sessions),
        )
        return conversation, question

    def _label(self, question_id: str, ordered: list[Session], bodies: dict[str, list[dict[str, Any]]]) -> None:
        """Fact labels, where turns carry them: ``fact`` (a key unique within the question) and ``fact_version``
        (1, 2, …); each version supersedes the first statement of the version before it."""
        first: dict[tuple[str, int], str] = {}
        found = []
        for session in ordered:
            for turn, raw in zip(session.turns, bodies[session.id]):
                if "fact" not in raw:
                    continue
                fact, version = raw["fact"], raw.get("fact_version", 1)
                if not isinstance(fact, str) or not fact or isinstance(version, bool) or not isinstance(version, int) or version < 1:
                    raise ValueError(f"fact/fact_version: turn {turn.id} in {question_id} has {fact!r}/{version!r}; "
                                     "expected a non-empty key and a version >= 1")  # fmt: skip
                key = f"{question_id}/{fact}"
                first.setdefault((key, version), turn.id)
                found.append((turn.id, key, version))
        for turn_id, key, version in found:
            self.statements.setdefault(turn_id, Statement(turn_id, key, version, first.get((key, version - 1))))

    def _unique(self, session_ids: list[Any]) -> list[str]:
        # Turn ids embed the session id, so a session id repeated in one haystack would repeat turn ids.
        seen: dict[str, int] = {}
        unique = []
        for session_id in map(str, session_ids):
            seen[session_id] = seen.get(session_id, 0) + 1
            unique.append(session_id if seen[session_id] == 1 else f"{session_id}#{seen[session_id]}")
        self.renamed += len(unique) - len(seen)
        return unique

    def _session(self, session_id: str, date: str, body: list[dict[str, Any]], question_id: str) -> Session:
        started_at = parse_longmemeval_date(date, f"haystack_dates of {question_id} ({session_id})")
        turns = tuple(_turn(session_id, index, raw, question_id) for index, raw in enumerate(body, 1))
        if self.shared is None:
            return Session(session_id, started_at, turns)
        cached = self.shared.get((session_id, started_at))
        if cached is not None and cached.turns == turns:
            return cached
        session = Session(session_id, started_at, turns)
        self.shared.setdefault((session_id, started_at), session)
        return session

    def finish(self) -> None:
        """Write the counts of renamed session ids and reordered haystacks into the report."""
        if self.renamed:
            self.report.notes.append(f"{self.renamed} session ids repeated within a haystack renamed to <id>#<n>")
        if self.reordered:
            self.report.notes.append(f"{self.reordered} haystacks reordered by date")


def _turn(session_id: str, index: int, raw: dict[str, Any], question_id: str) -> Turn:
    content = raw.get("content")
    if not isinstance(content, str) or "role" not in raw:
        raise ValueError(
            f"haystack_sessions: turn {index} of session {session_id} in {question_id} needs a role and a "
            f"string content, got {sorted(raw)}"
        )
    return Turn(f"{session_id}:{index}", str(raw["role"]), content, has_answer=bool(raw.get("has_answer", False)))
