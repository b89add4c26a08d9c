"""Chroma behind the VectorStore protocol: a persistent directory, or an HTTP server.

Chroma never embeds anything here: the collection has no embedding function and we never pass it
texts (its default function downloads a model). We hand it our own vectors; scores are
``1 - cosine distance``, so higher is better.

>>> import numpy as np
>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> store = ChromaStore(collection="doctest")  # in memory; ChromaStore("folder") persists
>>> store.upsert([MemoryItem.new("hi", now=datetime(2023, 1, 1), id="a", embedding=[1.0, 0.0])])
>>> [(hit.item.id, round(hit.score, 3)) for hit in store.search(np.array([1.0, 0.0]), k=1)]
[('a', 1.0)]
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from filelock import FileLock

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k, sorted_hits
from openclaw_lab.stores.locks import hold_folder
from openclaw_lab.stores.codec import check_batch, check_model, check_vector, filter_terms, flat_fields, from_flat

__all__ = ["ChromaStore", "chroma_where"]

MODEL_KEY, DIM_KEY = "embedding_model", "embedding_dim"  # our keys in the collection metadata
PAGE = 1000


def _import_chromadb():
    try:
        import chromadb
        from chromadb.config import Settings
    except ImportError as error:
        raise ImportError("ChromaStore needs chromadb: pip install chromadb") from error
    return chromadb, Settings


class ChromaStore:
    """A chroma collection in cosine space; ``path`` persists it, ``host`` uses a server, neither keeps it in memory.

    In memory, each store gets a private collection (chroma shares one ephemeral system per process,
    so a replay's conversations would otherwise see each other's items). The client connects on
    first use. Chroma's embedded client is not safe for several processes on one folder (their
    indexes drift apart and reads fail), so a folder is held by one process at a time: a second
    process that opens it gets ``StoreBusy``, which says what to do, and nothing is touched.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        collection: str = "memories",
        host: str | None = None,
        port: int = 8000,
        embedding_model: str | None = None,
    ) -> None:
        if path is not None and host is not None:
            raise ValueError(f"path/host: give a directory or a server, not both ({path!r}, {host!r})")
        _import_chromadb()  # a missing backend is said at once, not at the first write
        self.path = Path(path) if path is not None else None
        self.collection, self.host, self.port = collection, host, port
        self._wanted_model = embedding_model
        self._client: Any = None
        self._lock: FileLock | None = None
        self._max_batch: int | None = None
        self._known_dim: int | None = None

    def __repr__(self) -> str:
        where = f"{str(self.path)!r}" if self.path is not None else (f"host={self.host!r}" if self.host else "in memory")
        return f"ChromaStore({where}, collection={self.collection!r})"

    @property
    def _collection(self) -> Any:
        """The collection, connected on first use (and the folder held for this process)."""
        if self._client is None:
            self._connect()
        return self._coll

    def _connect(self) -> None:
        chromadb, Settings = _import_chromadb()
        settings = Settings(anonymized_telemetry=False)
        name = self.collection
        if self.host is not None:
            client = chromadb.HttpClient(host=self.host, port=self.port, settings=settings)
        elif self.path is not None:
            self.path.mkdir(parents=True, exist_ok=True)
            self._lock = hold_folder(self.path, "chroma")
            client = chromadb.PersistentClient(path=str(self.path), settings=settings)
        else:
            client = chromadb.EphemeralClient(settings=settings)
            # chroma shares one in-memory system per process: a private name keeps each store apart
            name = f"{name}-{uuid.uuid4().hex[:12]}"
        self._coll = client.get_or_create_collection(
            name,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={MODEL_KEY: self._wanted_model} if self._wanted_model else None,
            embedding_function=None,  # never chroma's default: it downloads a model
        )
        self._client = client
        self._check_space()
        where = f"chroma collection {name!r}" + (f" in {self.path}" if self.path is not None else "")
        stored = self._metadata().get(MODEL_KEY)
        self._model = check_model(stored, self._wanted_model, where)
        if self._wanted_model and not stored:
            self._set_metadata({MODEL_KEY: self._wanted_model})

    @property
    def embedding_model(self) -> str | None:
        self._collection  # noqa: B018 - the recorded model is known once connected
        return self._model

    @property
    def _dim(self) -> int | None:
        """The collection's dimension, looked up until known (a store opened empty may be filled later)."""
        if self._known_dim is None:
            self._known_dim = self._metadata().get(DIM_KEY) or self._peek_dim()
        return self._known_dim

    @property
    def dim(self) -> int | None:
        return self._dim

    def _check_space(self) -> None:
        config = self._collection.configuration_json or {}
        space = (config.get("hnsw") or config.get("spann") or {}).get("space", "cosine")
        if space != "cosine":
            name = self._collection.name
            raise ValueError(f"collection: {name!r} uses the {space!r} space; ChromaStore needs cosine")

    def _metadata(self) -> dict[str, Any]:
        return dict(self._collection.metadata or {})

    def _set_metadata(self, changes: dict[str, Any]) -> None:
        # modify() replaces the whole metadata, and refuses hnsw:* keys even unchanged
        kept = {key: value for key, value in self._metadata().items() if not key.startswith("hnsw:")}
        self._collection.modify(metadata={**kept, **changes})

    def _peek_dim(self) -> int | None:
        """The dimension of a collection filled before we recorded it (or by another tool)."""
        sample = self._collection.get(limit=1, include=["embeddings"])
        return len(sample["embeddings"][0]) if sample["ids"] else None

    def count(self) -> int:
        return self._collection.count()

    def upsert(self, items: Sequence[MemoryItem]) -> None:
        batch, matrix = check_batch(items, self._dim)
        if not batch:
            return
        if self._max_batch is None:  # asked once: over HTTP it is a request
            self._max_batch = self._client.get_max_batch_size()  # 5461 for the local client
        step = self._max_batch
        for start in range(0, len(batch), step):
            chunk = batch[start : start + step]
            self._collection.upsert(
                ids=[item.id for item in chunk],
                embeddings=matrix[start : start + step],
                metadatas=[flat_fields(item) for item in chunk],
            )
        if not self._metadata().get(DIM_KEY):
            self._set_metadata({DIM_KEY: matrix.shape[1]})
            self._known_dim = matrix.shape[1]

    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        wanted = list(dict.fromkeys(ids))  # chroma refuses duplicates and an empty list
        if not wanted:
            return []
        found = self._collection.get(ids=wanted, include=["metadatas", "embeddings"])
        by_id = {item.id: item for item in _items(found["metadatas"], found["embeddings"])}
        return [by_id[i] for i in ids if i in by_id]

    def delete(self, ids: Sequence[str]) -> None:
        wanted = list(dict.fromkeys(ids))
        if wanted:
            self._collection.delete(ids=wanted)

    def search(self, vector: np.ndarray, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """The ``k`` items nearest ``vector`` that pass ``filter``; score = cosine similarity, higher is better."""
        k = check_k(k)
        dim = self._dim
        if dim is None:
            return []
        query = check_vector(vector, dim, "vector")
        terms = filter_terms(filter) if filter is not None else []
        if _matches_nothing(terms):
            return []
        found = self._collection.query(
            query_embeddings=query[None, :],
            n_results=k,
            where=chroma_where(terms),
            include=["metadatas", "embeddings", "distances"],
        )
        items = _items(found["metadatas"][0], found["embeddings"][0])
        return sorted_hits([Hit(item, 1.0 - float(d)) for item, d in zip(items, found["distances"][0])], k)

    def items(self, filter: MemoryFilter | None = None) -> Iterator[MemoryItem]:
        terms = filter_terms(filter) if filter is not None else []
        if _matches_nothing(terms):
            return
        where = chroma_where(terms)
        for offset in range(0, self.count() + PAGE, PAGE):
            page = self._collection.get(where=where, limit=PAGE, offset=offset, include=["metadatas", "embeddings"])
            yield from _items(page["metadatas"], page["embeddings"])
            if len(page["ids"]) < PAGE:
                return

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None


def _items(metadatas: list[dict[str, Any]], embeddings: Any) -> list[MemoryItem]:
    return [from_flat(meta, np.asarray(vector, dtype=np.float32)) for meta, vector in zip(metadatas, embeddings)]


def _matches_nothing(terms: list[tuple[str, str, Any]]) -> bool:
    """An empty ``in`` list (e.g. ``tiers=set()``) matches nothing; chroma would refuse it."""
    return any(op == "in" and not value for _, op, value in terms)


def chroma_where(terms: list[tuple[str, str, Any]]) -> dict[str, Any] | None:
    """``codec.filter_terms`` as a chroma ``where`` clause (None when there is no condition).

    >>> chroma_where([("importance", "gte", 3), ("tags", "any_true", ["tag:a", "tag:b"])])
    {'$and': [{'importance': {'$gte': 3}}, {'$or': [{'tag:a': {'$eq': True}}, {'tag:b': {'$eq': True}}]}]}
    """
    clauses = [_clause(field, op, value) for field, op, value in terms]
    return _join("$and", clauses) if clauses else None


def _clause(field: str, op: str, value: Any) -> dict[str, Any]:
    if op == "any_true":  # tag keys exist only when true, so $eq True (never $ne False)
        return _join("$or", [{key: {"$eq": True}} for key in value])
    if op == "eq":
        return _equals(field, value)
    if op in ("in", "gte", "lt"):
        return {field: {f"${op}": value}}
    raise ValueError(f"op: unknown filter operation {op!r}; expected eq, in, gte, lt or any_true")


def _equals(field: str, value: Any) -> dict[str, Any]:
    """Equality as the reference filter has it: chroma keeps booleans apart from 0 and 1, Python does not."""
    if isinstance(value, (bool, int, float)) and not isinstance(value, str) and value in (0, 1):
        return _join("$or", [{field: {"$eq": bool(value)}}, {field: {"$eq": int(value)}}])
    return {field: {"$eq": value}}


def _join(op: str, clauses: list[dict[str, Any]]) -> dict[str, Any]:
    return clauses[0] if len(clauses) == 1 else {op: clauses}
