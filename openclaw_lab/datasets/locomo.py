"""LoCoMo (Maharana et al., ACL 2024): ten long conversations with question-answer annotations.

Schema, category ids and quirks: datasets/locomo/CARD.md. Turns keep the dataset's ``dia_id``
(``D3:12``, unique within a conversation); sessions are ``<sample_id>:session_<n>`` (unique across
conversations). Malformed evidence ids are fixed where the fix is unambiguous and recorded in the
load report; the rest are reported as unresolved, never dropped silently.

>>> bench = load_locomo(conversations=1)  # doctest: +SKIP
>>> bench.questions[0].id, bench.questions[0].category  # doctest: +SKIP
('conv-26:q0', 'temporal')
"""

from __future__ import annotations

import json
import re
from collections.abc import Container, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from openclaw_lab.datasets.datapath import check_sha256, find_dataset
from openclaw_lab.errors import DataError
from openclaw_lab.datasets.types import Benchmark, Conversation, LoadReport, Question, Session, Turn

__all__ = ["CATEGORIES", "QUESTION_DELAY", "load_locomo", "parse_locomo_date", "resolve_evidence"]

# Integer ids per the official eval code (they do not follow the paper's listing order).
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
# Questions come a day after the last session began: after all of its turns under any per-turn clock
# step below ~30 minutes, and too short to matter for decay over a history of months.
QUESTION_DELAY = timedelta(days=1)

_MONTHS = {
    name: number
    for number, name in enumerate(
        "january february march april may june july august september october november december".split(), 1
    )
}
_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})")
_SESSION_KEY = re.compile(r"session_(\d+)")
_DATE_KEY = re.compile(r"session_(\d+)_date_time")
_SEPARATORS = re.compile(r"[;,\s]+")
_LOOSE_ID = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")


def parse_locomo_date(text: str, field_name: str = "date_time") -> datetime:
    """Parse LoCoMo's ``"1:56 pm on 8 May, 2023"`` into an aware UTC datetime (the data has no zone).

    >>> parse_locomo_date("1:56 pm on 8 May, 2023").isoformat()
    '2023-05-08T13:56:00+00:00'
    """
    match = _DATE.fullmatch(text.strip().lower())
    if match is None or match.group(5) not in _MONTHS:
        raise ValueError(f"{field_name}: {text!r} is not a date like '1:56 pm on 8 May, 2023'")
    hour, minute, half, day, month, year = match.groups()
    hour_24 = int(hour) % 12 + (12 if half == "p" else 0)
    return datetime(int(year), _MONTHS[month], int(day), hour_24, int(minute), tzinfo=timezone.utc)


def resolve_evidence(
    question_id: str, raw_ids: Sequence[Any], known: Container[str], report: LoadReport
) -> tuple[str, ...]:
    """Map raw evidence ids to known turn ids, recording every fix and every failure in ``report``.

    ``"D8:6; D9:17"`` splits into two ids; ``"D:11:26"`` and ``"D30:05"`` become ``D11:26`` and ``D30:5``
    only when that turn exists. Ids that still do not resolve go to ``report.unresolved``.

    >>> report = LoadReport()
    >>> resolve_evidence("q", ["D1:2; D1:03", "D9:9"], {"D1:2", "D1:3"}, report)
    ('D1:2', 'D1:3')
    >>> report.normalised, report.unresolved
    ([('q', 'D1:2; D1:03', ('D1:2', 'D1:3'))], [('q', 'D9:9')])
    """
    resolved: list[str] = []
    for raw in raw_ids:
        text = str(raw)
        if text in known:
            resolved.append(text)
            continue
        fixed = []
        for token in filter(None, _SEPARATORS.split(text.strip())):
            candidate = token if token in known else _canonical(token)
            if candidate is not None and candidate in known:
                fixed.append(candidate)
            else:
                report.unresolved.append((question_id, token))
        if fixed:
            report.normalised.append((question_id, text, tuple(fixed)))
        if not fixed and not text.strip():
            report.unresolved.append((question_id, text))
        resolved.extend(fixed)
    return tuple(dict.fromkeys(resolved))


