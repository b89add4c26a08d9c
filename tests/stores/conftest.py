"""Shared fixtures for the store tests: one seeded corpus, and a way to open any store by name."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from openclaw_lab.model import MemoryItem, MemoryTier
from openclaw_lab.harness.registry import stores
from openclaw_lab.stores import ExactStore, SQLiteStore
from openclaw_lab.tiers import EpisodicMemory, SemanticMemory

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
# The tiers are stores too (consolidation reads and writes them as such); each keeps one tier.
TIER_KINDS = {"episodic": MemoryTier.EPISODIC, "semantic": MemoryTier.SEMANTIC}
KINDS = ["exact", "sqlite", "chroma", "qdrant", "milvus", *TIER_KINDS]
DIM = 32
N_ITEMS = 200
TAGS = ["work", "family", "travel", "health"]
ODD_TAG = 'v1.2 "beta"\\x'  # dots, quotes and a backslash must survive every backend's filter syntax
# ids of any string form: Qdrant maps them to UUIDs, Milvus keeps them as VARCHAR keys
ODD_IDS = ["id with spaces", "ünïcode/ä", 'quote"s\'', "new\nline", "123", "6f0c1a2e-0000-5000-8000-000000000000"]


def unit_vectors(rng: np.random.Generator, n: int, dim: int = DIM) -> np.ndarray:
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def make_corpus(n: int = N_ITEMS, seed: int = 7) -> list[MemoryItem]:
    """``n`` items with random unit vectors and varied importance, tags, times, tiers and metadata."""
    rng = np.random.default_rng(seed)
    vectors = unit_vectors(rng, n)
    items = []
    for i in range(n):
        tags = [tag for tag in TAGS if rng.random() < 0.3]
        if i % 67 == 5:  # three items hold the rare tag
            tags.append("rare")
        if i % 50 == 1:
            tags.append(ODD_TAG)
        items.append(
            MemoryItem.new(
                f"memory number {i}",
                id=ODD_IDS[i] if i < len(ODD_IDS) else f"mem-{i:03d}",
                now=T0 + timedelta(hours=int(rng.integers(0, 24 * 60)), microseconds=int(rng.integers(0, 10**6))),
                tier=[MemoryTier.EPISODIC, MemoryTier.SEMANTIC, MemoryTier.WORKING][i % 3],
                importance=int(rng.integers(1, 6)),
                embedding=vectors[i],
                tags=tags,
                session_id=f"s{i % 5}",
                source_ids=[f"D{i}:1", f"D{i}:2"][: i % 3],
                metadata={
                    "speaker": ["alice", "bob", 'o"neil'][i % 3],
                    "turn": i % 7,
                    "score": [0.5, 1.0, 2.25][i % 3],
                    "flag": bool(i % 2),
                },
            )
        )
    return items


def retier(items: list[MemoryItem], kind: str) -> list[MemoryItem]:
    """The items as a store of ``kind`` holds them: a tier stores every item as its own tier."""
    return [item.replace(tier=TIER_KINDS[kind]) for item in items] if kind in TIER_KINDS else list(items)


def store_path(kind: str, folder: Path) -> Path:
    """milvus-lite and SQLite want a file name; the others a folder."""
    files = {"milvus": "memories.db", "sqlite": "memories.sqlite", "episodic": "episodic.sqlite", "semantic": "s.sqlite"}
    return folder / files[kind] if kind in files else folder


def open_store(kind: str, folder: Path, **params):
    """The store registered as ``kind`` (or the tier of that name), persisted under ``folder``."""
    path = store_path(kind, folder)
    if kind == "episodic":
        return EpisodicMemory(path, **params)
    if kind == "semantic":
        return SemanticMemory(SQLiteStore(path, **params))
    return stores.create(kind, path=path, **params)


def close(store) -> None:
    getattr(store, "close", lambda: None)()


@pytest.fixture(scope="module", params=KINDS)
def kind(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def corpus(kind) -> list[MemoryItem]:
    return retier(make_corpus(), kind)


@pytest.fixture(scope="module")
def reference(corpus) -> ExactStore:
    store = ExactStore()
    store.upsert(corpus)
    return store


@pytest.fixture
def fresh(kind, tmp_path):
    """An empty store of each kind in its own folder (closed afterwards)."""
    store = open_store(kind, tmp_path)
    yield store
    close(store)


@pytest.fixture
def small(kind) -> list[MemoryItem]:
    return retier(make_corpus(12, seed=3), kind)
