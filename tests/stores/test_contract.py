"""One contract, four stores: exact, chroma, qdrant and milvus must behave the same on one corpus.

The exact store is the reference. At 200 items the approximate indexes (chroma's HNSW, milvus's
AUTOINDEX) return the exact top k, so ids are compared without tolerance; scores to 1e-4.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta

import numpy as np
import pytest

from openclaw_lab.model import MemoryFilter, MemoryItem, MemoryTier
from openclaw_lab.stores import ExactStore

from .conftest import (
    DIM, KINDS, ODD_IDS, ODD_TAG, T0, TIER_KINDS, close, make_corpus, open_store, store_path, unit_vectors,
)  # fmt: skip

FILTERS = {
    "none": MemoryFilter(),
    "min_importance": MemoryFilter(min_importance=4),
    "rare_tag": MemoryFilter(tags_any=("rare",)),
    "tags_any": MemoryFilter(tags_any=("work", "travel")),
    "tags_all": MemoryFilter(tags_all=("work", "family")),
    "odd_tag": MemoryFilter(tags_any=(ODD_TAG,)),
    "unknown_tag": MemoryFilter(tags_any=("no-such-tag",)),
    "window": MemoryFilter(since=T0 + timedelta(days=10), until=T0 + timedelta(days=20)),
    "since": MemoryFilter(since=T0 + timedelta(days=50)),
    "sessions": MemoryFilter(session_ids=("s1", "s3")),
    "tier": MemoryFilter(tiers={MemoryTier.SEMANTIC}),
    "no_tier": MemoryFilter(tiers=frozenset()),
    "speaker": MemoryFilter(where={"speaker": "alice"}),
    "quoted_value": MemoryFilter(where={"speaker": 'o"neil'}),
    "int_meta": MemoryFilter(where={"turn": 3}),
    "float_meta": MemoryFilter(where={"score": 2.25}),
    "bool_meta": MemoryFilter(where={"flag": True}),
    "one_is_true": MemoryFilter(where={"flag": 1}),  # the reference has True == 1 == 1.0
    "float_as_int": MemoryFilter(where={"score": 1}),  # 1.0 == 1
    "combined": MemoryFilter(
        min_importance=2, tags_any=("work", "health"), since=T0 + timedelta(days=5), where={"speaker": "bob"}
    ),
}


@pytest.fixture(scope="module")
def filled(kind, tmp_path_factory, corpus):
    store = open_store(kind, tmp_path_factory.mktemp(kind))
    store.upsert(corpus)
    yield store
    close(store)


@pytest.fixture(scope="module")
def queries() -> np.ndarray:
    return unit_vectors(np.random.default_rng(11), 4)


def ids(hits) -> list[str]:
    return [hit.item.id for hit in hits]


@pytest.mark.parametrize("name", FILTERS)
def test_search_returns_the_exact_top_k_under_each_filter(filled, reference, queries, name):
    for query in queries:
        expected = reference.search(query, 10, FILTERS[name])
        got = filled.search(query, 10, FILTERS[name])
        assert ids(got) == ids(expected)
        np.testing.assert_allclose([h.score for h in got], [h.score for h in expected], atol=1e-4)


@pytest.mark.parametrize("name", FILTERS)
def test_the_reference_agrees_with_memory_filter_matches(reference, corpus, name):
    """The exact store's vectorised filters are checked against MemoryFilter.matches, the semantics."""
    assert [i.id for i in reference.items(FILTERS[name])] == [i.id for i in corpus if FILTERS[name].matches(i)]


def test_filters_are_selective_on_this_corpus(reference, kind):
    """Guards the fixture: each filter keeps some items and drops others (so the comparisons mean something)."""
    if kind in TIER_KINDS:
        pytest.skip("a tier holds one tier: its tier filter keeps all or nothing")
    sizes = {name: len(list(reference.items(f))) for name, f in FILTERS.items()}
    assert sizes["none"] == 200 and sizes["rare_tag"] == 3 and sizes["odd_tag"] == 4
    assert sizes["no_tier"] == sizes["unknown_tag"] == 0
    assert all(0 < size < 200 for name, size in sizes.items() if name not in ("none", "no_tier", "unknown_tag"))