def _canonical(token: str) -> str | None:
    match = _LOOSE_ID.fullmatch(token)
    return f"D{int(match.group(1))}:{int(match.group(2))}" if match else None


def load_locomo(
    path: str | Path | None = None, *, conversations: Sequence[str] | int | None = None, strict: bool = False
) -> Benchmark:
    """Load locomo10.json (from the data path when ``path`` is None) into a Benchmark.

    ``conversations`` keeps some samples: a list of sample ids, or an int for the first n. A file named
    locomo10.json whose sha256 differs from the pinned one warns (``strict=True`` raises).

    >>> load_locomo(conversations=["conv-26"]).report.summary()  # doctest: +SKIP
    '1 evidence ids normalised, 0 unresolved; conv-26: 16 date-only sessions without turns skipped (...)'
    """
    path = Path(path) if path is not None else find_dataset("locomo")
    sha256, checksum_note = check_sha256(path, "locomo", strict=strict)
    with open(path, encoding="utf-8") as handle:
        try:
            data = json.load(handle)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise DataError(f"{path}: not a whole JSON file ({error}); is it truncated?") from None
    if not isinstance(data, list) or not data or not all(isinstance(sample, dict) for sample in data):
        raise DataError(f"{path}: expected a non-empty list of conversation objects (LoCoMo's locomo10.json)")
    samples = _select(data, conversations, path)
    report = LoadReport(notes=[checksum_note] if checksum_note else [])
    loaded, questions = [], []
    for index, sample in enumerate(samples):
        where = f"{path}: record {index} (sample_id {sample.get('sample_id')!r})"
        try:
            conversation = _conversation(sample, report)
            loaded.append(conversation)
            questions.extend(_questions(sample, conversation, report))
        except KeyError as missing:
            raise DataError(f"{where}: the field {missing} is missing") from None
        except (TypeError, AttributeError, ValueError, IndexError) as error:
            raise DataError(f"{where}: {error}") from None
    if missing := sum(not q.evidence_turn_ids for q in questions):
        report.notes.append(f"{missing} questions have no resolvable evidence turn")
    return Benchmark("locomo", loaded, questions, sha256=sha256, source=str(path), report=report)


def _select(
    samples: list[dict[str, Any]], conversations: Sequence[str] | int | None, path: Path
) -> list[dict[str, Any]]:
    if conversations is None:
        return samples
    if isinstance(conversations, int) and not isinstance(conversations, bool):
        if conversations < 1:
            raise ValueError(f"conversations: {conversations} must be at least 1 (or a list of sample ids)")
        return samples[:conversations]
    if isinstance(conversations, str):
        raise ValueError(f"conversations: {conversations!r} must be a list of sample ids, not one string")
    if missing := [i for i, sample in enumerate(samples) if "sample_id" not in sample]:
        raise DataError(f"{path}: record {missing[0]}: the field 'sample_id' is missing")
    by_id = {sample["sample_id"]: sample for sample in samples}
    if unknown := [c for c in conversations if c not in by_id]:
        raise ValueError(f"conversations: {unknown} are not in LoCoMo; choose from {', '.join(by_id)}")
    return [by_id[c] for c in conversations]


def _conversation(sample: dict[str, Any], report: LoadReport) -> Conversation:
    sample_id, raw = sample["sample_id"], sample["conversation"]
    numbers = sorted(int(m.group(1)) for key in raw if (m := _SESSION_KEY.fullmatch(key)))
    dated = sorted(int(m.group(1)) for key in raw if (m := _DATE_KEY.fullmatch(key)))
    # conv-26 quirk: date entries with no session (or an empty one) carry no turns to replay.
    empty = [n for n in dated if not raw.get(f"session_{n}")]
    if empty:
        report.notes.append(
            f"{sample_id}: {len(empty)} date-only sessions without turns skipped "
            f"(session_{empty[0]}..session_{empty[-1]})"
        )
    sessions = [_session(sample_id, n, raw, report) for n in numbers if raw[f"session_{n}"]]
    ordered = sorted(sessions, key=lambda s: s.started_at)
    if ordered != sessions:
        report.notes.append(f"{sample_id}: sessions reordered by date")
    seen: set[str] = set()
    for turn in (t for s in ordered for t in s.turns):
        if turn.id in seen:
            raise ValueError(f"dia_id: {turn.id!r} occurs twice in {sample_id}; turn ids must be unique")
        seen.add(turn.id)
    speakers = (raw.get("speaker_a", ""), raw.get("speaker_b", ""))
    metadata = {"skipped_sessions": [f"session_{n}" for n in empty]} if empty else {}
    return Conversation(sample_id, tuple(ordered), speakers, metadata)


