"""Consolidation quality against ground truth, each figure worked out by hand on a tiny case."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from openclaw_lab.datasets import generate
from openclaw_lab.datasets.types import FactLabels, Question, Statement
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.experiment import run_experiment
from openclaw_lab.harness.quality import duplicate_handling, stale_above_current, stale_retention
from openclaw_lab.model import MemoryItem

T0 = datetime(2023, 5, 8, tzinfo=timezone.utc)


def question(qid, current, stale):
    return Question(qid, "c", "?", "a", "updated-fact", T0, evidence_turn_ids=current, superseded_turn_ids=stale)


def test_stale_above_current_by_hand():
    questions = [question("a", ("t9",), ("t1",)), question("b", ("t8",), ("t2",)), question("c", ("t7",), ("t3",)),
                 Question("d", "c", "?", "a", "single-fact", T0, evidence_turn_ids=("t4",))]  # fmt: skip
    run = {"a": {"t1": 0.9, "t9": 0.8},  # stale first: counts
           "b": {"t8": 0.9, "t2": 0.8, "x": 0.7},  # current first
           "c": {"x": 0.9, "y": 0.8, "t3": 0.7}}  # stale held, current never retrieved: counts, and missing
    # 2 of the 3 updated-fact questions (d has no superseded statement); current missing @2: a (rank 2) no, c yes
    assert stale_above_current(questions, run, k=2) == {"stale_above_current": 2 / 3, "current_missing@2": 1 / 3,
                                                        "questions": 3}  # fmt: skip
    assert stale_above_current(questions[3:], run, k=2) is None


def test_stale_retention_by_hand():
    labels = FactLabels(statements={"t1": Statement("t1", "ana|city", 1), "t5": Statement("t5", "ana|city", 2, "t1"),
                                    "t2": Statement("t2", "rui|job", 1), "t6": Statement("t6", "rui|job", 2, "t2"),
                                    "t3": Statement("t3", "me|pet", 1)})  # fmt: skip
    held = [MemoryItem.new("Ana lives in Porto", now=T0, source_ids=["t1"]),  # stale, unmarked: counts
            MemoryItem.new("Rui is a baker", now=T0, source_ids=["t2"], metadata={"superseded_by": "t6"})]  # marked
    assert stale_retention(labels, held) == {"stale_retention": 0.5, "superseded": 2}
    assert stale_retention(FactLabels(statements={"t3": Statement("t3", "me|pet", 1)}), held) is None


def test_duplicate_handling_without_merges_has_no_precision():
    labels = FactLabels(duplicates=[("t1", "t5")])
    single = [MemoryItem.new("x", now=T0, source_ids=["t1"]), MemoryItem.new("y", now=T0, source_ids=["t5"])]
    assert duplicate_handling(labels, single) == {"merge_precision": None, "merge_recall": 0.0, "merged_pairs": 0,
                                                  "duplicate_pairs": 1}  # fmt: skip
    assert duplicate_handling(FactLabels(), single) is None


def test_the_generator_labels_updates_and_paraphrases():
    bench = generate(3000, seed=1, duplicate_rate=0.03)
    labels = bench.labels
    turns = {t.id: t for c in bench.conversations for s in c.sessions for t in s.turns}
    assert labels.duplicates and all(a in turns and b in turns and turns[a].text != turns[b].text
                                     for a, b in labels.duplicates)  # fmt: skip
    for statement in labels.statements.values():
        if statement.supersedes:
            older = labels.statements[statement.supersedes]
            assert older.fact == statement.fact and older.version == statement.version - 1
    updated = [q for q in bench.questions if q.category == "updated-fact"]
    assert updated and all(q.superseded_turn_ids and set(q.superseded_turn_ids) <= labels.superseded for q in updated)
    assert generate(3000, seed=1).conversations == generate(3000, seed=1, duplicate_rate=0.0).conversations


def test_an_experiment_reports_the_figures_the_labels_allow(embedder):
    config = ExperimentConfig.from_dict({"name": "q", "dataset": {"name": "synthetic"},
                                         "consolidation": {"enabled": True, "interval_hours": 24},
                                         "systems": [{"name": "bm25", "strategy": "bm25"}]})  # fmt: skip
    bench = generate(2000, seed=3, duplicate_rate=0.03)
    quality = run_experiment(config, results_dir=None, embedder=embedder, benchmark=bench, progress=False).memory["quality"]
    assert 0 < quality["stale_retention"]["stale_retention"] <= 1  # nothing marks superseded statements yet
    assert 0 <= quality["stale_above_current"]["bm25"]["stale_above_current"] <= 1
    assert quality["duplicates"]["duplicate_pairs"] == len(bench.labels.duplicates)
    locomo_like = bench.__class__(bench.name, bench.conversations, bench.questions)  # no labels: no figures
    result = run_experiment(config, results_dir=None, embedder=embedder, benchmark=locomo_like, progress=False)
    assert "quality" not in result.memory


def test_supersession_marks_the_older_statement_of_a_subject():
    from openclaw_lab.consolidation import SUPERSEDED_BY, VALID_UNTIL, Supersession

    porto = MemoryItem.new("My sister Ana lives in Porto", now=T0, id="a", embedding=[1.0, 0.0, 0.0])
    lyon = MemoryItem.new("Ana moved to Lyon last week", now=T0.replace(month=7), id="b", embedding=[0.8, 0.6, 0.0])
    rui = MemoryItem.new("Rui is a baker", now=T0.replace(month=8), id="c", embedding=[0.8, 0.0, 0.6])  # cos 0.8, other subject
    again = MemoryItem.new("Ana said she moved to Lyon", now=T0.replace(month=9), id="d", embedding=[0.8, 0.6, 0.0])
    marks = Supersession(min_similarity=0.7).marks([porto, lyon, rui, again])
    # a (cos 0.8 with b and d, both naming Ana) is replaced by the newest of them; b and d are near-duplicates
    # (cos 1.0: merging's job, not supersession's); c names no one a names
    assert [(m.id, m.metadata[SUPERSEDED_BY], m.metadata[VALID_UNTIL][:7]) for m in marks] == [("a", "d", "2023-09")]
    assert Supersession(min_similarity=0.7).marks([marks[0], lyon]) == []  # already marked: left alone
    with pytest.raises(ValueError, match="min_similarity/max_similarity"):
        Supersession(min_similarity=0.99, max_similarity=0.9)


def test_supersession_lowers_stale_rankings_when_systems_demote_them(embedder):
    config = ExperimentConfig.from_dict({"name": "s", "dataset": {"name": "synthetic"},
                                         "consolidation": {"enabled": True, "interval_hours": 24, "supersession": {}},
                                         "systems": [{"name": "keep", "strategy": "bm25"},
                                                     {"name": "demote", "strategy": "bm25", "superseded": "demote"},
                                                     {"name": "filter", "strategy": "bm25", "superseded": "filter"}]})  # fmt: skip
    result = run_experiment(config, results_dir=None, embedder=embedder, benchmark=generate(2000, seed=3), progress=False)
    quality = result.memory["quality"]
    stale = {name: value["stale_above_current"] for name, value in quality["stale_above_current"].items()}
    assert stale["demote"] < stale["keep"] and stale["filter"] <= stale["demote"]
    assert quality["stale_retention"]["stale_retention"] < 1.0  # some superseded statements are now marked