@pytest.mark.parametrize("name", FILTERS)
def test_items_returns_exactly_the_matching_items(filled, reference, name):
    got = sorted(filled.items(FILTERS[name]), key=lambda item: item.id)
    expected = sorted(reference.items(FILTERS[name]), key=lambda item: item.id)
    assert got == expected  # whole records: times, tags, metadata, source ids all survive the round trip


def test_items_paginate_past_one_page(filled, reference, monkeypatch):
    module = sys.modules[type(filled).__module__]
    if hasattr(module, "PAGE"):
        monkeypatch.setattr(module, "PAGE", 7)
    assert sorted(i.id for i in filled.items()) == sorted(i.id for i in reference.items())


def test_search_scores_are_similarities_best_first(filled, corpus):
    hits = filled.search(corpus[42].embedding, 5)
    assert hits[0].item.id == corpus[42].id and hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_k_larger_than_the_store_returns_every_match(filled, reference, queries):
    hits = filled.search(queries[0], 500, FILTERS["min_importance"])
    assert ids(hits) == ids(reference.search(queries[0], 500, FILTERS["min_importance"]))


def test_get_keeps_the_asked_order_and_skips_missing_ids(filled, corpus):
    wanted = [ODD_IDS[3], "no-such-id", corpus[150].id, ODD_IDS[0]]
    got = filled.get(wanted)
    assert [item.id for item in got] == [ODD_IDS[3], corpus[150].id, ODD_IDS[0]]
    assert got[1] == corpus[150]
    cosine = float(got[1].embedding @ corpus[150].embedding) / float(np.linalg.norm(got[1].embedding))
    assert cosine == pytest.approx(1.0, abs=1e-6)
    assert filled.get([]) == []


def test_count_and_bad_queries(filled):
    assert filled.count() == 200
    with pytest.raises(ValueError, match="k"):
        filled.search(np.ones(DIM), 0)
    with pytest.raises(ValueError, match=f"dimension 5 does not match the store's {DIM}"):
        filled.search(np.ones(5), 3)


# ---- writes, on a small fresh store of each kind ----

SMALL = make_corpus(12, seed=3)  # the reopen tests' items (a tier restamps their tier; nothing compares it there)


def test_empty_store(fresh):
    assert fresh.count() == 0
    assert fresh.search(np.ones(DIM), 3) == []
    assert list(fresh.items()) == [] and fresh.get(["x"]) == []
    fresh.delete(["x"])  # unknown ids are ignored
    with pytest.raises(ValueError, match="k"):
        fresh.search(np.ones(DIM), 0)


def test_upsert_replaces_by_id(fresh, small):
    fresh.upsert(small)
    new_vector = -small[0].embedding
    assert fresh.search(new_vector, 12, MemoryFilter(tags_any=("new",))) == []
    changed = small[0].replace(content="changed", importance=5, tags=("new",), embedding=new_vector)
    fresh.upsert([changed])
    assert fresh.count() == len(small)
    assert fresh.get([changed.id])[0].content == "changed"
    assert fresh.search(new_vector, 1)[0].item == changed
    assert ids(fresh.search(new_vector, 12, MemoryFilter(tags_any=("new",)))) == [changed.id]


def test_upsert_of_one_batch_keeps_the_last_copy_of_an_id(fresh, small):
    fresh.upsert([small[0], small[0].replace(content="second copy")])
    assert fresh.count() == 1 and fresh.get([small[0].id])[0].content == "second copy"


