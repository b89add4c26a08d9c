"""LongMemEval: the public format on a hand-written fixture, quirks, and streaming in bounded memory."""

from __future__ import annotations

import json
import tracemalloc
from datetime import datetime, timezone
from pathlib import Path

import pytest

from openclaw_lab.errors import DataError
from openclaw_lab.harness.registry import datasets
from openclaw_lab.datasets import LoadReport, iter_longmemeval, load_longmemeval, session_documents
from openclaw_lab.datasets.longmemeval import parse_longmemeval_date

TINY = Path(__file__).parent / "fixtures" / "lme_format_tiny.json"


@pytest.fixture(scope="module")
def tiny():
    return load_longmemeval(TINY)


def test_dates_parse_with_or_without_the_weekday():
    assert parse_longmemeval_date("2023/04/10 (Mon) 23:07") == datetime(2023, 4, 10, 23, 7, tzinfo=timezone.utc)
    assert parse_longmemeval_date("2023/4/1 08:05") == datetime(2023, 4, 1, 8, 5, tzinfo=timezone.utc)
    with pytest.raises(ValueError, match="^haystack_dates: '10 April 2023'"):
        parse_longmemeval_date("10 April 2023", "haystack_dates")


def test_one_conversation_per_question_with_its_haystack(tiny):
    assert [q.id for q in tiny.questions] == [
        "q_ana_city", "q_ana_now", "q_cello_weeks", "q_names", "q_soup_tip", "q_brother_city_abs",
    ]
    assert [c.id for c in tiny.conversations] == [q.id for q in tiny.questions]
    assert all(q.conversation_id == q.id for q in tiny.questions)
    first = tiny.conversations[0]
    assert [s.id for s in first.sessions] == ["sharegpt_filler_1", "answer_ana_city", "ultrachat_filler_2"]
    assert [t.id for t in first.sessions[1].turns] == [f"answer_ana_city:{n}" for n in (1, 2, 3, 4)]
    assert first.sessions[1].turns[0].speaker == "user" and first.sessions[1].turns[0].has_answer
    assert not first.sessions[0].turns[0].has_answer  # filler turns carry no has_answer key
    assert first.sessions[1].started_at == datetime(2023, 3, 2, 10, 15, tzinfo=timezone.utc)
    assert first.speakers == ("user", "assistant")
    assert first.metadata == {"question_type": "single-session-user"}


def test_questions_carry_evidence_answers_and_dates(tiny):
    by_id = {q.id: q for q in tiny.questions}
    update = by_id["q_ana_now"]
    assert update.category == "knowledge-update" and update.answer == "Lyon"
    assert update.evidence_session_ids == ("answer_ana_city", "answer_ana_lyon")
    assert update.evidence_turn_ids == ("answer_ana_city:1", "answer_ana_lyon:1")
    assert update.asked_at == datetime(2023, 5, 10, 9, 30, tzinfo=timezone.utc)
    assert by_id["q_cello_weeks"].answer == "4"  # an int answer in the data
    assert by_id["q_soup_tip"].evidence_turn_ids == ("answer_soup_tip:2",)  # the assistant's turn
    assert [q.id for q in tiny.questions if q.abstention] == ["q_brother_city_abs"]


def test_an_unsorted_haystack_is_put_in_date_order(tiny):
    names = tiny.conversation("q_names")
    assert [s.id for s in names.sessions] == ["answer_cello_start", "sharegpt_filler_1", "answer_ana_city"]
    assert tiny.report.notes == ["1 haystacks reordered by date"]
    assert tiny.report.normalised == [] and tiny.report.unresolved == []


def test_recurring_sessions_are_shared_objects(tiny):
    filler = [s for c in tiny.conversations for s in c.sessions if s.id == "sharegpt_filler_1"]
    assert len(filler) == 6 and all(s is filler[0] for s in filler)


def test_session_documents_join_the_user_turns(tiny):
    documents = session_documents(tiny.conversations[0])
    assert documents["answer_ana_city"] == (
        "My sister Ana just moved to Porto for her new job. Yes, she already loves the river views."
    )
    assert list(documents) == ["sharegpt_filler_1", "answer_ana_city", "ultrachat_filler_2"]


def test_limit_and_drop_abstention(tiny):
    assert [q.id for q in load_longmemeval(TINY, limit=2).questions] == ["q_ana_city", "q_ana_now"]
    kept = load_longmemeval(TINY, drop_abstention=True)
    assert len(kept.questions) == 5 and not any(q.abstention for q in kept.questions)
    assert load_longmemeval(TINY, limit=0).questions == []
    with pytest.raises(ValueError, match="^limit: -1"):
        load_longmemeval(TINY, limit=-1)


def test_iter_yields_pairs_and_fills_a_report():
    report = LoadReport()
    pairs = list(iter_longmemeval(TINY, report=report, drop_abstention=True))
    assert [(c.id, q.id) for c, q in pairs] == [(q.id, q.id) for _, q in pairs]
    assert len(pairs) == 5 and report.notes == ["1 haystacks reordered by date"]


def record(question_id="q1", sessions=None, answer_session_ids=("s1",)) -> dict:
    sessions = sessions or [("s1", "2023/01/01 (Sun) 10:00", [("user", "hello", True), ("assistant", "hi", None)])]
    return {
        "question_id": question_id,
        "question_type": "single-session-user",
        "question": "What?",
        "answer": "hello",
        "question_date": "2023/02/01 (Wed) 10:00",
        "haystack_dates": [date for _, date, _ in sessions],
        "haystack_session_ids": [sid for sid, _, _ in sessions],
        "haystack_sessions": [
            [{"role": r, "content": c, **({} if h is None else {"has_answer": h})} for r, c, h in turns]
            for _, _, turns in sessions
        ],
        "answer_session_ids": list(answer_session_ids),
    }