def _session(sample_id: str, number: int, raw: dict[str, Any], report: LoadReport) -> Session:
    field_name = f"{sample_id} session_{number}_date_time"
    if f"session_{number}_date_time" not in raw:
        raise ValueError(f"{field_name}: missing for a session with turns")
    started_at = parse_locomo_date(str(raw[f"session_{number}_date_time"]), field_name)
    body = raw[f"session_{number}"]
    if not isinstance(body, list):
        raise ValueError(f"session_{number}: expected a list of turns, got {type(body).__name__}")
    turns = [turn for n, t in enumerate(body) if (turn := _turn(t, f"{sample_id} session_{number} turn {n}", report))]
    return Session(f"{sample_id}:session_{number}", started_at, tuple(turns))


def _turn(raw: Any, where: str, report: LoadReport) -> Turn | None:
    """A turn, or None (counted in the report) when it has no usable id, speaker or text."""
    if not isinstance(raw, dict):
        report.skip(f"turn {where}", f"a {type(raw).__name__}, not a turn object")
        return None
    for key in ("dia_id", "speaker", "text"):
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip() or "\x00" in value:
            report.skip(f"turn {raw.get('dia_id', where)}", f"{key} is {value!r}, not text")
            return None
    caption = raw.get("blip_caption", "")
    return Turn(raw["dia_id"], raw["speaker"], raw["text"], caption=caption if isinstance(caption, str) else "")


def _questions(sample: dict[str, Any], conversation: Conversation, report: LoadReport) -> list[Question]:
    if not conversation.sessions:
        raise ValueError("conversation: no session has turns, so no question can be asked")
    session_of = {turn.id: session.id for session in conversation.sessions for turn in session.turns}
    asked_at = conversation.sessions[-1].started_at + QUESTION_DELAY
    questions = []
    raw_questions = sample["qa"]
    if not isinstance(raw_questions, list):
        raise ValueError(f"qa: expected a list of questions, got {type(raw_questions).__name__}")
    for index, qa in enumerate(raw_questions):
        question_id = f"{conversation.id}:q{index}"
        if problem := _question_problem(qa):
            report.skip(f"question {question_id}", problem)
            continue
        answer = qa.get("answer")
        if answer is None:
            answer = qa.get("adversarial_answer", "")
        turn_ids = resolve_evidence(question_id, _evidence_list(question_id, qa.get("evidence", []), report),
                                    session_of, report)  # fmt: skip
        questions.append(
            Question(
                id=question_id,
                conversation_id=conversation.id,
                text=qa["question"],
                answer=str(answer),
                category=CATEGORIES[qa["category"]],
                asked_at=asked_at,
                evidence_turn_ids=turn_ids,
                evidence_session_ids=tuple(dict.fromkeys(session_of[t] for t in turn_ids)),
                abstention=qa["category"] == 5,
            )
        )
    return questions


def _question_problem(qa: Any) -> str:
    """Why a raw question cannot be asked ('' when it can)."""
    if not isinstance(qa, dict):
        return f"a {type(qa).__name__}, not a question object"
    if not isinstance(qa.get("question"), str) or not qa["question"].strip():
        return f"question is {qa.get('question')!r}, not text"
    if qa.get("category") not in CATEGORIES:
        return f"category {qa.get('category')!r} is not one of {', '.join(f'{k} {v}' for k, v in CATEGORIES.items())}"
    return ""


def _evidence_list(question_id: str, raw: Any, report: LoadReport) -> list[Any]:
    """Evidence as a list: one id given as a string becomes a list of it; anything else is unresolved."""
    if isinstance(raw, list):
        return raw
    if isinstance(raw, str):
        report.normalised.append((question_id, raw, (raw,)))
        return [raw]
    report.unresolved.append((question_id, repr(raw)))
    return []
