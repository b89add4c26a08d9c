"""An SQLite store's in-memory index follows its own writes without reading them back: whatever the
mix of writes by this handle and by another one on the same file (another process, as SQLite sees
it), every handle searches exactly what a handle opened afresh on the file loads."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_lab.model import MemoryItem
from openclaw_lab.stores import SQLiteStore

from .conftest import T0, unit_vectors

IDS = [f"m{i}" for i in range(8)]
VECTORS = unit_vectors(np.random.default_rng(3), 4 * len(IDS), 8)  # one per id and version: no tied scores


def item(n: int, version: int, count: int) -> MemoryItem:
    at = T0 + timedelta(hours=n, microseconds=7 * version)
    return MemoryItem.new(f"memory {n} v{version}", id=IDS[n], now=at, embedding=VECTORS[4 * n + version],
                          access_count=count, importance=1 + version % 5, metadata={"v": version, "x": 0.1 * n})  # fmt: skip


operation = st.tuples(
    st.integers(0, 1),  # which handle writes
    st.sampled_from(["upsert", "insert", "access", "delete"]),
    st.lists(st.integers(0, len(IDS) - 1), min_size=1, max_size=4),
    st.integers(0, 3),  # version, access count or hours after T0
)


def apply(store: SQLiteStore, kind: str, ns: list[int], value: int) -> None:
    if kind == "upsert":
        store.upsert([item(n, value, value) for n in ns])
    elif kind == "insert":
        try:
            store.insert([item(n, value, 0) for n in ns])
        except ValueError:
            pass  # an id already stored: refused, nothing written
    elif kind == "access":
        store.record_access([IDS[n] for n in ns], T0 + timedelta(hours=value, seconds=0.5))
    else:
        store.delete([IDS[n] for n in ns])


def state(store: SQLiteStore) -> tuple[dict, list[str], np.ndarray]:
    """Every indexed item with its stored fields and vector, and the ranking and scores of one query
    (scores to float tolerance: the matrix product's last bits depend on where a row sits)."""
    hits = store.search(VECTORS[-1], k=len(IDS))
    items = {hit.item.id: (hit.item, hit.item.embedding.tolist()) for hit in hits}
    return items, [hit.item.id for hit in hits], np.round([hit.score for hit in hits], 5)


def same(a: tuple, b: tuple) -> bool:
    return a[0] == b[0] and a[1] == b[1] and np.array_equal(a[2], b[2])


@settings(max_examples=100, deadline=None)
@given(st.lists(operation, max_size=12), st.lists(st.booleans(), min_size=12, max_size=12))
def test_each_handle_searches_what_a_fresh_handle_loads(tmp_path_factory, operations, reads):
    path = tmp_path_factory.mktemp("sqlite") / "memories.sqlite"
    handles = [SQLiteStore(path), SQLiteStore(path)]
    for (who, kind, ns, value), read in zip(operations, reads):
        apply(handles[who], kind, ns, value)
        if read:  # a read between writes: the index is current, so the next own write is followed, not reloaded
            state(handles[who])
    fresh = state(SQLiteStore(path))
    assert same(state(handles[0]), fresh)
    assert same(state(handles[1]), fresh)
    assert [i.id for i in handles[0].items()] == [i.id for i in SQLiteStore(path).items()]


def test_a_rolled_back_write_never_reaches_the_index(tmp_path):
    store = SQLiteStore(tmp_path / "memories.sqlite")
    store.upsert([item(0, 0, 0)])
    assert len(store.search(VECTORS[0], k=5)) == 1
    with pytest.raises(RuntimeError):
        with store.db.transaction() as conn:
            store.write_rows(conn, store.prepare([item(1, 0, 0)]), replace=True)
            raise RuntimeError("a crash before the commit")
    assert [hit.item.id for hit in store.search(VECTORS[0], k=5)] == ["m0"]
    store.upsert([item(2, 0, 0)])
    assert same(state(store), state(SQLiteStore(tmp_path / "memories.sqlite")))
    assert {hit.item.id for hit in store.search(VECTORS[0], k=5)} == {"m0", "m2"}
