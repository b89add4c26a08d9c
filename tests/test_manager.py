import subprocess
import sys
from datetime import timedelta

import pytest

from openclaw_lab.manager import MemoryManager
from openclaw_lab.model import Importance, MemoryFilter, MemoryQuery, MemoryTier


@pytest.fixture
def manager(tmp_path, embedder, clock):
    return MemoryManager.open(tmp_path / "memory", embedder=embedder, clock=clock)


def test_add_then_search_finds_it(manager):
    manager.add("My sister Ana lives in Porto", session_id="s1")
    manager.add("The weather was rainy all week", session_id="s1")
    hits = manager.search("Where does my sister live?")
    assert hits[0].item.content == "My sister Ana lives in Porto"
    assert hits[0].score > hits[1].score


def test_critical_items_are_promoted_to_semantic_memory(manager):
    item = manager.add("I am allergic to peanuts", session_id="s1", importance=Importance.CRITICAL, source_ids=["D1:3"])
    copy = manager.semantic.get([f"sem_{item.id}"])[0]
    assert copy.tier is MemoryTier.SEMANTIC
    assert copy.metadata["consolidated_from"] == item.id and copy.source_ids == ("D1:3",)
    only_semantic = MemoryQuery("food allergy", filter=MemoryFilter(tiers=[MemoryTier.SEMANTIC]))
    assert [h.item.id for h in manager.search(only_semantic)] == [copy.id]


def test_access_counts_persist_across_a_reopen_in_a_new_process(tmp_path, embedder, clock):
    path = tmp_path / "memory"
    manager = MemoryManager.open(path, embedder=embedder, clock=clock)
    item = manager.add("We adopted a puppy named Max", session_id="s1", importance=Importance.CRITICAL)
    clock.advance(timedelta(days=2))
    manager.search("what is the dog called?")
    manager.search("the puppy")
    manager.close()
    script = f"""
from openclaw_lab.manager import MemoryManager
from openclaw_lab.stores.chroma import ChromaStore
m = MemoryManager.open({str(path)!r})
for item in (m.get({item.id!r}), m.get("sem_" + {item.id!r})):
    print(item.access_count, item.last_accessed.isoformat())
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["2", clock.now().isoformat()] * 2


def test_update_re_embeds_and_delete_removes(manager):
    item = manager.add("I work as a nurse", session_id="s1")
    manager.update(item.id, content="I work as a firefighter now", importance=4)
    hit = manager.search("firefighter job", record_access=False)[0]
    assert hit.item.id == item.id and hit.item.importance == 4 and hit.score > 0.5
    with pytest.raises(ValueError, match="^tier"):
        manager.update(item.id, tier="semantic")
    assert manager.delete(item.id) and manager.get(item.id) is None
    assert not manager.delete(item.id)


def test_working_items_are_searchable_and_scoped_by_session(manager):
    manager.add("Remind me to call mum", session_id="s1", tier="working")
    manager.add("Buy oat milk", session_id="s2", tier="working")
    assert "call mum" in manager.working("s1").context()
    assert "oat milk" not in manager.working("s1").context()
    assert manager.footprint() == {"working": 2, "episodic": 0, "semantic": 0}


def test_bad_input_changes_nothing(manager):
    manager.add("kept", session_id="s1")
    for bad in ({"content": ""}, {"content": "x", "importance": 9}, {"content": "x", "tags": [1]}):
        with pytest.raises(ValueError):
            manager.add_many([{"content": "fine"}, bad])
    assert manager.footprint()["episodic"] == 1


# ---- one hit per memory, whatever the mix of tiers ----

from datetime import datetime, timezone  # noqa: E402

import numpy as np  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from openclaw_lab.clock import SimulatedClock  # noqa: E402
from openclaw_lab.embedding import Embedder  # noqa: E402
from openclaw_lab.stores.exact import ExactStore  # noqa: E402
from openclaw_lab.tiers.episodic import EpisodicMemory  # noqa: E402
from openclaw_lab.tiers.semantic import SemanticMemory  # noqa: E402

MEMORY = st.tuples(st.integers(1, 5), st.integers(0, 7))  # importance (5: also copied to semantic), direction


@settings(max_examples=40, deadline=None)
@given(memories=st.lists(MEMORY, min_size=1, max_size=25), limit=st.integers(1, 30), query=st.integers(0, 7))
def test_cross_tier_search_returns_each_memory_once(tmp_path_factory, memories, limit, query):
    """CRITICAL memories have two copies (episodic and semantic); a search lists each memory once."""
    path = tmp_path_factory.mktemp("m") / "e.sqlite"
    memory = MemoryManager(embedder=Embedder(cache=False, model_id="t"), episodic=EpisodicMemory(path),
                           semantic=SemanticMemory(ExactStore()), clock=SimulatedClock(datetime(2024, 1, 1, tzinfo=timezone.utc)))  # fmt: skip
    basis = np.eye(8, dtype=np.float32)
    memory.add_many([{"content": f"m{i}", "id": f"m{i}", "importance": importance, "embedding": basis[axis] + 0.01 * i}
                     for i, (importance, axis) in enumerate(memories)])  # fmt: skip
    hits = memory.search_vector(basis[query], limit)
    numbers = [int(hit.item.id.removeprefix("sem_")[1:]) for hit in hits]
    assert len(numbers) == len(set(numbers)) == min(limit, len(memories))
    for number, hit in zip(numbers, hits):
        held = {"episodic", "semantic"} if memories[number][0] == 5 else {"episodic"}
        assert set(hit.tiers) == held
    memory.close()
