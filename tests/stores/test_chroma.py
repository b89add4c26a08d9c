"""Chroma specifics: no network, never chroma's own embedding function, the where clause, batching."""

from __future__ import annotations

import os
import socket

import chromadb
import numpy as np
import pytest
from chromadb.api.types import DefaultEmbeddingFunction
from chromadb.config import Settings
from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

from openclaw_lab.model import MemoryFilter, MemoryItem
from openclaw_lab.stores.chroma import ChromaStore, chroma_where

from .conftest import DIM, T0, make_corpus

SMALL = make_corpus(12, seed=5)


def test_a_chroma_session_opens_no_socket_and_never_embeds_text(tmp_path, monkeypatch):
    attempts: list[str] = []

    def refuse(name):
        def record(*args, **kwargs):
            attempts.append(name)  # recorded as well as raised, in case chroma swallows the error
            raise OSError(f"{name} is not allowed in this test")

        return record

    monkeypatch.setattr(socket.socket, "connect", refuse("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("socket.connect_ex"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    monkeypatch.setattr(DefaultEmbeddingFunction, "__call__", refuse("DefaultEmbeddingFunction"))
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "__call__", refuse("ONNXMiniLM_L6_V2"))
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "_download_model_if_not_exists", refuse("model download"))

    store = ChromaStore(tmp_path, embedding_model="test-model")
    assert store._collection._embedding_function is None
    store.upsert(SMALL)
    assert len(store.search(SMALL[0].embedding, 3, MemoryFilter(min_importance=2))) > 0
    assert [item.id for item in store.get([SMALL[2].id])] == [SMALL[2].id]
    assert len(list(store.items(MemoryFilter(session_ids=("s1",))))) == 3
    store.delete([SMALL[3].id])
    store.close()
    reopened = ChromaStore(tmp_path)
    assert reopened.count() == 11
    reopened.close()
    assert attempts == []


def test_the_collection_records_model_and_dimension(tmp_path):
    store = ChromaStore(tmp_path, collection="notes", embedding_model="m1")
    assert store._collection.metadata == {"embedding_model": "m1"}
    store.upsert(SMALL[:2])
    assert store._collection.metadata == {"embedding_model": "m1", "embedding_dim": DIM}
    assert store._collection.configuration_json["hnsw"]["space"] == "cosine"
    store.close()


def test_a_collection_in_another_space_is_refused(tmp_path):
    client = chromadb.PersistentClient(path=str(tmp_path), settings=Settings(anonymized_telemetry=False))
    client.create_collection("memories", configuration={"hnsw": {"space": "l2"}}, embedding_function=None)
    store = ChromaStore(tmp_path)  # connects on first use, and refuses then
    with pytest.raises(ValueError, match="uses the 'l2' space"):
        store.count()


def test_upserts_are_chunked_below_chromas_max_batch_size(tmp_path, monkeypatch):
    store = ChromaStore(tmp_path)
    calls: list[int] = []
    original = store._collection.upsert
    monkeypatch.setattr(store._client, "get_max_batch_size", lambda: 5)
    monkeypatch.setattr(store._collection, "upsert", lambda **kw: calls.append(len(kw["ids"])) or original(**kw))
    store.upsert(SMALL)
    assert calls == [5, 5, 2] and store.count() == 12
    store.close()


def test_where_clauses_by_hand():
    assert chroma_where([]) is None
    assert chroma_where([("importance", "gte", 3)]) == {"importance": {"$gte": 3}}
    assert chroma_where([("tier", "in", ["semantic"]), ("created_at", "lt", 10.5)]) == {
        "$and": [{"tier": {"$in": ["semantic"]}}, {"created_at": {"$lt": 10.5}}]
    }
    # one tag: no single-element $or (chroma refuses it); tags as booleans that exist only when true
    assert chroma_where([("tags", "any_true", ["tag:a"])]) == {"tag:a": {"$eq": True}}
    # chroma keeps True apart from 1; the reference filter does not
    either = {"$or": [{"meta:flag": {"$eq": True}}, {"meta:flag": {"$eq": 1}}]}
    assert chroma_where([("meta:flag", "eq", True)]) == either
    assert chroma_where([("meta:speaker", "eq", "bob")]) == {"meta:speaker": {"$eq": "bob"}}


def test_empty_tier_set_matches_nothing(tmp_path):
    store = ChromaStore(tmp_path)
    store.upsert(SMALL)
    nothing = MemoryFilter(tiers=frozenset())
    assert store.search(np.ones(DIM), 3, nothing) == [] and list(store.items(nothing)) == []
    store.close()


def test_in_memory_stores_do_not_share_items():
    from datetime import datetime

    from openclaw_lab.model import MemoryItem

    first, second = ChromaStore(), ChromaStore()
    first.upsert([MemoryItem.new("only in the first", now=datetime(2023, 1, 1), id="a", embedding=np.ones(4))])
    assert first.count() == 1 and second.count() == 0


OTHER_PROCESS = """
import sys
from openclaw_lab.stores.chroma import ChromaStore
from openclaw_lab.stores.locks import StoreBusy
try:
    ChromaStore(sys.argv[1]).count()
except StoreBusy as error:
    print("busy:", error)
"""


def test_a_second_process_is_refused_with_what_to_do_and_nothing_is_touched(tmp_path):
    import subprocess
    import sys

    store = ChromaStore(tmp_path, embedding_model="m")
    store.upsert([MemoryItem.new("x", now=T0, id="a", embedding=[1.0, 0.0])])
    out = subprocess.run([sys.executable, "-c", OTHER_PROCESS, str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert out.stdout.startswith("busy:") and f"pid {os.getpid()}" in out.stdout and "SQLite store" in out.stdout
    assert store.count() == 1 and [hit.item.id for hit in store.search(np.array([1.0, 0.0]), 1)] == ["a"]
    store.close()
    again = subprocess.run([sys.executable, "-c", OTHER_PROCESS + "print('count', ChromaStore(sys.argv[1]).count())",
                            str(tmp_path)], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert "count 1" in again.stdout, again.stderr[-500:]


def test_a_store_opened_empty_searches_what_is_added_later(tmp_path):
    reader = ChromaStore(tmp_path)
    assert reader.search(np.array([1.0, 0.0]), 1) == []
    reader.upsert([MemoryItem.new("x", now=T0, id="a", embedding=[1.0, 0.0])])
    assert [hit.item.id for hit in reader.search(np.array([1.0, 0.0]), 1)] == ["a"]
