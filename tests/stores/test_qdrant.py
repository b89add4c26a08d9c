"""Qdrant specifics: string ids map to stable UUIDs, the original id is kept, opening never recreates."""

from __future__ import annotations

import uuid

import pytest
from qdrant_client import QdrantClient, models

from openclaw_lab.stores.qdrant import QdrantStore, point_id

from .conftest import make_corpus

SMALL = make_corpus(12, seed=9)


def test_point_ids_are_stable_uuid5s():
    assert point_id("mem-1") == point_id("mem-1") != point_id("mem-2")
    assert uuid.UUID(point_id("any string at all")).version == 5


def test_the_payload_keeps_the_original_id(tmp_path):
    store = QdrantStore(tmp_path)
    store.upsert(SMALL[:3])
    record = store._client.retrieve("memories", ids=[point_id(SMALL[1].id)])[0]
    assert record.id == point_id(SMALL[1].id) and record.payload["id"] == SMALL[1].id
    store.close()


def test_opening_an_existing_collection_keeps_its_points(tmp_path, monkeypatch):
    store = QdrantStore(tmp_path)
    store.upsert(SMALL)
    store.close()
    refuse = lambda *a, **k: pytest.fail("an existing collection must not be created again")  # noqa: E731
    monkeypatch.setattr(QdrantClient, "create_collection", refuse)
    monkeypatch.setattr(QdrantClient, "delete_collection", refuse)
    store = QdrantStore(tmp_path)
    assert store.count() == 12
    store.close()


def test_a_collection_with_another_distance_is_refused(tmp_path):
    client = QdrantClient(path=str(tmp_path))
    client.create_collection("memories", vectors_config=models.VectorParams(size=4, distance=models.Distance.DOT))
    client.close()
    with pytest.raises(ValueError, match="cosine distance"):
        QdrantStore(tmp_path)
