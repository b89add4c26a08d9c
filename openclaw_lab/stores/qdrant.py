"""Qdrant behind the VectorStore protocol: qdrant-client's local mode on a folder, or a server URL.

Qdrant wants UUIDs or integers as point ids, so any string id maps to a uuid5 and the original id
stays in the payload. The collection is created only when missing (never recreated: that would
delete every point). Scores are cosine similarities, higher is better.

>>> import numpy as np
>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> store = QdrantStore()  # in memory; QdrantStore("folder") persists
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

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k, sorted_hits
from openclaw_lab.stores.codec import (
    check_batch,
    check_model,
    check_vector,
    filter_terms,
    from_record,
    metadata_pair,
    to_record,
)

__all__ = ["QdrantStore", "point_id"]

ID_NAMESPACE = uuid.UUID("5b0e3a52-7c1d-4f43-9a51-6f70656e636c")  # fixed: the same id maps to the same point
MODEL_KEY = "embedding_model"
BATCH = 512
PAGE = 1000
INDEXED_FIELDS = {  # server-side payload indexes (local mode ignores them)
    "tier": "KEYWORD",
    "tags": "KEYWORD",
    "session_id": "KEYWORD",
    "meta_pairs": "KEYWORD",
    "importance": "INTEGER",
    "created_at": "FLOAT",
}


def _import_qdrant():
    try:
        from qdrant_client import QdrantClient, models
    except ImportError as error:
        raise ImportError(
            "QdrantStore needs qdrant-client: pip install 'openclaw-lab[qdrant]' (or pip install qdrant-client)"
        ) from error
    return QdrantClient, models


def point_id(item_id: str) -> str:
    """The Qdrant point id (a uuid5) of one of our string ids."""
    return str(uuid.uuid5(ID_NAMESPACE, item_id))


class QdrantStore:
    """A Qdrant collection with cosine distance; ``path`` is local mode on disk, ``url`` a server, neither in memory."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        url: str | None = None,
        api_key: str | None = None,
        collection: str = "memories",
        embedding_model: str | None = None,
    ) -> None:
        QdrantClient, self._models = _import_qdrant()
        if path is not None and url is not None:
            raise ValueError(f"path/url: give a folder or a server, not both ({path!r}, {url!r})")
        if url is not None:
            self._client = QdrantClient(url=url, api_key=api_key)
        elif path is not None:
            self._client = QdrantClient(path=str(path))
        else:
            self._client = QdrantClient(location=":memory:")
        self.path = Path(path) if path is not None else None
        self.collection, self._local = collection, url is None
        self._where = f"qdrant collection {collection!r}" + (f" in {path}" if path is not None else "")
        self._dim: int | None = None
        self.embedding_model = embedding_model
        if self._client.collection_exists(collection):
            self._open_existing(embedding_model)

    def _open_existing(self, embedding_model: str | None) -> None:
        config = self._client.get_collection(self.collection).config
        vectors = config.params.vectors
        if not isinstance(vectors, self._models.VectorParams) or vectors.distance != self._models.Distance.COSINE:
            raise ValueError(f"collection: {self._where} is not a single unnamed vector with cosine distance")
        self._dim = vectors.size
        stored = (config.metadata or {}).get(MODEL_KEY)
        self.embedding_model = check_model(stored, embedding_model, self._where)
        if embedding_model and not stored:
            self._client.update_collection(self.collection, metadata={MODEL_KEY: embedding_model})

    def _create(self, dim: int) -> None:
        """Create the collection on the first write, when the dimension is known."""
        models = self._models
        self._client.create_collection(
            self.collection,
            vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE),
            metadata={MODEL_KEY: self.embedding_model} if self.embedding_model else None,
        )
        if not self._local:
            for field, schema in INDEXED_FIELDS.items():
                self._client.create_payload_index(self.collection, field, field_schema=models.PayloadSchemaType[schema])
        self._dim = dim

    @property
    def dim(self) -> int | None:
        return self._dim

    def count(self) -> int:
        if self._dim is None:
            return 0
        return self._client.count(self.collection, exact=True).count

    def upsert(self, items: Sequence[MemoryItem]) -> None:
        batch, matrix = check_batch(items, self._dim)
        if not batch:
            return
        if self._dim is None:
            self._create(matrix.shape[1])
        for start in range(0, len(batch), BATCH):
            chunk = batch[start : start + BATCH]
            points = [
                self._models.PointStruct(id=point_id(item.id), vector=vector.tolist(), payload=_payload(item))
                for item, vector in zip(chunk, matrix[start : start + BATCH])
            ]
            self._client.upsert(self.collection, points=points, wait=True)

    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        wanted = list(dict.fromkeys(ids))
        if not wanted or self._dim is None:
            return []
        records = self._client.retrieve(self.collection, ids=[point_id(i) for i in wanted], with_vectors=True)
        by_id = {item.id: item for item in map(_item, records)}
        return [by_id[i] for i in ids if i in by_id]

    def delete(self, ids: Sequence[str]) -> None:
        wanted = list(dict.fromkeys(ids))
        if wanted and self._dim is not None:
            selector = self._models.PointIdsList(points=[point_id(i) for i in wanted])
            self._client.delete(self.collection, points_selector=selector, wait=True)

    def search(self, vector: np.ndarray, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """The ``k`` items nearest ``vector`` that pass ``filter``; score = cosine similarity, higher is better."""
        k = check_k(k)
        if self._dim is None:
            return []
        query = check_vector(vector, self._dim, "vector")
        if _matches_nothing(filter):
            return []
        found = self._client.query_points(
            self.collection,
            query=query.tolist(),
            limit=k,
            query_filter=self._filter(filter),
            with_payload=True,
            with_vectors=True,
        )
        return sorted_hits([Hit(_item(point), float(point.score)) for point in found.points], k)

    def items(self, filter: MemoryFilter | None = None) -> Iterator[MemoryItem]:
        if self._dim is None or _matches_nothing(filter):
            return
        offset, native = None, self._filter(filter)
        while True:
            records, offset = self._client.scroll(
                self.collection, scroll_filter=native, limit=PAGE, offset=offset, with_vectors=True
            )
            yield from map(_item, records)
            if offset is None:
                return

    def _filter(self, filter: MemoryFilter | None) -> Any:
        """``codec.filter_terms`` as a Qdrant Filter; tags and metadata match inside lists, so no key needs quoting."""
        if filter is None or filter.is_empty:
            return None
        models = self._models
        must = []
        for field, op, value in filter_terms(filter):
            kind, _, name = field.partition(":")
            if op == "any_true":  # ("tags", any_true, ["tag:a", ...])
                tags = [key.partition(":")[2] for key in value]
                must.append(models.FieldCondition(key="tags", match=models.MatchAny(any=tags)))
            elif kind == "tag":
                must.append(models.FieldCondition(key="tags", match=models.MatchValue(value=name)))
            elif kind == "meta":
                pair = metadata_pair(name, value)
                must.append(models.FieldCondition(key="meta_pairs", match=models.MatchValue(value=pair)))
            elif op == "in":
                must.append(models.FieldCondition(key=field, match=models.MatchAny(any=list(value))))
            elif op in ("gte", "lt"):
                must.append(models.FieldCondition(key=field, range=models.Range(**{op: value})))
            else:
                raise ValueError(f"op: unknown filter operation {op!r} on {field!r}")
        return models.Filter(must=must)

    def close(self) -> None:
        self._client.close()


def _matches_nothing(filter: MemoryFilter | None) -> bool:
    """``tiers=set()`` matches nothing; a server would refuse the empty MatchAny."""
    return filter is not None and filter.tiers is not None and not filter.tiers


def _payload(item: MemoryItem) -> dict[str, Any]:
    return {**to_record(item), "meta_pairs": [metadata_pair(key, value) for key, value in item.metadata.items()]}


def _item(point: Any) -> MemoryItem:
    record = {key: value for key, value in point.payload.items() if key != "meta_pairs"}
    return from_record(record, np.asarray(point.vector, dtype=np.float32))
