"""Real crashes: a process SIGKILLed in the middle of writes or of a run leaves a readable, consistent state.

Kill times are drawn from a seeded generator, so a failure can be replayed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pytest

from openclaw_lab.clock import SimulatedClock
from openclaw_lab.embedding import Embedder
from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import MemoryTier

ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}

ADDER = """
import sys
from datetime import datetime, timezone
import numpy as np
from openclaw_lab.clock import SimulatedClock
from openclaw_lab.embedding import Embedder
from openclaw_lab.manager import MemoryManager
memory = MemoryManager.open(sys.argv[1], embedder=Embedder(cache=False, model_id="test-vectors"),
                            clock=SimulatedClock(datetime(2024, 1, 1, tzinfo=timezone.utc)))
rng = np.random.default_rng(int(sys.argv[2]))
start = memory.episodic.count()
print("ready", flush=True)
for n in range(start, start + 100_000):
    vectors = rng.normal(size=(20, 16)).astype(np.float32)
    memory.add_many([{"content": f"memory {n}-{i}", "id": f"m{n}-{i}", "importance": 5 if i % 3 == 0 else 3,
                      "embedding": vectors[i] / np.linalg.norm(vectors[i])} for i in range(20)])
"""


def open_memory(path: Path) -> MemoryManager:
    return MemoryManager.open(path, embedder=Embedder(cache=False, model_id="test-vectors"), clock=SimulatedClock(datetime(2024, 1, 1, tzinfo=timezone.utc)))


def start(argv: list[str]) -> subprocess.Popen:
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV)


def test_sigkill_during_add_many_leaves_both_tiers_in_agreement(tmp_path):
    rng = np.random.default_rng(2026)
    path = tmp_path / "memory"
    for kill in range(12):
        child = start([sys.executable, "-c", ADDER, str(path), str(kill)])
        assert child.stdout.readline().strip() == "ready", child.stderr.read()[-2000:]
        time.sleep(rng.uniform(0.0, 0.6))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)

        memory = open_memory(path)  # opening completes any semantic copy the kill left staged
        episodic = {item.id: item for item in memory.episodic.items()}
        critical = {i for i, item in episodic.items() if item.importance == 5}
        semantic = {item.id for item in memory.semantic.items()}
        assert semantic == {f"sem_{i}" for i in critical}, f"kill {kill}: tiers disagree"
        assert len(episodic) % 20 == 0  # add_many is one transaction: whole batches or nothing
        assert memory.episodic.pending_semantic() == []
        if episodic:
            some = next(iter(episodic.values()))
            assert memory.search_vector(some.embedding, 1)[0].item.id == some.id
            assert set(memory.search_vector(some.embedding, 1)[0].tiers) <= {MemoryTier.EPISODIC.value, "semantic"}
        memory.close()


RUN = """
import sys
from openclaw_lab.cli import main
sys.exit(main(["run", sys.argv[1], "--results", sys.argv[2]]))
"""

CONFIG = """
name = "killed"
[dataset]
name = "synthetic"
params = { n_turns = 1200, n_conversations = 3, seed = 5 }
[consolidation]
enabled = true
[[systems]]
name = "bm25"
strategy = "bm25"
"""


@pytest.mark.parametrize("delay", [3.0, 6.0, 9.0, None])
def test_a_killed_run_leaves_a_complete_folder_or_none(tmp_path, delay):
    config = tmp_path / "killed.toml"
    # a run left to finish needs no long history to show it leaves one whole folder; a killed one does, to be
    # stopped mid-write
    config.write_text(CONFIG if delay is not None else CONFIG.replace("n_turns = 1200", "n_turns = 300"))
    results = tmp_path / "results"
    if delay is None:  # the CLI run the killed processes make, left to finish: in this process (no start-up to pay)
        from openclaw_lab.cli import main

        assert main(["run", str(config), "--results", str(results)]) == 0
    else:
        child = start([sys.executable, "-c", RUN, str(config), str(results)])
        time.sleep(delay)
        assert child.poll() in (None, 0), child.stderr.read()[-2000:]  # running (or done) when killed: no error ended it
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    runs = [p for p in (results / "killed").glob("*")] if (results / "killed").exists() else []
    visible = [p for p in runs if not p.name.startswith(".")]
    for run in visible:  # whatever is visible is whole
        assert {"config.json", "environment.json", "metrics.json", "runs", "report.md"} - {p.name for p in run.iterdir()} <= {"report.md"}
    if delay is None:
        assert len(visible) == 1
    from openclaw_lab.harness.results import latest_run

    for partial in (p for p in runs if p.name.startswith(".")):
        with pytest.raises(ValueError, match="did not finish"):
            latest_run(partial)
