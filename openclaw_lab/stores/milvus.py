"""Milvus behind the VectorStore protocol: milvus-lite on a local ``.db`` path, or a server URI.

Our string id is the VARCHAR primary key; tier, importance, created_at and session_id are typed
columns; the rest of ``codec.flat_fields`` (``tag:<name>`` booleans, ``meta:<key>`` values) rides in
Milvus's dynamic field, read as ``$meta["tag:x"]``: in milvus-lite such a flat key filters 10-20x
faster than ``json_contains`` on a list. Filters become one boolean expression with every string
escaped. Scores are cosine similarities, higher is better.

>>> import numpy as np, tempfile
>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> store = MilvusStore(tempfile.mkdtemp() + "/memories.db")
>>> store.upsert([MemoryItem.new("hi", now=datetime(2023, 1, 1), id="a", embedding=[1.0, 0.0])])
>>> [(hit.item.id, round(hit.score, 3)) for hit in store.search(np.array([1.0, 0.0]), k=1)]
[('a', 1.0)]
>>> store.close()
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k, sorted_hits
from openclaw_lab.stores.codec import check_batch, check_model, check_vector, filter_terms, flat_fields, from_flat

__all__ = ["MilvusStore", "milvus_expression", "milvus_string"]

MODEL_KEY = "openclaw.embedding_model"  # a collection property
MAX_VARCHAR = 65_535  # Milvus's largest VARCHAR, in bytes
MAX_TOPK = 16_384  # Milvus returns at most this many hits per search
BATCH = 2000
PAGE = 1000
OPERATORS = {"in": "in", "gte": ">=", "lt": "<"}


def _import_pymilvus():
    try:
        from pymilvus import DataType, MilvusClient
    except ImportError as error:
        raise ImportError(
            "MilvusStore needs pymilvus and milvus-lite: pip install 'openclaw-lab[milvus]' "
            "(or pip install pymilvus milvus-lite)"
        ) from error
    return MilvusClient, DataType


class MilvusStore:
    """A Milvus collection with a COSINE index; ``path`` (ending in ``.db``) is milvus-lite, ``uri`` a server."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        uri: str | None = None,
        token: str | None = None,
        collection: str = "memories",
        embedding_model: str | None = None,
    ) -> None:
        MilvusClient, self._types = _import_pymilvus()
        if (path is None) == (uri is None):
            raise ValueError(f"path/uri: give exactly one of a milvus-lite file or a server uri, got {path!r}, {uri!r}")
        if path is not None:
            path = Path(path)
            if path.suffix != ".db":
                raise ValueError(f"path: milvus-lite needs a name ending in .db, got {str(path)!r}")
            path.parent.mkdir(parents=True, exist_ok=True)
            self._client = MilvusClient(str(path))
        else:
            self._client = MilvusClient(uri=uri, token=token or "")
        self.path, self.collection, self.embedding_model = path, collection, embedding_model
        self._where = f"milvus collection {collection!r}" + (f" in {path}" if path is not None else "")
        self._dim: int | None = None
        if self._client.has_collection(collection):
            self._open_existing(embedding_model)

    def _open_existing(self, embedding_model: str | None) -> None:
        described = self._client.describe_collection(self.collection)
        vector_field = next((f for f in described["fields"] if f["name"] == "vector"), None)
        metric = self._client.describe_index(self.collection, "vector").get("metric_type") if vector_field else None
        if metric != "COSINE":
            raise ValueError(f"collection: {self._where} has no COSINE index on a 'vector' field (metric {metric!r})")
        self._dim = int(vector_field["params"]["dim"])
        stored = (described.get("properties") or {}).get(MODEL_KEY)
        self.embedding_model = check_model(stored, embedding_model, self._where)
        if embedding_model and not stored:
            self._client.alter_collection_properties(self.collection, properties={MODEL_KEY: embedding_model})
        self._client.load_collection(self.collection)  # a new process finds it released

    def _create(self, dim: int) -> None:
        """Create the collection on the first write, when the dimension is known."""
        types = self._types
        schema = self._client.create_schema(auto_id=False, enable_dynamic_field=True)
        schema.add_field("id", types.VARCHAR, is_primary=True, max_length=MAX_VARCHAR)
        schema.add_field("vector", types.FLOAT_VECTOR, dim=dim)
        schema.add_field("tier", types.VARCHAR, max_length=16)
        schema.add_field("importance", types.INT64)
        schema.add_field("created_at", types.DOUBLE)
        schema.add_field("session_id", types.VARCHAR, max_length=MAX_VARCHAR)
        index = self._client.prepare_index_params()
        index.add_index(field_name="vector", index_type="AUTOINDEX", metric_type="COSINE")
        self._client.create_collection(self.collection, schema=schema, index_params=index)
        if self.embedding_model:
            self._client.alter_collection_properties(self.collection, properties={MODEL_KEY: self.embedding_model})
        self._client.load_collection(self.collection)
        self._dim = dim

    @property
    def dim(self) -> int | None:
        return self._dim

    def count(self) -> int:
        if self._dim is None:
            return 0
        rows = self._client.query(self.collection, filter="", output_fields=["count(*)"])
        return int(rows[0]["count(*)"])

    def upsert(self, items: Sequence[MemoryItem]) -> None:
        batch, matrix = check_batch(items, self._dim)
        for item in batch:  # a too-long key would fail half-way through the batch
            for field in ("id", "session_id"):
                if len(getattr(item, field).encode()) > MAX_VARCHAR:
                    raise ValueError(f"{field}: item {item.id[:40]!r}... has a {field} over {MAX_VARCHAR} bytes")
        if not batch:
            return
        if self._dim is None:
            self._create(matrix.shape[1])
        for start in range(0, len(batch), BATCH):
            chunk = zip(batch[start : start + BATCH], matrix[start : start + BATCH])
            self._client.upsert(self.collection, [_row(item, vector) for item, vector in chunk])

    # get and delete write their own id expression: pymilvus's ids= path quotes ids without escaping them
    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        wanted = list(dict.fromkeys(ids))
        if not wanted or self._dim is None:
            return []
        by_id: dict[str, MemoryItem] = {}
        for start in range(0, len(wanted), PAGE):
            expression = f"id in {_literal(wanted[start : start + PAGE])}"
            rows = self._client.query(self.collection, filter=expression, output_fields=["*"])
            by_id.update((item.id, item) for item in map(_item, rows))
        return [by_id[i] for i in ids if i in by_id]

    def delete(self, ids: Sequence[str]) -> None:
        wanted = list(dict.fromkeys(ids))
        if not wanted or self._dim is None:
            return
        for start in range(0, len(wanted), PAGE):
            self._client.delete(self.collection, filter=f"id in {_literal(wanted[start : start + PAGE])}")

    def search(self, vector: np.ndarray, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """The ``k`` items nearest ``vector`` that pass ``filter``; score = cosine similarity, higher is better."""
        k = check_k(k)
        if self._dim is None:
            return []
        query = check_vector(vector, self._dim, "vector")
        limit = k if k <= MAX_TOPK else min(k, self.count())
        if limit > MAX_TOPK:
            raise ValueError(f"k: {k} is above Milvus's limit of {MAX_TOPK} hits per search")
        if limit == 0:
            return []
        found = self._client.search(
            self.collection,
            data=[query.tolist()],
            limit=limit,
            filter=milvus_expression(filter_terms(filter)) if filter is not None else "",
            output_fields=["*"],
            search_params={"metric_type": "COSINE"},
        )
        return sorted_hits([Hit(_item(hit["entity"]), float(hit["distance"])) for hit in found[0]], k)

    def items(self, filter: MemoryFilter | None = None) -> Iterator[MemoryItem]:
        """Pages in primary-key order, each after the last id seen.

        Our own cursor, because pymilvus's query_iterator quotes the last id without escaping it.
        """
        if self._dim is None:
            return
        condition = milvus_expression(filter_terms(filter)) if filter is not None else ""
        last: str | None = None
        while True:
            after = f"id > {milvus_string(last)}" if last is not None else ""
            expression = " and ".join(f"({part})" for part in (condition, after) if part)
            # iterator="True" asks Milvus for primary-key order, which the cursor relies on
            page = self._client.query(
                self.collection, filter=expression, limit=PAGE, output_fields=["*"], iterator="True"
            )
            yield from map(_item, page)
            if len(page) < PAGE:
                return
            last = page[-1]["id"]

    def flush(self) -> None:
        """Seal the rows written so far into an indexed segment.

        Writes are durable without it (milvus-lite keeps a write-ahead log), but milvus-lite
        searches unflushed rows by brute force in Python: flush after a bulk load.
        """
        if self._dim is not None:
            self._client.flush(self.collection)

    def close(self) -> None:
        """Flush, disconnect and (milvus-lite) stop the local server, so that another process can open the file."""
        self.flush()
        self._client.close()
        if self.path is not None:
            from milvus_lite.server_manager import server_manager_instance

            server_manager_instance.release_server(str(self.path))


def _row(item: MemoryItem, vector: np.ndarray) -> dict[str, Any]:
    return {**flat_fields(item), "vector": vector.tolist()}


def _item(entity: dict[str, Any]) -> MemoryItem:
    flat = {key: value for key, value in entity.items() if key != "vector"}
    return from_flat(flat, np.asarray(entity["vector"], dtype=np.float32))


def milvus_string(text: str) -> str:
    """``text`` as a double-quoted Milvus string literal (backslash, quote and line breaks escaped).

    >>> print(milvus_string('say "hi"\\n'))
    "say \\"hi\\"\\n"
    """
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return milvus_string(value)
    return "[" + ", ".join(_literal(v) for v in value) + "]"


def _dynamic(key: str) -> str:
    return f"$meta[{milvus_string(key)}]"


def _equals(key: str, value: Any) -> str:
    """Equality as the reference filter has it (``True == 1``), whatever the server's typing of JSON."""
    if isinstance(value, (bool, int, float)) and value in (0, 1):
        return f"{key} == {_literal(bool(value))} or {key} == {int(value)}"
    return f"{key} == {_literal(value)}"


def milvus_expression(terms: list[tuple[str, str, Any]]) -> str:
    """``codec.filter_terms`` as one Milvus boolean expression ("" when there is no condition).

    >>> print(milvus_expression([("importance", "gte", 3), ("tags", "any_true", ["tag:a", "tag:b"])]))
    (importance >= 3) and ($meta["tag:a"] == true or $meta["tag:b"] == true)
    """
    clauses = []
    for field, op, value in terms:
        if op == "any_true":  # tag keys exist only when true
            clauses.append(" or ".join(f"{_dynamic(key)} == true" for key in value))
        elif op == "eq" and ":" in field:  # tag:<name> and meta:<key> live in the dynamic field
            clauses.append(_equals(_dynamic(field), value))
        elif op in OPERATORS:
            clauses.append(f"{field} {OPERATORS[op]} {_literal(value)}")
        else:
            raise ValueError(f"op: unknown filter operation {op!r} on {field!r}")
    return " and ".join(f"({clause})" for clause in clauses)