def test_delete_removes_and_ignores_unknown_ids(fresh, small):
    fresh.upsert(small)
    tagged = MemoryFilter(tags_any=("work", "family", "travel", "health"))
    assert len(list(fresh.items(tagged))) == sum(map(tagged.matches, small))
    fresh.delete([small[1].id, "unknown", small[1].id])
    assert fresh.count() == len(small) - 1
    kept = sorted(item.id for item in small[:1] + small[2:] if tagged.matches(item))
    assert sorted(item.id for item in fresh.items(tagged)) == kept
    assert fresh.get([small[1].id]) == []
    assert small[1].id not in ids(fresh.search(small[1].embedding, 12))


def test_bad_batches_leave_the_store_unchanged(fresh, small):
    fresh.upsert(small[:3])
    no_embedding = MemoryItem.new("no vector", now=T0, id="bare")
    with pytest.raises(ValueError, match="embedding: item 'bare' has no embedding"):
        fresh.upsert([small[5], no_embedding])
    short = small[6].replace(embedding=np.ones(DIM - 1))
    with pytest.raises(ValueError, match=f"dimension {DIM - 1} does not match the store's {DIM}"):
        fresh.upsert([small[7], short])
    assert fresh.count() == 3 and fresh.get([small[5].id, small[7].id]) == []


# ---- persistence and the errors of a reopen ----

CHILD = """
import json, sys
import numpy as np
from openclaw_lab.model import MemoryFilter
from openclaw_lab.harness.registry import stores
from openclaw_lab.stores import SQLiteStore
from openclaw_lab.tiers import EpisodicMemory, SemanticMemory
kind, path, query = sys.argv[1], sys.argv[2], np.array(json.loads(sys.argv[3]))
if kind == "episodic":
    store = EpisodicMemory(path)
elif kind == "semantic":
    store = SemanticMemory(SQLiteStore(path))
else:
    store = stores.create(kind, path=path)
print(json.dumps({
    "count": store.count(),
    "model": store.embedding_model,
    "top": [hit.item.id for hit in store.search(query, 5)],
    "important": sorted(item.id for item in store.items(MemoryFilter(min_importance=4))),
    "contents": [item.content for item in store.get(["mem-100", "mem-007"])],
}))
getattr(store, "close", lambda: None)()
"""


@pytest.mark.parametrize("kind", KINDS, scope="module")
def test_a_new_process_reopens_the_store(kind, tmp_path, corpus, queries):
    persisted = corpus[:60]  # qdrant's local mode commits each point on its own: keep this small
    store = open_store(kind, tmp_path, embedding_model="model-a")
    store.upsert(persisted)
    store.delete(["mem-059"])
    close(store)
    reference = ExactStore()
    reference.upsert(persisted[:59])
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
    argv = [sys.executable, "-c", CHILD, kind, str(store_path(kind, tmp_path)), json.dumps(queries[0].tolist())]
    child = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
    assert child.returncode == 0, child.stderr[-2000:]
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    assert seen["count"] == 59 and seen["model"] == "model-a"
    assert seen["top"] == ids(reference.search(queries[0], 5))
    assert seen["important"] == sorted(i.id for i in reference.items(FILTERS["min_importance"]))
    assert seen["contents"] == ["memory number 7"]  # mem-100 was never stored


@pytest.mark.parametrize("kind", KINDS, scope="module")
def test_reopen_checks_the_embedding_model_and_dimension(kind, tmp_path):
    store = open_store(kind, tmp_path, embedding_model="model-a")
    store.upsert(SMALL)
    close(store)
    with pytest.raises(ValueError, match="holds vectors of 'model-a', not 'model-b'"):
        open_store(kind, tmp_path, embedding_model="model-b").count()  # a store may connect on first use
    store = open_store(kind, tmp_path)  # no model given: the recorded one is adopted, nothing is wiped
    try:
        assert store.embedding_model == "model-a" and store.count() == len(SMALL)
        with pytest.raises(ValueError, match=f"dimension 8 does not match the store's {DIM}"):
            store.upsert([SMALL[0].replace(id="other-dim", embedding=np.ones(8))])
        assert store.count() == len(SMALL)
    finally:
        close(store)
