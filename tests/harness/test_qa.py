"""End-to-end QA against a real HTTP server on 127.0.0.1 (a deterministic stub of /v1/chat/completions).

The stub stands in for an LLM, which cannot run here: it answers with the first memory line of the
context it is given, and judges CORRECT (or "yes") when the gold answer's words are in the answer.
Everything else is real: the openai client, retries, the on-disk cache, the replay and the scoring.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from openclaw_lab.datasets import generate
from openclaw_lab.errors import ConfigError
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.experiment import run_experiment
from openclaw_lab.harness.export import export_trec
from openclaw_lab.evaluation.metrics import mcnemar
from openclaw_lab.harness.qa import bleu1, judged_correct, read_verdict, token_f1
from openclaw_lab.text import normalize_answer


class StubHandler(BaseHTTPRequestHandler):
    """``/slow`` waits 1 s; ``/busy`` answers 429 to every first request; ``/garbage`` sends HTML."""

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"]
        with self.server.lock:
            self.server.requests.append(prompt)
            first_time = self.server.seen.setdefault(prompt, 0) == 0
            self.server.seen[prompt] += 1
        if self.path.startswith("/garbage"):
            return self._send(200, b"<html>not json</html>")
        if self.path.startswith("/busy") and first_time:
            return self._send(429, b'{"error": "slow down"}', {"Retry-After": "0"})
        if self.path.startswith("/slow"):
            time.sleep(1.0)
        content = self.server.reply(prompt)
        content, finish = content if isinstance(content, tuple) else (content, "stop")  # (text, finish_reason)
        self._send(200, json.dumps({"id": "x", "object": "chat.completion", "model": body["model"], "created": 0,
                                    "choices": [{"index": 0, "finish_reason": finish,
                                                 "message": {"role": "assistant", "content": content}}],
                                    "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": 5,
                                              "total_tokens": len(prompt.split()) + 5}}).encode())  # fmt: skip

    def _send(self, status: int, payload: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        for key, value in {"Content-Type": "application/json", **(headers or {})}.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass


def reply(prompt: str) -> str:
    if gold := re.search(r"Gold answer: (.*)\nGenerated answer: (.*)\n", prompt):
        found = normalize_answer(gold.group(1)) in normalize_answer(gold.group(2))
        return f'The answer {"matches" if found else "differs"}. {{"label": "{"CORRECT" if found else "WRONG"}"}}'
    memories = [line.split("] ", 1)[-1] for line in prompt.splitlines() if line.startswith("[")]
    return memories[0] if memories else "I don't know"


@pytest.fixture
def stub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), StubHandler)
    server.requests, server.seen, server.lock = [], {}, threading.Lock()
    server.reply = reply  # a test may answer its own way
    host, port = server.server_address[:2]
    server.url = lambda prefix="": f"http://{host}:{port}{prefix}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


@pytest.fixture(scope="module")
def benchmark():
    return generate(600, seed=2)


def config(url: str, **qa) -> ExperimentConfig:
    endpoint = {"base_url": url, "model": "stub-7b", "timeout": 5, "max_retries": 2}
    return ExperimentConfig.from_dict({
        "name": "qa", "dataset": {"name": "synthetic"},
        "systems": [{"name": "bm25", "strategy": "bm25"}, {"name": "dense", "strategy": "dense"}],
        "qa": {"enabled": True, "answer": endpoint, "budgets": [64, 512], "systems": ["bm25", "dense"], **qa},
    })  # fmt: skip


def test_a_qa_experiment_scores_answers_and_a_rerun_costs_nothing(stub, benchmark, embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path / "cache"))
    first = run_experiment(config(stub.url()), results_dir=tmp_path, embedder=embedder, benchmark=benchmark, progress=False)
    table = first.qa_table
    questions = [q for q in benchmark.questions if not q.abstention]
    assert len(table) == 2 * 2 * len(questions)  # systems × budgets × questions
    gold = {q.id: q.answer for q in questions}
    expected = [normalize_answer(gold[q]) in normalize_answer(a) for q, a in zip(table["question"], table["answer"])]
    assert list(table["correct"]) == expected  # the verdicts are the judge's, read from its JSON label
    summary = {(r["system"], r["budget"], r["category"]): r for r in first.qa["summary"]}
    for system in ("bm25", "dense"):
        rows = table[(table["system"] == system) & (table["budget"] == 512)]
        assert summary[(system, 512, "all")]["accuracy"] == pytest.approx(rows["correct"].mean())
        assert summary[(system, 512, "all")]["f1"] == pytest.approx(rows["f1"].mean())
    assert summary[("dense", 64, "all")]["p_vs_first"] is not None
    calls = first.qa["calls"]
    sent = calls["answer"]["calls"] + calls["judge"]["calls"]
    assert sent == len(stub.requests) == len(set(stub.requests))  # a prompt asked twice came from the cache
    assert sent + calls["answer"]["cache_hits"] + calls["judge"]["cache_hits"] == 2 * len(table)
    assert first.qa["models"] == {"answer": "stub-7b", "judge": "stub-7b"}
    saved = json.loads((first.path / "metrics.json").read_text())["qa"]
    assert saved["summary"] == json.loads(json.dumps(first.qa["summary"]))
    assert (first.path / "qa.csv").exists() and (first.path / "prompts" / "judge.txt").exists()
    assert (first.path / "qa_accuracy.png").exists()

    asked = len(stub.requests)
    again = run_experiment(config(stub.url()), results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    assert len(stub.requests) == asked  # every call came from the cache
    assert again.qa["calls"]["answer"]["calls"] == 0 and again.qa["calls"]["judge"]["cache_hits"] == len(table)
    assert again.qa["summary"] == first.qa["summary"]


def test_a_changed_prompt_or_model_is_a_new_call(stub, benchmark, embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path / "cache"))
    settings = config(stub.url(), budgets=[64], systems=["bm25"])
    run_experiment(settings, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    asked = len(stub.requests)
    other = settings.with_value("qa.answer.model", "stub-13b")
    run_experiment(other, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    assert len(stub.requests) == 2 * asked


def test_a_429_is_retried_and_a_slow_reply_waited_for(stub, benchmark, embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path / "cache"))
    few = generate(200, seed=4)
    busy = run_experiment(config(stub.url("/busy"), budgets=[64], systems=["bm25"]), results_dir=None,
                          embedder=embedder, benchmark=few, progress=False)  # fmt: skip
    answered = len(busy.qa_table)
    assert answered and len(stub.requests) == 4 * answered  # every prompt: a 429, then the answer
    slow = run_experiment(config(stub.url("/slow"), budgets=[512], systems=["bm25"]), results_dir=None,
                          embedder=embedder, benchmark=few, progress=False)  # fmt: skip
    assert len(slow.qa_table) == answered


@pytest.mark.parametrize("broken", ["closed", "/garbage"])
def test_an_endpoint_that_does_not_answer_skips_qa_in_one_line_and_keeps_retrieval(
    stub, broken, benchmark, embedder, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path / "cache"))
    url = stub.url(broken if broken != "closed" else "")
    if broken == "closed":
        stub.shutdown()
        stub.server_close()
    result = run_experiment(config(url), results_dir=tmp_path, embedder=embedder, benchmark=benchmark, progress=False)
    reason = result.qa["skipped"]
    assert "\n" not in reason and url in reason
    assert ("cannot reach" if broken == "closed" else "did not return JSON") in reason
    assert result.metrics["bm25"]["session.recall@10"] > 0
    assert json.loads((result.path / "metrics.json").read_text())["qa"] == {"skipped": reason}


def test_bad_replies_an_empty_answer_a_verdict_in_prose_and_an_answer_cut_at_max_tokens(
    stub, benchmark, embedder, tmp_path, monkeypatch
):
    """A stub, since a real model cannot be made to give each of these on demand: the answers cycle through
    empty, cut at max_tokens (finish_reason length) and plain; the judge answers in prose, not in JSON."""
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path / "cache"))
    kinds = ["empty", "cut", "plain"]

    def replies(prompt: str):
        if "Gold answer:" in prompt:
            return "**Label:** incorrect, the answer names another city" if "answer: Lyon" in prompt else "Correct."
        kind = kinds[sum(map(ord, prompt)) % 3]
        return {"empty": "  ", "cut": ("Lyon, which is where she moved after", "length"), "plain": "Paris"}[kind]

    stub.reply = replies
    result = run_experiment(config(stub.url(), budgets=[64], systems=["bm25"]), results_dir=None, embedder=embedder,
                            benchmark=benchmark, progress=False)  # fmt: skip
    table = result.qa_table
    empty, cut = table["answer"].str.strip() == "", table["answer_finish"] == "length"
    assert empty.any() and cut.any() and (~empty & ~cut).any()
    assert set(table[empty]["verdict"]) == {"empty"} and not table[empty]["correct"].any()
    assert set(table[cut]["verdict"]) == {"WRONG"}  # "incorrect" is WRONG, not a CORRECT inside a word
    assert set(table[~empty & ~cut]["verdict"]) == {"CORRECT"} and table[~empty & ~cut]["correct"].all()
    calls = result.qa["calls"]
    assert calls["judge"]["calls"] == (~empty).sum()  # an empty answer is not sent to the judge
    assert calls["answer"]["truncated"] == cut.sum() and calls["answer"]["calls"] == len(table)
    assert len(stub.requests) == len(table) + (~empty).sum()


def test_verdicts_in_other_formats():
    assert read_verdict("locomo", '{"label": "WRONG"}') == "WRONG"
    assert read_verdict("locomo", 'Reasoning {"x": 1} then {"label": "correct"}') == "CORRECT"
    assert read_verdict("locomo", "The generated answer is INCORRECT.") == "WRONG"
    assert read_verdict("locomo", "CORRECT") == "CORRECT"
    assert read_verdict("locomo", "It says correct, then wrong.") == "unread"  # both words, no JSON
    assert read_verdict("locomo", "The answer to the question is 7 May") == "unread"
    assert read_verdict("locomo", "") == "unread"
    assert read_verdict("longmemeval", "yes") == "CORRECT" and read_verdict("longmemeval", "maybe") == "unread"


def test_qa_off_and_a_missing_key_variable(stub, monkeypatch):
    from openclaw_lab.errors import OpenClawError
    from openclaw_lab.harness.build import build

    assert build(config(stub.url()).with_value("qa.enabled", False)).qa is None
    monkeypatch.delenv("NO_SUCH_KEY", raising=False)
    with pytest.raises(OpenClawError, match="api_key_env: the variable NO_SUCH_KEY is not set"):
        build(config(stub.url()).with_value("qa.answer.api_key_env", "NO_SUCH_KEY"))


def test_scores_worked_out_by_hand():
    # F1: prediction "ana moved to lyon" vs gold "lyon": 1 shared of 4 and 1 words: p=1/4, r=1 -> 2/5
    assert token_f1("Ana moved to Lyon", "Lyon") == pytest.approx(0.4)
    assert token_f1("Paris", "Lyon") == 0.0 and token_f1("the painting", "paintings") == 1.0  # stemmed, articles out
    # BLEU-1: "lyon lyon" vs "lyon": clipped 1 of 2, no brevity penalty -> 0.5; "lyon" vs "in lyon": 1 * e^(1-2)
    assert bleu1("Lyon Lyon", "Lyon") == pytest.approx(0.5)
    assert bleu1("Lyon", "in Lyon") == pytest.approx(0.36787944)
    assert judged_correct("locomo", 'Same place. {"label": "CORRECT"}') and not judged_correct("locomo", "WRONG")
    assert judged_correct("longmemeval", "Yes.") and not judged_correct("longmemeval", "No")
    # McNemar: 3 questions only A got, 0 only B got -> exact two-sided p = 2 * 0.5^3 = 0.25
    assert mcnemar([True, True, True, False], [False, False, False, False]) == pytest.approx(0.25)


def test_trec_files_read_back_to_the_same_metrics(benchmark, embedder, tmp_path):
    from ranx import Qrels, Run, evaluate

    settings = ExperimentConfig.from_dict({"name": "trec", "dataset": {"name": "synthetic"},
                                           "systems": [{"name": "bm25", "strategy": "bm25"}]})  # fmt: skip
    result = run_experiment(settings, results_dir=tmp_path, embedder=embedder, benchmark=benchmark, progress=False)
    files = export_trec(result.path)
    run = Run.from_file(str(result.path / "trec" / "bm25.session.run"), kind="trec")
    qrels = Qrels.from_file(str(result.path / "trec" / "qrels.session.txt"), kind="trec")
    assert len(files) == 4
    assert evaluate(qrels, run, "recall@10") == pytest.approx(result.metrics["bm25"]["session.recall@10"])


def test_longmemeval_protocol_picks_the_judge_prompt_of_each_question_type():
    from datetime import datetime

    from openclaw_lab.datasets.types import Question
    from openclaw_lab.harness.qa import QAPlan
    from openclaw_lab.llm import ChatClient, Endpoint

    client = ChatClient(Endpoint("http://127.0.0.1:9/v1", "m"))  # never called here
    plan = QAPlan(client, client, "longmemeval", (512,), ("dense",))

    def ask(category, abstention=False):
        q = Question("q_abs" if abstention else "q", "c", "How many days?", "18", category, datetime(2023, 5, 8),
                     abstention=abstention)  # fmt: skip
        return plan.judge_prompt(q, "19 days")

    assert "do not penalize off-by-one errors" in ask("temporal-reasoning")
    assert "updated answer" in ask("knowledge-update")
    assert "Rubric: 18" in ask("single-session-preference")
    assert "unanswerable" in ask("temporal-reasoning", abstention=True)
    assert ask("multi-session").endswith("Is the model response correct? Answer yes or no only.")
    assert plan.asked([Question("q_abs", "c", "?", "a", "x", datetime(2023, 5, 8), abstention=True)])  # kept


def test_the_oracle_row_answers_from_the_evidence_turns_alone_over_the_first_questions(
        stub, benchmark, embedder, tmp_path, monkeypatch):  # fmt: skip
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path / "cache"))
    settings = config(stub.url(), budgets=[512], systems=["bm25"], oracle=True, questions=7)
    result = run_experiment(settings, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    table = result.qa_table
    asked = [q for q in benchmark.questions if not q.abstention][:7]
    assert list(table["system"]) == ["bm25"] * 7 + ["oracle"] * 7
    assert list(table["question"]) == [q.id for q in asked] * 2
    said = {t.id: t.text for c in benchmark.conversations for s in c.sessions for t in s.turns}
    oracle = table[table["system"] == "oracle"]
    for q, answer in zip(asked, oracle["answer"]):  # the stub answers with the context's first memory
        assert any(answer.endswith(said[t]) for t in q.evidence_turn_ids), (q.id, answer)
    summary = {r["system"]: r for r in result.qa["summary"] if r["category"] == "all"}
    assert summary["oracle"]["questions"] == 7 and summary["oracle"]["p_vs_first"] is not None


def test_qa_settings_added_later_keep_earlier_fingerprints_and_refuse_bad_values():
    plain = config("http://127.0.0.1:9/v1")
    assert "oracle" not in plain.to_dict()["qa"] and "questions" not in plain.to_dict()["qa"]
    assert plain.with_value("qa.oracle", True).fingerprint() != plain.fingerprint()
    assert plain.with_value("qa.oracle", False).fingerprint() == plain.fingerprint()
    with pytest.raises(ConfigError, match=r"qa\.questions: 0 must be >= 1"):
        config("http://127.0.0.1:9/v1", questions=0)
    clash = plain.to_dict() | {"systems": [{"name": "oracle", "strategy": "bm25"}]}
    clash["qa"] = clash["qa"] | {"systems": ["oracle"], "oracle": True}
    with pytest.raises(ConfigError, match=r"qa\.oracle: .*rename that system"):
        ExperimentConfig.from_dict(clash)


def test_the_reasoned_judge_format_asks_for_a_reason_before_the_label():
    from openclaw_lab.harness.build import build

    plan = build(config("http://127.0.0.1:9/v1", judge_format="reasoned")).qa
    schema = plan.judge_extra()["response_format"]["schema"]
    assert list(schema["properties"]) == ["reason", "label"] and schema["required"] == ["reason", "label"]
    assert read_verdict("locomo", '{"reason": "The same necklace.", "label": "CORRECT"}') == "CORRECT"
    with pytest.raises(ConfigError, match="qa.judge_format"):
        config("http://127.0.0.1:9/v1", judge_format="prose")
