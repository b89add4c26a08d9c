"""Shared fixtures: one real embedding model per test session, with an on-disk cache."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from openclaw_lab.clock import SimulatedClock  # noqa: E402
from openclaw_lab.embedding import Embedder  # noqa: E402

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets"
if SHARED_DATA.is_dir():
    os.environ.setdefault("OPENCLAW_LAB_DATA", str(SHARED_DATA))


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The packaged all-MiniLM-L6-v2, loaded once per worker. Its cache is the one the CLI, notebooks and docs
    pages use (``$OPENCLAW_LAB_CACHE``, ``make test`` sets the repository's ``.cache``), so a text one test
    worker encoded is read, not encoded again, by the other and by them."""
    return Embedder()


@pytest.fixture
def clock() -> SimulatedClock:
    return SimulatedClock(T0)


@pytest.fixture(scope="session")
def locomo_path() -> Path:
    """locomo10.json from OPENCLAW_LAB_DATA or ../shared/datasets; skip where it is absent."""
    root = Path(os.environ.get("OPENCLAW_LAB_DATA") or SHARED_DATA)
    path = root / "locomo" / "locomo10.json"
    if not path.exists():
        pytest.skip(f"LoCoMo is not on the data path ({path}); see datasets/locomo/CARD.md")
    return path
