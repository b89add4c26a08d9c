"""Other memory systems on the same replay: the adapters run the real libraries (mem0, MemPalace) on a small
synthetic replay, with our offline model; nothing of either library is mocked. They skip, naming the extra,
only when it is not installed (CI installs both)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import openai
import pandas as pd
import pytest

from openclaw_lab.datasets.synthetic import generate
from openclaw_lab.errors import ConfigError
from openclaw_lab.harness import config as config_module
from openclaw_lab.harness.build import build
from openclaw_lab.harness.check import GateSettings, check_run, write_baseline
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.experiment import run_experiment
from openclaw_lab.peers.system import observations
from openclaw_lab.harness.report import write_report
from openclaw_lab.peers import protocol
from openclaw_lab.peers.endpoint import EmbeddingEndpoint

needs_mem0 = pytest.mark.skipif(not protocol.installed("mem0"), reason='the mem0 extra is not installed: pip install "openclaw-lab[mem0]"')
needs_mempalace = pytest.mark.skipif(not protocol.installed("mempalace"),
                                     reason='the mempalace extra is not installed: pip install "openclaw-lab[mempalace]"')  # fmt: skip


def experiment(*systems: dict, **metrics) -> ExperimentConfig:
    return ExperimentConfig.from_dict({
        "name": "peers", "dataset": {"name": "synthetic"}, "memory": {"store": "exact", "simulate_access": False},
        "systems": [{"name": "dense", "strategy": "dense"}, *systems],
        "metrics": {"k": [1, 5, 10], "levels": ["turn", "session"], **metrics},
    })  # fmt: skip


@pytest.fixture(scope="module")
def benchmark():
    """Two users, 11 questions: every system finds every evidence turn in its top 10 here, as at 240 turns (18
    questions), at half the ingest time of the two libraries."""
    return generate(120, n_conversations=2, seed=5)


def test_the_endpoint_serves_our_vectors_to_the_openai_client(embedder):
    texts = ["I adopted a puppy named Rex", "We went hiking in the Alps"]
    with EmbeddingEndpoint(embedder) as endpoint:
        client = openai.OpenAI(base_url=endpoint.url, api_key="local", max_retries=0)
        served = client.embeddings.create(model=embedder.model_id, input=texts)
        with pytest.raises(openai.BadRequestError, match="input"):
            client.embeddings.create(model=embedder.model_id, input=[3, 4])  # token ids: not served
    vectors = np.array([row.embedding for row in sorted(served.data, key=lambda row: row.index)])
    np.testing.assert_allclose(vectors, embedder.encode(texts), atol=1e-6)


def test_a_replayed_turn_keeps_its_dataset_time_and_text(benchmark):
    conversation = benchmark.conversations[0]
    sessions = observations(conversation, turn_seconds=30)
    first, second = sessions[0][0], sessions[0][1]
    assert first.at == conversation.sessions[0].started_at and (second.at - first.at).total_seconds() == 30
    assert first.text.startswith(f"{conversation.sessions[0].turns[0].speaker}: ")
    assert sum(map(len, sessions)) == sum(len(s.turns) for s in conversation.sessions)


def test_bad_settings_and_a_missing_extra_fail_before_any_data_loads(monkeypatch):
    with pytest.raises(ConfigError, match=r"systems\[1\]\.params: store: 'faiss' is not one of chroma, qdrant"):
        build(experiment({"name": "m", "strategy": "mem0", "params": {"store": "faiss"}}))
    with pytest.raises(ConfigError, match=r"systems\[1\]\.params: mode: 'rawr' is not one of raw, hybrid"):
        build(experiment({"name": "p", "strategy": "mempalace", "params": {"mode": "rawr"}}))
    with pytest.raises(ConfigError, match=r"systems\[1\]\.params\.modes: unknown parameter.*did you mean 'mode'"):
        build(experiment({"name": "p", "strategy": "mempalace", "params": {"modes": "raw"}}))
    with pytest.raises(ConfigError, match=r"systems\[1\]\.strategy: unknown strategy 'mem1'; did you mean 'mem0'"):
        build(experiment({"name": "m", "strategy": "mem1"}))
    monkeypatch.setattr(protocol.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError, match=r'systems\[1\]\.strategy: mem0 is not installed; run `pip install "openclaw-lab\[mem0\]"`'):
        build(experiment({"name": "m", "strategy": "mem0"}))


def test_the_fingerprint_follows_the_installed_version_of_another_system(monkeypatch):
    ours, theirs = experiment(), experiment({"name": "m", "strategy": "mem0"})
    before = theirs.fingerprint(), ours.fingerprint()
    monkeypatch.setattr(config_module, "package_version", lambda package: "99.0")
    assert theirs.fingerprint() != before[0] and ours.fingerprint() == before[1]


@needs_mem0
@needs_mempalace
def test_mem0_and_mempalace_are_scored_on_the_same_replay_as_ours(benchmark, embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # neither library may write its settings or locks there
    config = experiment({"name": "mem0", "strategy": "mem0"},
                        {"name": "mempalace-raw", "strategy": "mempalace", "params": {"mode": "raw"}},
                        {"name": "mempalace-hybrid", "strategy": "mempalace", "params": {"mode": "hybrid"}})  # fmt: skip
    result = run_experiment(config, results_dir=tmp_path, embedder=embedder, benchmark=benchmark, progress=False)
    table = result.table()
    # The same model, the same text, every turn stored: a vector-only system finds what our dense search finds.
    for name in ("mem0", "mempalace-raw"):
        assert table.loc[name, "turn.recall@10"] == pytest.approx(table.loc["dense", "turn.recall@10"], abs=0.05)
    assert table.loc["mempalace-hybrid", "turn.recall@10"] > 0.5
    turns = {t.id: c.id for c in benchmark.conversations for s in c.sessions for t in s.turns}
    questions = {q.id: q.conversation_id for q in benchmark.questions}
    for name in ("mem0", "mempalace-raw", "mempalace-hybrid"):
        run = result.runs[f"{name}.turn"]
        assert set(run) == set(questions)
        assert all(turns[turn] == questions[qid] for qid, hits in run.items() for turn in hits)  # its own user only
        assert 0 < len(run[next(iter(run))]) <= config.metrics.depth
    costs = pd.read_csv(result.path / "costs.csv", index_col="system")
    assert list(costs.index) == [s.name for s in config.systems]
    assert (costs.loc[["mem0", "mempalace-raw"], ["ingest_s_per_1k_turns", "query_ms"]] > 0).all().all()
    environment = json.loads((result.path / "environment.json").read_text())
    assert environment["packages"]["mem0ai"] and environment["packages"]["mempalace"]
    assert not (tmp_path / "home" / ".mempalace").exists() and not (tmp_path / "home" / ".mem0").exists()
    baseline = write_baseline(result.path, tmp_path / "baseline.json")  # the gate takes them like ours
    assert set(baseline["metrics"]) >= {"mem0", "mempalace-hybrid"}
    assert {v.status for v in check_run(result.path, tmp_path / "baseline.json", GateSettings(exact=True))} == {"equal"}
    assert "| mempalace-hybrid " in write_report(result.path).read_text().split("## Costs")[1]


class ExtractingStub(BaseHTTPRequestHandler):
    """A stand-in for an LLM (none can run here) on 127.0.0.1: it 'extracts' each new message as one memory."""

    prompts: list[str] = []

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt = body["messages"][-1]["content"]
        type(self).prompts.append(prompt)
        new = prompt.split("## New Messages\n", 1)[1].split("\n\n", 1)[0].splitlines()
        memories = [{"id": str(i), "text": line.split(": ", 1)[1], "attributed_to": "user"} for i, line in enumerate(new)]
        reply = {"id": "stub", "object": "chat.completion", "created": 0, "model": body["model"],
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": json.dumps({"memory": memories})}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}  # fmt: skip
        raw = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def llm_stub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), ExtractingStub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    ExtractingStub.prompts = []
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()
    thread.join(5)


@needs_mem0
def test_mem0_with_an_llm_extracts_memories_that_map_back_to_their_pair_of_turns(llm_stub, embedder, tmp_path):
    benchmark = generate(60, n_conversations=1, seed=3)
    config = experiment({"name": "mem0-llm", "strategy": "mem0", "params": {"llm": {"base_url": llm_stub, "model": "stub"}}})
    result = run_experiment(config, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    assert len(ExtractingStub.prompts) == sum((len(s.turns) + 1) // 2 for s in benchmark.conversations[0].sessions)
    pairs = {(s.turns[i].id, *(t.id for t in s.turns[i + 1 : i + 2])) for s in benchmark.conversations[0].sessions
             for i in range(0, len(s.turns), 2)}  # fmt: skip
    run = result.runs["mem0-llm.turn"]
    assert set(run) == {q.id for q in benchmark.questions}
    for docs in run.values():  # each memory came from one pair of turns, and maps back to both of them
        by_memory: dict[float, set[str]] = {}
        for turn, score in docs.items():
            by_memory.setdefault(score, set()).add(turn)
        assert docs and all(tuple(sorted(group)) in {tuple(sorted(pair)) for pair in pairs} for group in by_memory.values())
    assert all("## New Messages\nuser: " in prompt for prompt in ExtractingStub.prompts)
