import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from openclaw_lab.model import MemoryItem, MemoryTier
from openclaw_lab.tiers.episodic import EpisodicMemory

T0 = datetime(2023, 5, 8, tzinfo=timezone.utc)


def fill(memory: EpisodicMemory) -> list[MemoryItem]:
    memory.create_session("s1", user_id="ana", now=T0)
    memory.create_session("s2", user_id="ana", now=T0 + timedelta(days=1))
    memory.create_session("s3", user_id="bo", now=T0)
    items = [
        MemoryItem.new(f"note {i}", now=T0 + timedelta(minutes=i), id=f"m{i}", session_id="s1",
                       importance=1 + i % 5, tags=("t",), source_ids=(f"D1:{i}",), embedding=np.eye(4)[i % 4])
        for i in range(6)
    ]  # fmt: skip
    memory.upsert(items)
    return items


def test_written_in_one_process_read_in_another(tmp_path):
    path = tmp_path / "episodic.sqlite"
    memory = EpisodicMemory(path)
    items = fill(memory)
    memory.close()
    script = f"""
import json
from openclaw_lab.tiers.episodic import EpisodicMemory
m = EpisodicMemory({str(path)!r})
print(json.dumps([[i.id, i.content, i.source_ids[0], int(i.importance)] for i in m.list_memories("s1")]))
print(json.dumps([s.id for s in m.user_sessions("ana")]))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.splitlines()
    expected = [[i.id, i.content, i.source_ids[0], int(i.importance)] for i in reversed(items)]  # newest first
    assert json.loads(out[0]) == expected
    assert json.loads(out[1]) == ["s2", "s1"]  # most recently updated first; bo's session is not listed


def test_list_by_tier_and_limit_and_context(tmp_path):
    memory = EpisodicMemory(tmp_path / "e.sqlite")
    fill(memory)
    assert [i.id for i in memory.list_memories("s1", limit=2)] == ["m5", "m4"]
    assert all(i.tier is MemoryTier.EPISODIC for i in memory.list_memories("s1", tier="episodic"))
    assert memory.context("s1", limit=2).splitlines() == ["[2023-05-08 00:04] note 4", "[2023-05-08 00:05] note 5"]


def test_search_uses_embeddings_and_survives_reopen(tmp_path):
    memory = EpisodicMemory(tmp_path / "e.sqlite")
    fill(memory)
    assert [h.item.id for h in memory.search(np.eye(4)[1], k=2)] == ["m1", "m5"]
    reopened = EpisodicMemory(tmp_path / "e.sqlite")
    assert [h.item.id for h in reopened.search(np.eye(4)[1], k=2)] == ["m1", "m5"]


def test_bad_input_leaves_the_store_unchanged(tmp_path):
    memory = EpisodicMemory(tmp_path / "e.sqlite")
    fill(memory)
    before = [i.id for i in memory.items()]
    wrong_dim = MemoryItem.new("x", now=T0, id="bad", session_id="s1", embedding=np.ones(3))
    good = MemoryItem.new("y", now=T0, id="good", session_id="s1", embedding=np.ones(4))
    with pytest.raises(ValueError, match="^embedding: dimension 3"):
        memory.upsert([good, wrong_dim])
    with pytest.raises(ValueError, match="^session_id"):
        memory.create_session("s1", user_id="someone-else", now=T0)
    with pytest.raises(ValueError, match="^limit"):
        memory.list_memories("s1", limit=0)
    assert [i.id for i in memory.items()] == before


def test_a_failed_transaction_writes_nothing(tmp_path):
    memory = EpisodicMemory(tmp_path / "e.sqlite")
    fill(memory)
    with pytest.raises(RuntimeError):
        with memory.db.transaction() as conn:
            conn.execute("DELETE FROM memories")
            raise RuntimeError("crash mid-write")
    assert memory.count() == 6


def test_consolidation_log_round_trip(tmp_path):
    memory = EpisodicMemory(tmp_path / "e.sqlite")
    memory.append_consolidation(T0, {"promoted": ["a"], "pruned": []})
    assert EpisodicMemory(tmp_path / "e.sqlite").consolidation_log() == [{"promoted": ["a"], "pruned": []}]
