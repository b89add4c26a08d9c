"""Fixtures for the consolidation tests: items with hand-made unit vectors, at the `clock` start."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from openclaw_lab.model import MemoryItem

NOW = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)  # the shared `clock` fixture starts here
DIM = 8


def _unit(i: int, dim: int = DIM) -> np.ndarray:
    vector = np.zeros(dim, dtype=np.float32)
    vector[i % dim] = 1.0
    return vector


@pytest.fixture
def now() -> datetime:
    return NOW


@pytest.fixture
def unit():
    """``unit(i)``: the i-th basis vector; items on different axes have cosine 0 and never merge."""
    return _unit


@pytest.fixture
def make_item():
    """``make_item(id, importance=3, access=0, age_days=0, axis=0, **fields)``: an episodic item.

    It was created and last accessed ``age_days`` before NOW, with the unit vector on ``axis``.
    """

    def make(item_id: str, importance: int = 3, access: int = 0, age_days: float = 0.0, axis: int = 0, **fields):
        fields.setdefault("embedding", _unit(axis))
        return MemoryItem.new(f"memory {item_id}", now=NOW - timedelta(days=age_days), id=item_id,
                              importance=importance, access_count=access, **fields)

    return make