def write(tmp_path, records) -> Path:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(records))
    return path


def test_a_repeated_session_id_in_one_haystack_is_renamed(tmp_path):
    turns = [("user", "same", None)]
    sessions = [("s1", "2023/01/01 (Sun) 10:00", turns), ("s1", "2023/01/02 (Mon) 10:00", turns)]
    bench = load_longmemeval(write(tmp_path, [record(sessions=sessions)]))
    assert [s.id for s in bench.conversations[0].sessions] == ["s1", "s1#2"]
    assert [t.id for s in bench.conversations[0].sessions for t in s.turns] == ["s1:1", "s1#2:1"]
    assert "1 session ids repeated within a haystack renamed to <id>#<n>" in bench.report.notes


def test_an_answer_session_missing_from_the_haystack_is_reported(tmp_path):
    bench = load_longmemeval(write(tmp_path, [record(answer_session_ids=("s1", "gone"))]))
    assert bench.questions[0].evidence_session_ids == ("s1",)
    assert bench.report.unresolved == [("q1", "gone")]


def test_the_same_session_id_with_other_turns_is_not_shared(tmp_path):
    one = record("q1")
    two = record("q2", sessions=[("s1", "2023/01/01 (Sun) 10:00", [("user", "changed", None)])])
    bench = load_longmemeval(write(tmp_path, [one, two]))
    first, second = (c.sessions[0] for c in bench.conversations)
    assert first is not second and second.turns[0].text == "changed"


def test_malformed_records_name_the_field(tmp_path):
    broken = record()
    del broken["question_date"]
    where = rf"^{tmp_path}/\S+: record 0 \(question_id 'q1'\): "
    with pytest.raises(DataError, match=where + "question_date: missing in question q1"):
        load_longmemeval(write(tmp_path, [broken]))
    uneven = record()
    uneven["haystack_dates"].append("2023/01/03 (Tue) 10:00")
    with pytest.raises(DataError, match=where + "haystack_sessions: question q1 has 1 session ids, 2 dates"):
        load_longmemeval(write(tmp_path, [uneven]))
    no_content = record(sessions=[("s1", "2023/01/01 (Sun) 10:00", [("user", None, None)])])
    with pytest.raises(DataError, match=where + "haystack_sessions: turn 1 of session s1 in q1"):
        load_longmemeval(write(tmp_path, [no_content]))
    with pytest.raises(ValueError, match="^split: 'l'"):
        load_longmemeval(split="l")


def test_the_registry_name_loads_a_path():
    assert len(datasets.create("longmemeval", path=TINY, drop_abstention=True).questions) == 5


def write_large(path: Path, n_questions: int) -> int:
    """A LongMemEval-format file of ``n_questions`` with 10 sessions of 10 turns each; return its size."""
    text = "I would like some advice about planning a long trip across the mountains next summer. " * 2
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        for q in range(n_questions):
            sessions = [
                (f"s{q % 7}_{s}", f"2023/01/{s + 1:02d} (Sun) 10:00", [("user", f"{text}{q}-{s}-{t}", t == 0)
                 for t in range(10)]) for s in range(10)
            ]
            out.write(("," if q else "") + json.dumps(record(f"q{q}", sessions, (f"s{q % 7}_0",))))
        out.write("]")
    return path.stat().st_size


def test_streaming_keeps_memory_far_below_the_file_size(tmp_path):
    path = tmp_path / "large.json"
    size = write_large(path, 300)
    assert size > 5_000_000
    tracemalloc.start()
    try:
        count = turns = 0
        for conversation, question in iter_longmemeval(path, chunk_size=1 << 16):
            count += 1
            turns += sum(len(s.turns) for s in conversation.sessions)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (count, turns) == (300, 300 * 100)
    assert peak < size / 10, f"peak {peak:,} bytes while streaming a {size:,}-byte file"


HANDWRITTEN = Path(__file__).parents[2] / "datasets" / "fact-updates" / "fact_updates.json"


def test_a_knowledge_update_names_the_earlier_answer_turns_superseded(tiny):
    now = next(q for q in tiny.questions if q.id == "q_ana_now")
    # Porto (the earlier session) is stale, Lyon current; both stay evidence, as LongMemEval counts them
    assert now.superseded_turn_ids == ("answer_ana_city:1",)
    assert set(now.evidence_turn_ids) == {"answer_ana_city:1", "answer_ana_lyon:1"}
    assert all(not q.superseded_turn_ids for q in tiny.questions if q.category != "knowledge-update")
    assert tiny.labels is None  # the public format has no fact labels


def test_fact_labels_on_turns_become_the_benchmarks_labels(tmp_path):
    bench = load_longmemeval(HANDWRITTEN)
    labels = bench.labels
    city = {turn: s for turn, s in labels.statements.items() if s.fact == "hw_city/city"}
    assert {turn: (s.version, s.supersedes) for turn, s in city.items()} == {
        "s_porto:1": (1, None), "s_porto_again:1": (1, None), "s_lisbon:1": (2, "s_porto:1"), "s_lisbon:2": (2, "s_porto:1")}
    assert labels.superseded >= {"s_porto:1", "s_porto_again:1"} and "s_lisbon:1" not in labels.superseded
    assert len(bench.questions) == 10 and sum(q.category == "knowledge-update" for q in bench.questions) == 9
    broken = json.loads(HANDWRITTEN.read_text())[:1]
    broken[0]["haystack_sessions"][1][0]["fact_version"] = 0
    with pytest.raises(DataError, match=r"fact/fact_version: turn s_porto:1 in hw_city has 'city'/0"):
        load_longmemeval(write(tmp_path, broken))
