"""Many processes, one memory folder: nothing lost, nothing undone, every process sees the others' writes.

Real processes (``multiprocessing`` with ``spawn``) open one ``MemoryManager.open(path)`` at the same
moment (a barrier). Vectors are precomputed so that no process loads the model: what is tested is
the storage, SQLite and the semantic outbox, not the encoder.
"""

from __future__ import annotations

import multiprocessing as mp
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from openclaw_lab.clock import SimulatedClock
from openclaw_lab.embedding import Embedder
from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import Importance, MemoryFilter, MemoryTier

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
ADDS = 200
DIM = 16
# seconds every process waits for the others to open the memory: a process that dies before then breaks
# the barrier, so the others stop too and the test fails at once instead of waiting out every join
START_TIMEOUT = 120


def vector(n: int) -> np.ndarray:
    v = np.random.default_rng(n).normal(size=DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def open_memory(path: str) -> MemoryManager:
    return MemoryManager.open(path, embedder=Embedder(cache=False, model_id="test-vectors"), clock=SimulatedClock(T0))


def writer(path: str, w: int, barrier) -> None:
    memory = open_memory(path)
    barrier.wait(timeout=START_TIMEOUT)
    for n in range(ADDS):
        number = w * 10_000 + n
        importance = Importance.CRITICAL if n % 10 == 0 else Importance.MEDIUM  # every 10th is promoted too
        memory.add(f"writer {w} memory {n}", id=f"w{w}-{n}", session_id=f"s{n % 3}", importance=importance,
                   embedding=vector(number))  # fmt: skip
    memory.close()


def updater(path: str, barrier, done) -> None:
    """Updates writer 0's items as they appear: each update must survive every other process's accesses."""
    memory = open_memory(path)
    barrier.wait(timeout=START_TIMEOUT)
    updated = set()
    while len(updated) < ADDS:
        for n in range(ADDS):
            if n not in updated and memory.get(f"w0-{n}") is not None:
                memory.update(f"w0-{n}", tags=["updated"], metadata={"by": "updater"})
                updated.add(n)
    done.put(len(updated))
    memory.close()


def reader(path: str, writers: int, barrier, writers_done, out) -> None:
    """Searches while the others write (each search records accesses), then checks it sees every write."""
    memory = open_memory(path)
    barrier.wait(timeout=START_TIMEOUT)
    accesses, n = 0, 0
    while not writers_done.is_set():
        hits = memory.search_vector(vector(n % ADDS), 3, MemoryFilter(tiers={MemoryTier.EPISODIC}))
        accesses += len(hits)
        n += 1
    seen = {item.id for item in memory.episodic.items()}
    found = [memory.episodic.search(vector(w * 10_000 + ADDS - 1), 1)[0].item.id for w in range(writers)]
    out.put({"accesses": accesses, "seen": len(seen), "last_found": found})
    memory.close()


@pytest.mark.parametrize("writers", [4, 8])
def test_writers_a_reader_and_an_updater_on_one_folder(tmp_path, writers):
    ctx = mp.get_context("spawn")
    path = str(tmp_path / "memory")
    barrier, writers_done = ctx.Barrier(writers + 2), ctx.Event()
    done, out = ctx.Queue(), ctx.Queue()
    procs = [ctx.Process(target=writer, args=(path, w, barrier)) for w in range(writers)]
    procs += [ctx.Process(target=updater, args=(path, barrier, done))]
    read = ctx.Process(target=reader, args=(path, writers, barrier, writers_done, out))
    for proc in [*procs, read]:
        proc.start()
    for proc in procs:
        proc.join(timeout=300)
        assert proc.exitcode == 0
    writers_done.set()
    read.join(timeout=120)
    assert read.exitcode == 0 and done.get(timeout=5) == ADDS
    report = out.get(timeout=5)
    assert report["accesses"] > 0  # the reader searched while the others wrote

    memory = open_memory(path)
    total = writers * ADDS
    assert memory.episodic.count() == total
    assert memory.semantic.count() == writers * ADDS // 10  # every CRITICAL add has its long-term copy
    ids = [f"w{w}-{n}" for w in range(writers) for n in range(ADDS)]
    assert len(memory.episodic.get(ids)) == total
    assert len(memory.semantic.get([f"sem_w{w}-{n}" for w in range(writers) for n in range(0, ADDS, 10)])) == total // 10
    # no update undone by the reader's access records, and no access lost to the updater's writes
    assert all(item.tags == ("updated",) for item in memory.episodic.get([f"w0-{n}" for n in range(ADDS)]))
    assert sum(item.access_count for item in memory.episodic.items()) == report["accesses"]
    # the reader, open since before the first write, sees every committed write
    assert report["seen"] == total
    assert report["last_found"] == [f"w{w}-{ADDS - 1}" for w in range(writers)]
    assert memory.episodic.pending_semantic() == []


def test_an_explicit_id_that_exists_is_refused_unless_replace(tmp_path):
    memory = open_memory(str(tmp_path))
    memory.add("Ana lives in Porto", id="ana", embedding=vector(1))
    with pytest.raises(ValueError, match=r"^id: \['ana'\] already stored; update them, or add with replace=True"):
        memory.add("Ana lives in Lyon", id="ana", embedding=vector(2))
    assert memory.get("ana").content == "Ana lives in Porto"
    memory.add("Ana lives in Lyon", id="ana", embedding=vector(2), replace=True)
    assert memory.get("ana").content == "Ana lives in Lyon"


def test_an_update_is_not_undone_by_another_processes_stale_access(tmp_path):
    """Process B holds a cached copy from before A's update; B's access must only count, never write back."""
    a, b = open_memory(str(tmp_path)), open_memory(str(tmp_path))
    a.add("I play the cello", id="x", embedding=vector(3))
    b.search_vector(vector(3), 1)  # B's index now holds the old copy
    a.update("x", tags=["viola"])
    b.clock.advance(timedelta(days=1))
    b.search_vector(vector(3), 1)
    item = a.get("x")
    assert item.tags == ("viola",) and item.access_count == 2
