"""Exact cosine search over a numpy matrix: the reference for every store, and the fast default.

>>> import numpy as np
>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> store = ExactStore()
>>> store.upsert([MemoryItem.new("hi", now=datetime(2023, 1, 1), id="a", embedding=[1.0, 0.0])])
>>> [(hit.item.id, round(hit.score, 3)) for hit in store.search(np.array([1.0, 0.0]), k=1)]
[('a', 1.0)]
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, check_k, sorted_hits, to_timestamp
from openclaw_lab.stores.codec import check_vector, from_record, normalise, numeric_mask, to_record

__all__ = ["ExactStore", "top_k_indices", "atomic_write"]

STORE_FILE = "exact_store.npz"
PENDING_ROWS = 50_000  # rows added before they join the matrix (one copy of it per this many rows)


def top_k_indices(scores: np.ndarray, k: int, ids: Sequence[str] | None = None) -> np.ndarray:
    """Indices of the ``k`` largest scores, best first (argpartition, then a sort of k).

    With ``ids`` (each index's memory id), equal scores at the cut are kept by id, so one set of scores
    gives one top k on every machine (argpartition keeps an arbitrary one of the tied).

    >>> top_k_indices(np.array([0.5, 0.9, 0.5, 0.5]), 2, ids=["c", "x", "a", "b"]).tolist()
    [1, 2]
    """
    if k >= scores.shape[0]:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, k - 1)[:k]
    if ids is not None:
        kth = scores[part].min()
        above, tied = np.flatnonzero(scores > kth), np.flatnonzero(scores == kth)
        if tied.size > k - above.size:  # a tie at the cut: the smallest ids stay in
            part = np.concatenate([above, np.array(sorted(tied, key=ids.__getitem__)[: k - above.size], dtype=np.int64)])
    return part[np.argsort(-scores[part], kind="stable")]


class ExactStore:
    """Items in memory with a row-normalised matrix; ``path`` (a folder) makes it persistent.

    With a path, every write rewrites the folder atomically (fine for thousands of items; for a
    large replay keep it in memory and call ``save``).
    """

    def __init__(self, path: str | Path | None = None, *, embedding_model: str | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.embedding_model = embedding_model
        self._items: dict[str, MemoryItem] = {}
        self._row: dict[str, int] = {}
        self._ids: list[str] = []
        self._matrix = np.zeros((0, 0), dtype=np.float32)
        self._importance = np.zeros(0, dtype=np.int8)
        self._created = np.zeros(0, dtype=np.float64)
        self._pending: list[tuple[np.ndarray, int, float]] = []
        self._buffers: dict[str, np.ndarray] = {}  # the arrays above are views of these (see ``_append``)
        self._tag_rows: dict[str, np.ndarray] | None = None  # tag -> rows holding it; rebuilt after a write
        if self.path is not None and (self.path / STORE_FILE).exists():
            self._load()

    @property
    def dim(self) -> int | None:
        return self._matrix.shape[1] if self._ids else None  # set on the first insert

    def count(self) -> int:
        return len(self._ids)

    def upsert(self, items: Sequence[MemoryItem]) -> None:
        self._insert(list(items))
        self._autosave()

    def _insert(self, items: list[MemoryItem]) -> None:
        items = list({item.id: item for item in items}.values())  # the last copy of an id wins
        if not items:
            return
        dim = self.dim or (len(items[0].embedding) if items[0].embedding is not None else None)
        moved = []  # items with a vector this store has not normalised yet (an access update keeps its vector)
        for item in items:  # validate everything before changing anything
            if item.embedding is None:
                raise ValueError(f"embedding: item {item.id!r} has no embedding")
            if (known := self._items.get(item.id)) is None or known.embedding is not item.embedding:
                check_vector(item.embedding, dim, "embedding")
                moved.append(item)
        if not self._ids:
            self._matrix = np.zeros((0, dim), dtype=np.float32)
        vectors = {}
        if moved:  # normalised in one go
            matrix = moved[0].embedding[None, :] if len(moved) == 1 else np.vstack([item.embedding for item in moved])
            vectors = dict(zip([item.id for item in moved], normalise(matrix)))
        for item in items:
            vector = vectors.get(item.id)
            if item.id in self._row:
                r = self._row[item.id]
                if r >= len(self._matrix):  # its row is still pending: append the pending rows first
                    self._flush()
                if vector is not None:
                    self._matrix[r] = vector
                self._importance[r], self._created[r] = item.importance, to_timestamp(item.created_at)
            else:
                self._row[item.id] = len(self._ids)
                self._ids.append(item.id)
                self._pending.append((vector, int(item.importance), to_timestamp(item.created_at)))
                if len(self._pending) >= PENDING_ROWS:
                    self._flush()
            self._items[item.id] = item
        self._tag_rows = None

    def _flush(self) -> None:
        """Append pending rows in one go: adding items batch by batch stays linear (a copy of the matrix per
        ``PENDING_ROWS`` rows, not per batch), and the rows waiting as separate vectors stay few."""
        if not self._pending:
            return
        vectors, importance, created = zip(*self._pending)
        self._append("_matrix", np.vstack(vectors))
        self._append("_importance", np.array(importance, dtype=np.int8))
        self._append("_created", np.array(created, dtype=np.float64))
        self._pending = []

    def _append(self, name: str, rows: np.ndarray) -> None:
        """Append ``rows`` to the array attribute ``name``, kept as a view of a buffer that grows by a quarter
        when full: a replay that adds one item between searches copies the matrix now and then, not each time."""
        view, buffer = getattr(self, name), self._buffers.get(name)
        n, total = len(view), len(view) + len(rows)
        if buffer is None or view.base is not buffer or len(buffer) < total:
            buffer = np.empty((max(total, n + n // 4), *view.shape[1:]), dtype=view.dtype)
            buffer[:n] = view
            self._buffers[name] = buffer
        buffer[n:total] = rows
        setattr(self, name, buffer[:total])

    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        return [self._items[i] for i in ids if i in self._items]

    def delete(self, ids: Sequence[str]) -> None:
        gone = {i for i in ids if i in self._row}
        if not gone:
            return
        self._flush()
        keep = np.array([i not in gone for i in self._ids], dtype=bool)
        self._ids = [i for i in self._ids if i not in gone]
        self._row = {item_id: r for r, item_id in enumerate(self._ids)}
        self._matrix, self._importance, self._created = self._matrix[keep], self._importance[keep], self._created[keep]
        for item_id in gone:
            del self._items[item_id]
        self._tag_rows = None
        self._autosave()

    def items(self, filter: MemoryFilter | None = None) -> Iterator[MemoryItem]:
        rows = np.flatnonzero(self._mask(filter))
        return (self._items[self._ids[r]] for r in rows)

    def search(self, vector: np.ndarray, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        k = check_k(k)
        if not self._ids:
            return []
        self._flush()
        query = normalise(check_vector(vector, self.dim, "vector")[None, :])[0]
        if filter is None or filter.is_empty:  # every row: no mask to build
            scores = self._matrix @ query
            best = top_k_indices(scores, k, self._ids)
            rows = best
        else:
            mask = self._mask(filter)
            candidates = np.flatnonzero(mask)
            if candidates.size == 0:
                return []
            if candidates.size * 4 > mask.size:  # scoring every row beats copying most of the matrix
                scores = (self._matrix @ query)[candidates]
            else:
                scores = self._matrix[candidates] @ query
            best = top_k_indices(scores, k, _Picked(self._ids, candidates))
            rows = candidates[best]
        return sorted_hits([Hit(self._items[self._ids[r]], float(scores[j])) for j, r in zip(best, rows)], k)

    def _mask(self, filter: MemoryFilter | None) -> np.ndarray:
        """Rows passing ``filter``: numeric conditions vectorised, the rest item by item."""
        self._flush()
        mask = numeric_mask(filter, self._importance, self._created)
        if filter is None or filter.is_empty:
            return mask
        if filter.tags_any:
            mask &= self._tag_mask(filter.tags_any, np.any)
        if filter.tags_all:
            mask &= self._tag_mask(filter.tags_all, np.all)
        rest = dataclasses.replace(filter, min_importance=None, since=None, until=None, tags_any=(), tags_all=())
        if rest.is_empty:  # nothing left to check item by item
            return mask
        for r in np.flatnonzero(mask):
            mask[r] = rest.matches(self._items[self._ids[r]])
        return mask

    def _tag_mask(self, tags: tuple[str, ...], combine) -> np.ndarray:
        """Rows holding any (``np.any``) or all (``np.all``) of ``tags``, from an index built on demand."""
        if self._tag_rows is None:
            rows: dict[str, list[int]] = {}
            for r, item_id in enumerate(self._ids):
                for tag in self._items[item_id].tags:
                    rows.setdefault(tag, []).append(r)
            self._tag_rows = {tag: np.array(found, dtype=np.int64) for tag, found in rows.items()}
        held = np.zeros((len(tags), len(self._ids)), dtype=bool)
        for t, tag in enumerate(tags):
            held[t, self._tag_rows.get(tag, [])] = True
        return combine(held, axis=0)

    # persistence: one .npz (vectors + records as JSON), written to a temp file and renamed
    def save(self, path: str | Path | None = None) -> None:
        folder = Path(path) if path is not None else self.path
        if folder is None:
            raise ValueError("path: this ExactStore was opened in memory; give a folder to save to")
        folder.mkdir(parents=True, exist_ok=True)
        self._flush()
        header = {"embedding_model": self.embedding_model, "records": [to_record(self._items[i]) for i in self._ids]}
        payload = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
        atomic_write(folder / STORE_FILE, lambda f: np.savez(f, vectors=self._matrix, header=payload))

    def _autosave(self) -> None:
        if self.path is not None:
            self.save()

    def _load(self) -> None:
        with np.load(self.path / STORE_FILE) as data:
            matrix, header = data["vectors"], json.loads(data["header"].tobytes())
        stored_model = header.get("embedding_model")
        if self.embedding_model and stored_model and stored_model != self.embedding_model:
            raise ValueError(
                f"embedding_model: {self.path} holds vectors of {stored_model!r}, not {self.embedding_model!r}"
            )
        self.embedding_model = self.embedding_model or stored_model
        self._insert([from_record(rec, matrix[r]) for r, rec in enumerate(header["records"])])


class _Picked:
    """The ids of a subset of rows, by position in the subset (read only at a tie, so never built as a list)."""

    def __init__(self, ids: list[str], rows: np.ndarray) -> None:
        self._ids, self._rows = ids, rows

    def __getitem__(self, j: int) -> str:
        return self._ids[self._rows[j]]


def atomic_write(target: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
