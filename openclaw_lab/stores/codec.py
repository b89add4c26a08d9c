"""One way to turn a MemoryItem into flat, JSON-able fields and back, shared by every store.

Times become POSIX seconds (numbers, so range filters work); tags become ``tag:<name>`` booleans and
metadata ``meta:<key>`` scalars, so that every backend can filter on them with plain equality.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from openclaw_lab.model import MemoryFilter, MemoryItem, from_timestamp, to_timestamp

__all__ = [
    "to_record",
    "from_record",
    "flat_fields",
    "from_flat",
    "filter_terms",
    "numeric_mask",
    "metadata_pair",
    "check_vector",
    "check_batch",
    "check_model",
    "normalise",
]


def to_record(item: MemoryItem) -> dict[str, Any]:
    """JSON-able fields of ``item`` without its embedding."""
    return {
        "id": item.id,
        "content": item.content,
        "tier": item.tier.value,
        "importance": int(item.importance),
        "created_at": to_timestamp(item.created_at),
        "last_accessed": to_timestamp(item.last_accessed),
        "access_count": item.access_count,
        "tags": list(item.tags),
        "source": item.source,
        "session_id": item.session_id,
        "source_ids": list(item.source_ids),
        "metadata": dict(item.metadata),
    }


def from_record(record: Mapping[str, Any], embedding: Any = None) -> MemoryItem:
    fields = dict(record)
    for key in ("tags", "source_ids", "metadata"):
        if isinstance(fields.get(key), str):  # stores that keep lists as JSON text
            fields[key] = json.loads(fields[key])
    fields["created_at"] = from_timestamp(float(fields["created_at"]))
    fields["last_accessed"] = from_timestamp(float(fields["last_accessed"]))
    return MemoryItem(**fields, embedding=embedding)


def flat_fields(item: MemoryItem) -> dict[str, str | int | float | bool]:
    """Scalar-only payload: the record with lists as JSON, plus filterable tag and metadata keys."""
    record = to_record(item)
    flat: dict[str, str | int | float | bool] = {
        key: json.dumps(value) if isinstance(value, (list, dict)) else value for key, value in record.items()
    }
    flat.update({f"tag:{tag}": True for tag in item.tags})
    flat.update({f"meta:{key}": value for key, value in item.metadata.items()})
    return flat


def from_flat(flat: Mapping[str, Any], embedding: Any = None) -> MemoryItem:
    """The item back from ``flat_fields`` output (the ``tag:``/``meta:`` keys are only for filters)."""
    return from_record({key: value for key, value in flat.items() if ":" not in key}, embedding)


def filter_terms(filter: MemoryFilter) -> list[tuple[str, str, Any]]:
    """The filter as (field, op, value) terms joined by AND; op is eq, gte, lt, in or any_true."""
    terms: list[tuple[str, str, Any]] = []
    if filter.tiers is not None:
        terms.append(("tier", "in", sorted(t.value for t in filter.tiers)))
    if filter.min_importance is not None:
        terms.append(("importance", "gte", int(filter.min_importance)))
    if filter.tags_any:
        terms.append(("tags", "any_true", [f"tag:{tag}" for tag in filter.tags_any]))
    terms += [(f"tag:{tag}", "eq", True) for tag in filter.tags_all]
    if filter.since is not None:
        terms.append(("created_at", "gte", to_timestamp(filter.since)))
    if filter.until is not None:
        terms.append(("created_at", "lt", to_timestamp(filter.until)))
    if filter.session_ids:
        terms.append(("session_id", "in", list(filter.session_ids)))
    terms += [(f"meta:{key}", "eq", value) for key, value in filter.where.items()]
    return terms


def metadata_pair(key: str, value: str | int | float | bool) -> str:
    """One metadata entry as a string that two entries share exactly when ``==`` holds.

    For stores that filter metadata as a list of strings (no key quoting needed): numbers and
    booleans are written by value, since the reference filter has ``True == 1 == 1.0``.

    >>> metadata_pair("turn", 1) == metadata_pair("turn", 1.0) == metadata_pair("turn", True)
    True
    """
    if isinstance(value, (bool, int)) or (isinstance(value, float) and value.is_integer()):
        canonical = f"n:{int(value)}"
    elif isinstance(value, float):
        canonical = f"n:{value!r}"
    else:
        canonical = f"s:{value}"
    return json.dumps([key, canonical], ensure_ascii=False)


def check_vector(vector: Any, dim: int | None, field_name: str = "embedding") -> np.ndarray:
    """A finite float32 vector of the expected dimension, or a ValueError naming both sizes."""
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim != 1:
        raise ValueError(f"{field_name}: expected a 1-d vector, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{field_name}: contains NaN or infinite values")
    if dim is not None and array.shape[0] != dim:
        raise ValueError(f"{field_name}: dimension {array.shape[0]} does not match the store's {dim}")
    return array


def check_batch(items: Sequence[MemoryItem], dim: int | None) -> tuple[list[MemoryItem], np.ndarray]:
    """The batch deduplicated by id (the last copy wins) and its (n, dim) float32 matrix.

    Every item is checked before anything is written, so that bad input changes nothing.
    """
    batch = list({item.id: item for item in items}.values())
    for item in batch:
        if item.embedding is None:
            raise ValueError(f"embedding: item {item.id!r} has no embedding")
        dim = dim or len(item.embedding)
        check_vector(item.embedding, dim, "embedding")
    if not batch:
        return [], np.zeros((0, dim or 0), dtype=np.float32)
    return batch, np.vstack([item.embedding for item in batch]).astype(np.float32, copy=False)


def check_model(stored: str | None, wanted: str | None, where: str) -> str | None:
    """The embedding model to use; a ValueError naming both when ``where`` holds another model's vectors."""
    if stored and wanted and stored != wanted:
        raise ValueError(f"embedding_model: {where} holds vectors of {stored!r}, not {wanted!r}")
    return wanted or stored


def normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=-1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def numeric_mask(filter: MemoryFilter | None, importance: np.ndarray, created_at: np.ndarray) -> np.ndarray:
    """Rows passing ``filter``'s importance and time bounds, from per-row arrays (``created_at`` in POSIX s)."""
    mask = np.ones(importance.shape[0], dtype=bool)
    if filter is None:
        return mask
    if filter.min_importance is not None:
        mask &= importance >= int(filter.min_importance)
    if filter.since is not None:
        mask &= created_at >= to_timestamp(filter.since)
    if filter.until is not None:
        mask &= created_at < to_timestamp(filter.until)
    return mask
