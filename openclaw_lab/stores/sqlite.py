"""A vector store whose record is an SQLite table: safe for many processes on one file.

SQLite (WAL, a busy timeout) serialises writers and never loses a committed write. Each process
searches an exact in-memory index (``ExactStore``) that it keeps in step with the file through a
change log: every write appends the ids it touched in the same transaction, and before each read
the index reloads the rows changed since it last looked, by any process. A process's own write,
when no other write came between, is applied to its index once committed (with the counts and
times as the file holds them), so it is not read back. Access counts are one atomic ``UPDATE … + 1``,
and a whole-item write never lowers a count another process raised.

>>> import numpy as np
>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> store = SQLiteStore()  # in memory; SQLiteStore("memory.sqlite") persists
>>> store.upsert([MemoryItem.new("hi", now=datetime(2023, 1, 1), id="a", embedding=[1.0, 0.0])])
>>> [(hit.item.id, round(hit.score, 3)) for hit in store.search(np.array([1.0, 0.0]), k=1)]
[('a', 1.0)]
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, MemoryTier, from_timestamp, to_timestamp
from openclaw_lab.stores.codec import check_model, check_vector, from_record, to_record
from openclaw_lab.stores.exact import ExactStore
from openclaw_lab.stores.database import Database

__all__ = ["SQLiteStore", "Prepared", "COLUMNS", "table_schema"]

COLUMNS = ("id", "session_id", "content", "tier", "importance", "created_at", "last_accessed",
           "access_count", "tags", "source", "source_ids", "metadata", "embedding")  # fmt: skip
SCHEMA_VERSION = 1


def table_schema(table: str) -> str:
    """The memories table, its change log and the store's settings (model, dimension)."""
    return f"""
CREATE TABLE IF NOT EXISTS {table} (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, content TEXT NOT NULL, tier TEXT NOT NULL,
    importance INTEGER NOT NULL, created_at REAL NOT NULL, last_accessed REAL NOT NULL,
    access_count INTEGER NOT NULL, tags TEXT NOT NULL, source TEXT NOT NULL, source_ids TEXT NOT NULL,
    metadata TEXT NOT NULL, embedding BLOB);
CREATE INDEX IF NOT EXISTS {table}_by_session ON {table} (session_id, created_at);
CREATE TABLE IF NOT EXISTS {table}_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS {table}_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def row_values(item: MemoryItem) -> tuple:
    record = to_record(item)
    blob = None if item.embedding is None else np.asarray(item.embedding, dtype=np.float32).tobytes()
    return tuple(
        json.dumps(record[c]) if c in ("tags", "source_ids", "metadata") else (blob if c == "embedding" else record[c])
        for c in COLUMNS
    )


class Prepared(NamedTuple):
    """Items checked for a write, and their rows (one per id: the last copy in the batch wins)."""

    items: list[MemoryItem]
    rows: list[tuple]


def row_item(row: Any) -> MemoryItem:
    record = {c: row[c] for c in COLUMNS if c != "embedding"}
    embedding = None if row["embedding"] is None else np.frombuffer(row["embedding"], dtype=np.float32)
    return from_record(record, embedding)


ROUND_TRIP = 2.0**32  # POSIX seconds below which a float keeps every microsecond: a time reads back as written
TIMES = (COLUMNS.index("created_at"), COLUMNS.index("last_accessed"))


def as_stored(item: MemoryItem, row: tuple, stored: tuple[float, float, int]) -> MemoryItem:
    """``item`` as reading back its ``row`` gives it, from what the file ``stored`` (created_at, last_accessed,
    access_count): a replace keeps the larger count and last access."""
    changes: dict[str, Any] = {}
    for name, column, value in zip(("created_at", "last_accessed"), TIMES, stored):
        if value != row[column] or abs(value) >= ROUND_TRIP:
            changes[name] = from_timestamp(value)
    if stored[2] != item.access_count:
        changes["access_count"] = stored[2]
    return item.replace(**changes) if changes else item


class SQLiteStore:
    """Items in an SQLite table (``path``, or in memory), searched through an exact index kept in step.

    ``tier``: if given, every item is stored as that tier (the episodic and semantic tiers use it).
    ``database``: share an open ``Database`` (one file, several tables) instead of opening ``path``.
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        embedding_model: str | None = None,
        table: str = "memories",
        tier: MemoryTier | None = None,
        database: Database | None = None,
    ) -> None:
        if not table.isidentifier():
            raise ValueError(f"table: {table!r} is not a plain SQL name")
        self.table, self.tier = table, tier
        self.db = database or Database(":memory:" if path is None else path, table_schema(table), SCHEMA_VERSION)
        if database is not None:
            self.db.executescript(table_schema(table))
        self.path = self.db.path
        self._index = ExactStore()
        self._seen: int | None = None  # the last change-log entry the index has read (None: not loaded yet)
        self._dim: int | None = None
        self.embedding_model = self._adopt_model(embedding_model)

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r}, table={self.table!r})"

    # settings
    def _setting(self, key: str) -> str | None:
        rows = self.db.query(f"SELECT value FROM {self.table}_settings WHERE key = ?", (key,))
        return rows[0][0] if rows else None

    def _adopt_model(self, wanted: str | None) -> str | None:
        stored = self._setting("embedding_model")
        check_model(stored, wanted, f"SQLite store {self.path}:{self.table}")
        if wanted and not stored:
            with self.db.transaction() as conn:
                conn.execute(f"INSERT OR IGNORE INTO {self.table}_settings VALUES ('embedding_model', ?)", (wanted,))
        return self._setting("embedding_model")

    @property
    def dim(self) -> int | None:
        if self._dim is None:  # set by the first embedded write (of any process), then never changed
            value = self._setting("dim")
            self._dim = int(value) if value is not None else None
        return self._dim

    # writes: one transaction each, logged for the other processes' indexes
    def upsert(self, items: Sequence[MemoryItem]) -> None:
        """Insert or replace items by id; a replaced item keeps the larger access count and last access."""
        self._write(items, replace=True)

    def insert(self, items: Sequence[MemoryItem]) -> None:
        """Insert new items; an id that is already stored is a ValueError and nothing is written."""
        self._write(items, replace=False)

    def _write(self, items: Sequence[MemoryItem], replace: bool) -> None:
        prepared = self.prepare(items)
        with self.db.transaction() as conn:
            self.write_rows(conn, prepared, replace)

    def prepare(self, items: Sequence[MemoryItem]) -> Prepared:
        """``items`` as rows, every embedding checked against the store's dimension before anything is written."""
        if not items:
            return Prepared([], [])
        items = [item.replace(tier=self.tier) if self.tier not in (None, item.tier) else item for item in items]
        dim = self.dim
        for item in items:
            if item.embedding is not None:
                dim = check_vector(item.embedding, dim, "embedding").shape[0]
            else:
                raise ValueError(f"embedding: item {item.id!r} has no embedding; this store searches by vector")
        last = list({item.id: item for item in items}.values())
        return Prepared(last, [row_values(item) for item in last])

    def write_rows(self, conn: sqlite3.Connection, prepared: Prepared, replace: bool) -> None:
        """Write prepared rows inside the caller's transaction ``conn`` (a tier writing several tables at once)."""
        rows = prepared.rows
        if not rows:
            return
        marks = ",".join("?" * len(COLUMNS))
        if replace:
            kept = ", ".join(f"{c} = excluded.{c}" for c in COLUMNS if c not in ("id", "access_count", "last_accessed"))
            sql = (f"INSERT INTO {self.table} VALUES ({marks}) ON CONFLICT(id) DO UPDATE SET {kept}, "
                   f"access_count = MAX(access_count, excluded.access_count), "
                   f"last_accessed = MAX(last_accessed, excluded.last_accessed)")  # fmt: skip
            conn.executemany(sql, rows)
        else:
            ids = [row[0] for row in rows]
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                taken = conn.execute(f"SELECT id FROM {self.table} WHERE id IN ({','.join('?' * len(chunk))})", chunk)
                if found := [r[0] for r in taken.fetchall()]:
                    raise ValueError(f"id: {found[:3]} already stored; update them, or add with replace=True")
            conn.executemany(f"INSERT INTO {self.table} VALUES ({marks})", rows)
        if self._dim is None:
            conn.execute(f"INSERT OR IGNORE INTO {self.table}_settings VALUES ('dim', ?)", (str(len(rows[0][-1]) // 4),))
        stored = {}  # the times and counts as the file now holds them (a replace keeps the larger count)
        for start in range(0, len(rows), 500):
            chunk = [row[0] for row in rows[start : start + 500]]
            stored.update((r[0], r[1:]) for r in conn.execute(
                f"SELECT id, created_at, last_accessed, access_count FROM {self.table} "
                f"WHERE id IN ({','.join('?' * len(chunk))})", chunk))  # fmt: skip
        written = [as_stored(item, row, stored[item.id]) for item, row in zip(prepared.items, rows)]
        self._log(conn, [row[0] for row in rows], lambda: self._index.upsert(written))

    def record_access(self, ids: Sequence[str], now: datetime) -> None:
        """Count one access of each id at ``now``: an atomic increment, never a write-back of a cached copy."""
        ids, at = list(ids), to_timestamp(now)

        def follow() -> None:
            counted: dict[str, MemoryItem] = {}
            for i in ids:  # one access per mention, as the UPDATEs count them
                if (item := counted.get(i)) is not None or (item := next(iter(self._index.get([i])), None)):
                    last = from_timestamp(max(to_timestamp(item.last_accessed), at))
                    counted[i] = item.replace(access_count=item.access_count + 1, last_accessed=last)
            self._index.upsert(list(counted.values()))

        with self.db.transaction() as conn:
            conn.executemany(f"UPDATE {self.table} SET access_count = access_count + 1, "
                             f"last_accessed = MAX(last_accessed, ?) WHERE id = ?", [(at, i) for i in ids])  # fmt: skip
            self._log(conn, ids, follow)

    def delete(self, ids: Sequence[str]) -> None:
        with self.db.transaction() as conn:
            self.delete_rows(conn, ids)

    def delete_rows(self, conn: sqlite3.Connection, ids: Sequence[str]) -> None:
        ids = list(ids)
        conn.executemany(f"DELETE FROM {self.table} WHERE id = ?", [(i,) for i in ids])
        self._log(conn, ids, lambda: self._index.delete(ids))

    def _log(self, conn: sqlite3.Connection, ids: Sequence[str], follow: Callable[[], None]) -> None:
        """Append ``ids`` to the change log; once committed, ``follow`` applies the write to this process's
        index if the index had read every earlier change (else the next read reloads them from the file)."""
        before = self._latest(conn)
        conn.executemany(f"INSERT INTO {self.table}_changes (id) VALUES (?)", [(i,) for i in ids])
        after = before + len(ids)  # the log only grows, one by one, and this transaction is its only writer

        def apply() -> None:
            if self._seen == before:
                follow()
                self._seen = after

        self.db.on_commit(apply)

    def _latest(self, conn: sqlite3.Connection | None = None) -> int:
        """The change log's last entry, read inside ``conn``'s transaction or on its own."""
        sql = f"SELECT COALESCE(MAX(seq), 0) FROM {self.table}_changes"
        return (conn.execute(sql).fetchone() if conn is not None else self.db.query(sql)[0])[0]

    # reads: from the file, or from the index after it caught up with the file
    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        found: dict[str, MemoryItem] = {}
        ids = list(ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            rows = self.db.query(f"SELECT * FROM {self.table} WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            found.update((row["id"], row_item(row)) for row in rows)
        return [found[i] for i in ids if i in found]

    def count(self) -> int:
        return self.db.query(f"SELECT COUNT(*) FROM {self.table}")[0][0]

    def items(self, filter: MemoryFilter | None = None) -> Iterator[MemoryItem]:
        """Stored items passing ``filter``, oldest first."""
        self._refresh()
        if self._index.count() == self.count():  # every stored item is embedded: the index holds them all
            yield from sorted(self._index.items(filter), key=lambda item: (item.created_at, item.id))
            return
        for row in self.db.query(f"SELECT * FROM {self.table} ORDER BY created_at, id"):
            item = row_item(row)
            if filter is None or filter.matches(item):
                yield item

    def search(self, vector: np.ndarray, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """The ``k`` most similar embedded items passing ``filter`` (cosine similarity, higher is better)."""
        self._refresh()
        return self._index.search(vector, k, filter)

    def _refresh(self) -> None:
        """Bring the index up to the file's state (one indexed query when nothing changed: searches pay no count)."""
        latest = self._latest()
        if self._seen is None:  # first read: load every row once, oldest first
            rows = self.db.query(f"SELECT * FROM {self.table} WHERE embedding IS NOT NULL ORDER BY created_at, id")
            self._index.upsert([row_item(row) for row in rows])
            self._seen = latest
        elif latest != self._seen:
            changed = [r[0] for r in self.db.query(f"SELECT DISTINCT id FROM {self.table}_changes WHERE seq > ? "
                                                   "AND seq <= ?", (self._seen, latest))]  # fmt: skip
            fresh = [item for item in self.get(changed) if item.embedding is not None]
            kept = {item.id for item in fresh}
            self._index.delete([i for i in changed if i not in kept])
            self._index.upsert(fresh)  # in place for ids it holds, so the index keeps its order
            self._seen = latest

    def close(self) -> None:
        self.db.close()
