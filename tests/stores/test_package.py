"""The stores package exports every store, and importing it loads no optional backend."""

from __future__ import annotations

import subprocess
import sys

import pytest

import openclaw_lab.stores as stores_package
from openclaw_lab.harness.registry import stores


def test_importing_the_package_loads_no_backend():
    code = (
        "import sys, openclaw_lab.stores as s; "
        "print(sorted(m for m in ('chromadb', 'qdrant_client', 'pymilvus') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


def test_the_registry_and_the_package_name_the_same_classes():
    names = {"exact": "ExactStore", "sqlite": "SQLiteStore", "chroma": "ChromaStore", "qdrant": "QdrantStore",
             "milvus": "MilvusStore"}
    for name, attribute in names.items():
        assert stores.get(name) is getattr(stores_package, attribute)
    assert set(stores_package.__all__) == {
        "VectorStore", "AccessCounter", "ExactStore", "SQLiteStore", "ChromaStore", "QdrantStore", "MilvusStore"
    }


@pytest.mark.parametrize(
    "attribute, backend, hint",
    [
        ("ChromaStore", "chromadb", "pip install chromadb"),
        ("QdrantStore", "qdrant_client", "pip install qdrant-client"),
        ("MilvusStore", "pymilvus", "pip install pymilvus milvus-lite"),
    ],
)
def test_a_missing_backend_says_how_to_install_it(monkeypatch, tmp_path, attribute, backend, hint):
    monkeypatch.setitem(sys.modules, backend, None)  # makes `import backend` raise ImportError
    with pytest.raises(ImportError, match=hint):
        getattr(stores_package, attribute)(tmp_path / "x.db")
