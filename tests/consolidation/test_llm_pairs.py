"""Fact pairs judged by an LLM, against a stub server that answers from the hand-written set's labels (no LLM runs
here): the mechanics, and how many labelled pairs the candidates reach when every answer is right."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import pytest

from openclaw_lab.consolidation.llm_pairs import LLMSupersession, parse_relation
from openclaw_lab.datasets import load_longmemeval
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.experiment import run_experiment
from tests.harness.test_qa import stub  # noqa: F401 - the fixture: an OpenAI-compatible stub server

FACT_UPDATES = Path(__file__).resolve().parents[2] / "datasets" / "fact-updates" / "fact_updates.json"
STATEMENT = re.compile(r"(Earlier|Later) statement \([^)]*\): (.*)")


def oracle(benchmark):
    """A reply function that knows the set's labels: ``update`` when the later statement is a newer version of the
    earlier one's fact, ``restatement`` when it is the same version, else ``unrelated``."""
    labels = benchmark.labels
    turn_of = {t.text: t.id for c in benchmark.conversations for s in c.sessions for t in s.turns}

    def reply(prompt: str) -> str:
        said = dict(STATEMENT.findall(prompt))
        older, newer = (next((i for text, i in turn_of.items() if said[side].endswith(text)), None)
                        for side in ("Earlier", "Later"))  # fmt: skip
        a, b = labels.statements.get(older), labels.statements.get(newer)
        if a and b and a.fact == b.fact:
            return "update" if b.version > a.version else "restatement"
        return "Unrelated: they are about other things."

    return reply


def test_replies_are_read_as_the_first_relation_they_name():
    assert parse_relation("RESTATEMENT - same fact") == "restatement"
    assert parse_relation("It's an update, not a restatement") == "update"
    assert parse_relation("updated") is None and parse_relation("") is None


def test_with_answers_from_the_labels_the_llm_rules_retire_and_merge_what_the_fitted_model_missed(
    stub, embedder, tmp_path, monkeypatch  # noqa: F811
):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path / "cache" / "embeddings.sqlite"))  # a fresh call cache
    benchmark = load_longmemeval(FACT_UPDATES)
    stub.reply = oracle(benchmark)
    endpoint = {"base_url": stub.url(), "model": "oracle"}
    config = ExperimentConfig.from_dict({
        "name": "llm-pairs", "dataset": {"name": "longmemeval", "params": {"path": str(FACT_UPDATES)}},
        "memory": {"unit": "turn"},
        "consolidation": {"enabled": True, "interval_hours": 24, "merge": {"strategy": "llm", "endpoint": endpoint},
                          "supersession": {"strategy": "llm", "endpoint": endpoint}},
        "systems": [{"name": "bm25", "strategy": "bm25"}, {"name": "bm25-below", "strategy": "bm25",
                                                           "superseded": "below-successor"}],
    })  # fmt: skip
    result = run_experiment(config, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    quality = result.memory["quality"]
    asked = len(stub.requests)
    # measured with these candidates (k = 5, cosine >= 0.5) and every answer right: all 13 superseded statements
    # retired and all 10 restatement pairs merged, none wrongly (the fitted pair model: 0 and 0, one wrong merge).
    # The candidates reach every labelled pair; what decides is the judge
    assert quality["stale_retention"]["stale_retention"] <= 1 / 13
    assert quality["duplicates"]["merge_recall"] >= 0.9 and quality["duplicates"]["merge_precision"] == 1.0
    stale = quality["stale_above_current"]
    assert stale["bm25-below"]["stale_above_current"] < stale["bm25"]["stale_above_current"]
    run_experiment(config, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    assert len(stub.requests) == asked  # every pair asked again came from the call cache


def test_a_rule_travels_to_another_process_without_its_connection(stub):  # noqa: F811
    rule = LLMSupersession({"base_url": stub.url(), "model": "m"})
    assert rule.judge.client is rule.judge._client  # connected here
    copy = pickle.loads(pickle.dumps(rule))
    assert copy.judge._client is None and copy.judge.endpoint == rule.judge.endpoint
    with pytest.raises(TypeError, match="unexpected keyword argument 'modle'"):
        LLMSupersession({"base_url": stub.url(), "modle": "m"})
