"""Vector stores behind one protocol: the exact numpy reference, SQLite (many processes), and the Chroma,
Qdrant and Milvus adapters.

The adapters load lazily, so importing this package never imports chromadb, qdrant-client or pymilvus.

>>> from openclaw_lab.stores import ExactStore, VectorStore
>>> isinstance(ExactStore(), VectorStore)
True
"""

from __future__ import annotations

import importlib
from typing import Any

from openclaw_lab.stores.exact import ExactStore
from openclaw_lab.stores.protocol import AccessCounter, VectorStore
from openclaw_lab.stores.sqlite import SQLiteStore

__all__ = ["VectorStore", "AccessCounter", "ExactStore", "SQLiteStore", "ChromaStore", "QdrantStore", "MilvusStore"]

_LAZY = {
    "ChromaStore": "openclaw_lab.stores.chroma",
    "QdrantStore": "openclaw_lab.stores.qdrant",
    "MilvusStore": "openclaw_lab.stores.milvus",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
