import math
from datetime import datetime, timezone

import pytest

from openclaw_lab.consolidation.merge import absorb
from openclaw_lab.datasets.types import Question
from openclaw_lab.evaluation.metrics import (
    NO_HIT, by_category, complete_run, evaluate_run, memory_counts, memory_ratios, qrels_for, to_level,
)  # fmt: skip
from openclaw_lab.model import MemoryItem, MemoryTier

T = datetime(2023, 5, 8, tzinfo=timezone.utc)


def question(qid, turns, sessions, category="single-hop"):
    return Question(qid, "c1", "?", "a", category, T, tuple(turns), tuple(sessions))


def test_hand_computed_scores():
    qrels = {"q1": {"a": 1, "b": 1}, "q2": {"c": 1}}
    run = {"q1": {"x": 0.9, "a": 0.8, "y": 0.7, "b": 0.1}, "q2": {"c": 0.5}}
    scores = evaluate_run(qrels, run, ks=(1, 3))
    assert scores.loc["q1", "recall@1"] == 0.0
    assert scores.loc["q1", "recall@3"] == 0.5
    assert scores.loc["q1", "hit_rate@3"] == 1.0
    assert scores.loc["q1", "recall_all@3"] == 0.0
    assert scores.loc["q1", "mrr"] == 0.5
    assert scores.loc["q2", "recall_all@1"] == 1.0


def test_questions_without_hits_still_count_and_ranx_does_not_fail():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    assert complete_run({}, qrels) == {"q1": {NO_HIT: 0.0}, "q2": {NO_HIT: 0.0}}
    scores = evaluate_run(qrels, {}, ks=(5,))
    assert list(scores.index) == ["q1", "q2"] and scores["recall@5"].sum() == 0.0
    with pytest.raises(ValueError, match="^qrels"):
        evaluate_run({}, {}, ks=(5,))


def test_items_map_to_turns_and_sessions_keeping_the_best_score():
    items = {
        "i1": MemoryItem.new("x", now=T, id="i1", session_id="S1", source_ids=("D1:1", "D1:2")),
        "i2": MemoryItem.new("y", now=T, id="i2", session_id="S1", source_ids=("D1:2",)),
    }
    run = {"q": {"i1": 0.4, "i2": 0.9}}
    assert to_level(run, items, "turn") == {"q": {"D1:1": 0.4, "D1:2": 0.9}}
    assert to_level(run, items, "session") == {"q": {"S1": 0.9}}


def test_a_merged_memory_counts_for_every_session_that_said_its_fact():
    old = MemoryItem.new("Ana lives in Porto", now=T, id="a", session_id="S1", source_ids=("D1:1",))
    new = MemoryItem.new("Ana's home is Porto", now=T, id="b", session_id="S3", source_ids=("D3:4",))
    other = MemoryItem.new("Bo plays chess", now=T, id="c", session_id="S3", source_ids=("D3:5",))
    merged = absorb([old, new])
    run = {"q": {"a": 0.7, "c": 0.8}}
    assert to_level(run, {"a": merged, "c": other}, "session") == {"q": {"S3": 0.8, "S1": 0.7}}
    assert to_level(run, {"a": merged, "c": other}, "turn") == {"q": {"D1:1": 0.7, "D3:4": 0.7, "D3:5": 0.8}}


def test_qrels_leave_out_questions_without_evidence_and_categories_average():
    questions = [question("q1", ["a"], ["S1"], "temporal"), question("q2", [], [], "open"), question("q3", ["b"], ["S1"])]
    assert qrels_for(questions, "turn") == {"q1": {"a": 1}, "q3": {"b": 1}}
    scores = evaluate_run(qrels_for(questions, "turn"), {"q1": {"a": 1.0}, "q3": {"z": 1.0}}, ks=(1,))
    table = by_category(scores, {q.id: q.category for q in questions})
    assert table.loc["temporal", "recall@1"] == 1.0 and table.loc["single-hop", "recall@1"] == 0.0
    assert table.loc["all", "recall@1"] == 0.5 and table.loc["all", "questions"] == 2


def test_memory_counts_and_ratios():
    questions = [question("q1", ["a", "b"], []), question("q2", ["c"], [])]
    items = [
        MemoryItem.new("x", now=T, source_ids=("a",), tier=MemoryTier.EPISODIC),
        MemoryItem.new("y", now=T, source_ids=("a", "z"), tier=MemoryTier.SEMANTIC),
    ]
    counts = memory_counts(questions, items, promoted={"a", "z"})
    assert counts == {"evidence": 3, "promoted": 2, "promoted_evidence": 1, "held_episodic": 1,
                      "held_semantic": 1, "held_any": 1}  # fmt: skip
    ratios = memory_ratios(counts, items_kept=2, units_seen=4)
    assert ratios["retention.any"] == pytest.approx(1 / 3) and ratios["footprint"] == 0.5
    assert ratios["promotion.precision"] == 0.5 and ratios["promotion.recall"] == pytest.approx(1 / 3)


def test_longmemeval_ndcg_leaves_ranks_one_and_two_undiscounted():
    from openclaw_lab.evaluation.metrics import evaluate_run

    qrels = {"q": {"b": 1, "c": 1}}
    run = {"q": {"a": 0.9, "b": 0.8, "c": 0.7}}
    scores = evaluate_run(qrels, run, ks=(3,), ndcg_variants=("standard", "longmemeval")).loc["q"]
    # standard: (1/log2(3) + 1/log2(4)) / (1 + 1/log2(3)) = (0.6309 + 0.5) / 1.6309
    assert scores["ndcg@3"] == pytest.approx((1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3)))
    # LongMemEval: dcg = g1 + g2/log2(2) + g3/log2(3) = 0 + 1 + 0.6309; ideal = 1 + 1 = 2
    assert scores["ndcg_lme@3"] == pytest.approx((1 + 1 / math.log2(3)) / 2)


def test_session_label_sets_follow_their_names():
    from pathlib import Path

    from openclaw_lab.datasets import load_longmemeval
    from openclaw_lab.evaluation.metrics import qrels_for

    bench = load_longmemeval(Path(__file__).parents[1] / "datasets" / "fixtures" / "lme_format_tiny.json")
    every = qrels_for(bench.questions, "session", "answer-sessions")
    marked = qrels_for(bench.questions, "session", "has-answer")
    for q in bench.questions:
        held = {s.id: s for s in bench.conversation(q.id).sessions}
        expected = {s for s in q.evidence_session_ids if any(t.has_answer and t.speaker == "user" for t in held[s].turns)}
        assert set(marked.get(q.id, {})) == expected <= set(every.get(q.id, {}))
    with pytest.raises(ValueError, match="has-answer' needs has_answer marks"):
        from openclaw_lab.datasets import generate

        qrels_for(generate(100, seed=1).questions, "session", "has-answer")
