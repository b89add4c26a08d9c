"""The synthetic generator: determinism, exact sizes, evidence that resolves, dates, categories, scale."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections import Counter
from datetime import timedelta

import pytest

from openclaw_lab.harness.registry import datasets
from openclaw_lab.datasets import Benchmark, generate
from openclaw_lab.datasets.synthetic import CATEGORIES, MIN_SESSION_GAP_MINUTES, QUESTION_DELAY


def digest(bench: Benchmark) -> str:
    """A stable digest of everything generated."""
    parts = [repr(bench.questions)] + [repr(c) for c in bench.conversations]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def turn_count(bench: Benchmark) -> int:
    return sum(len(s.turns) for c in bench.conversations for s in c.sessions)


@pytest.fixture(scope="module")
def bench() -> Benchmark:
    return generate(3000, seed=7)


def test_same_seed_same_benchmark_different_seed_different():
    first, again, other = generate(600, seed=1), generate(600, seed=1), generate(600, seed=2)
    assert first.conversations == again.conversations and first.questions == again.questions
    assert first.sha256 == again.sha256
    texts = lambda b: [t.text for c in b.conversations for s in c.sessions for t in s.turns]  # noqa: E731
    assert texts(first) != texts(other)
    assert first.sha256 != other.sha256


def test_output_does_not_depend_on_the_hash_seed():
    code = (
        "import hashlib; from openclaw_lab.datasets import generate; b = generate(600, seed=1); "
        "parts = [repr(b.questions)] + [repr(c) for c in b.conversations]; "
        "print(hashlib.sha256(chr(10).join(parts).encode()).hexdigest())"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert child.stdout.strip() == digest(generate(600, seed=1))


@pytest.mark.parametrize(("n_turns", "n_conversations", "expected"), [(100, None, 1), (1001, 3, 3), (5400, None, 5)])
def test_the_turn_count_is_exact(n_turns, n_conversations, expected):
    made = generate(n_turns, n_conversations=n_conversations)
    assert turn_count(made) == n_turns
    assert len(made.conversations) == expected
    sizes = [sum(len(s.turns) for s in c.sessions) for c in made.conversations]
    assert max(sizes) - min(sizes) <= 1


def test_every_evidence_id_resolves_to_a_turn_of_its_conversation(bench):
    ids = [t.id for c in bench.conversations for s in c.sessions for t in s.turns]
    assert len(ids) == len(set(ids))  # unique across the whole benchmark
    by_id = {c.id: c for c in bench.conversations}
    for question in bench.questions:
        conversation = by_id[question.conversation_id]
        session_of = {t.id: s.id for s in conversation.sessions for t in s.turns}
        assert question.evidence_turn_ids and all(t in session_of for t in question.evidence_turn_ids)
        assert set(question.evidence_session_ids) == {session_of[t] for t in question.evidence_turn_ids}
        assert question.asked_at == conversation.sessions[-1].started_at + QUESTION_DELAY


def test_answers_are_in_their_evidence(bench):
    turns = {t.id: (t, s) for c in bench.conversations for s in c.sessions for t in s.turns}
    for question in bench.questions:
        evidence = [turns[t] for t in question.evidence_turn_ids]
        if question.category == "temporal":
            (turn, session), = evidence
            day = session.started_at
            assert question.answer == f"{day.day} {day.strftime('%B')} {day.year}"
            assert any(word in turn.text.lower() for word in ("today", "this morning", "this afternoon"))
        elif question.category == "multi-fact":
            values = question.answer.split("; ")
            assert len(values) == len(evidence) == 2
            assert all(value in turn.text for value, (turn, _) in zip(values, evidence))
        else:
            (turn, _), = evidence
            assert question.answer in turn.text and turn.speaker == "user"


def test_updated_facts_point_at_an_update_after_the_first_statement(bench):
    conversations = {c.id: c for c in bench.conversations}
    updated = [q for q in bench.questions if q.category == "updated-fact"]
    about_people = 0
    for question in updated:
        sessions = conversations[question.conversation_id].sessions
        turns = [(t, n) for n, s in enumerate(sessions) for t in s.turns if t.speaker == "user"]
        names = [w for w in question.text.rstrip("?").split()[1:] if w[0].isupper() and w != "I"]
        if not names:
            continue  # the user's own fact ("Where do I live now?")
        about_people += 1
        mentions = [(t, n) for t, n in turns if re.search(rf"\b{names[0]}\b", t.text)]
        evidence = next(n for t, n in turns if t.id == question.evidence_turn_ids[0])
        assert mentions[0][1] < evidence  # first stated in an earlier session, updated later
        assert question.answer not in mentions[0][0].text or mentions[0][0].id == question.evidence_turn_ids[0]
    assert about_people >= 5


def test_categories_and_questions_cover_the_four_kinds(bench):
    counts = Counter(q.category for q in bench.questions)
    assert set(counts) == set(CATEGORIES) - {"retracted-fact"}  # retractions only with retraction_rate
    assert all(counts[c] >= 5 for c in counts)
    asked = [(q.conversation_id, q.text) for q in bench.questions]
    assert len(set(asked)) == len(asked)  # within a conversation a question names one fact
    assert len({q.id for q in bench.questions}) == len(bench.questions)


def test_sessions_alternate_speakers_and_spread_over_months(bench):
    for conversation in bench.conversations:
        starts = [s.started_at for s in conversation.sessions]
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        assert min(gaps) >= timedelta(minutes=MIN_SESSION_GAP_MINUTES)
        assert starts[-1] - starts[0] > timedelta(days=90)
        assert all(t.tzinfo is not None for t in starts)
        for session in conversation.sessions:
            assert [t.speaker for t in session.turns[:4]] == ["user", "assistant", "user", "assistant"][
                : len(session.turns)
            ]
            assert 1 <= len(session.turns) <= 30


def test_a_long_single_conversation_spans_longer_than_span_days():
    made = generate(20_000, n_conversations=1, span_days=10)
    starts = [s.started_at for s in made.conversations[0].sessions]
    assert min(b - a for a, b in zip(starts, starts[1:])) >= timedelta(minutes=MIN_SESSION_GAP_MINUTES)
    texts = [q.text for q in made.questions]
    assert len(set(texts)) == len(texts)  # names stay unique in one long conversation


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n_turns": 0}, "^n_turns: 0"),
        ({"n_turns": 10, "n_conversations": 11}, "^n_conversations: 11"),
        ({"fact_rate": 1.5}, "^fact_rate: 1.5"),
        ({"fact_rate": 0.7, "update_rate": 0.5}, "^update_rate: fact_rate"),
        ({"session_turns": (0, 3)}, "^session_turns: "),
        ({"span_days": 0}, "^span_days: 0"),
        ({"start": "next monday"}, "^start: 'next monday'"),
    ],
)
def test_bad_parameters_name_the_field(params, message):
    with pytest.raises(ValueError, match=message):
        generate(**params)


def test_no_facts_means_no_questions():
    made = generate(200, fact_rate=0.0, update_rate=0.0)
    assert made.questions == [] and turn_count(made) == 200


def test_scale_one_hundred_thousand_turns():
    made = generate(100_000, seed=0)
    assert turn_count(made) == 100_000 and len(made.conversations) == 100
    assert len(made.questions) > 3_000


def test_the_registry_name_generates():
    made = datasets.create("synthetic", n_turns=300, seed=4, session_turns=[6, 12])
    assert made.name == "synthetic" and turn_count(made) == 300
    assert "n_turns=300, seed=4" in made.source
