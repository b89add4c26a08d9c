"""Episodic memory: sessions and their memories in one SQLite file, searchable by embedding.

SQLite is the record; an in-process ``ExactStore`` mirrors the vectors for search and is
rebuilt from the file when it is opened, so everything survives a process restart.

>>> import tempfile, os
>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> memory = EpisodicMemory(os.path.join(tempfile.mkdtemp(), "episodic.sqlite"))
>>> _ = memory.create_session("s1", user_id="ana", now=datetime(2023, 5, 8))
>>> memory.upsert([MemoryItem.new("I moved to Lisbon", now=datetime(2023, 5, 8), session_id="s1")])
>>> [item.content for item in memory.list_memories("s1")]
['I moved to Lisbon']
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from openclaw_lab.model import (
    Hit,
    MemoryFilter,
    MemoryItem,
    MemoryTier,
    validate_metadata,
    from_timestamp,
    to_timestamp,
)
from openclaw_lab.stores.codec import check_vector, from_record, to_record
from openclaw_lab.stores.exact import ExactStore
from openclaw_lab.tiers.sqlite import Database
from openclaw_lab.tiers.working import render_line

__all__ = ["EpisodicMemory", "SessionInfo"]

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}', active INTEGER NOT NULL DEFAULT 1);
CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (user_id, updated_at);
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL, content TEXT NOT NULL, tier TEXT NOT NULL,
    importance INTEGER NOT NULL, created_at REAL NOT NULL, last_accessed REAL NOT NULL,
    access_count INTEGER NOT NULL, tags TEXT NOT NULL, source TEXT NOT NULL, source_ids TEXT NOT NULL,
    metadata TEXT NOT NULL, embedding BLOB);
CREATE INDEX IF NOT EXISTS memories_by_session ON memories (session_id, created_at);
CREATE TABLE IF NOT EXISTS consolidation_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, report TEXT NOT NULL);
"""
COLUMNS = ("id", "session_id", "content", "tier", "importance", "created_at", "last_accessed",
           "access_count", "tags", "source", "source_ids", "metadata", "embedding")  # fmt: skip


@dataclass(frozen=True)
class SessionInfo:
    id: str
    user_id: str
    created_at: datetime
    updated_at: datetime
    metadata: Mapping[str, Any] = field(default_factory=dict)
    active: bool = True


def _row_values(item: MemoryItem) -> tuple:
    record = to_record(item)
    blob = None if item.embedding is None else np.asarray(item.embedding, dtype=np.float32).tobytes()
    return tuple(
        json.dumps(record[c]) if c in ("tags", "source_ids", "metadata") else (blob if c == "embedding" else record[c])
        for c in COLUMNS
    )


def _row_item(row: Any) -> MemoryItem:
    record = {c: row[c] for c in COLUMNS if c != "embedding"}
    embedding = None if row["embedding"] is None else np.frombuffer(row["embedding"], dtype=np.float32)
    return from_record(record, embedding)


class EpisodicMemory:
    """Per-session memories persisted in SQLite; a VectorStore for the items that carry embeddings."""

    def __init__(self, path: str | Path) -> None:
        self.db = Database(path, SCHEMA, SCHEMA_VERSION)
        self._index: ExactStore | None = None  # built on the first search
        self._dim: int | None = None

    # sessions
    def create_session(
        self, session_id: str, *, user_id: str, now: datetime, metadata: Mapping[str, Any] | None = None
    ) -> SessionInfo:
        """Create the session, or return it unchanged if it exists (for the same user)."""
        if not session_id or not user_id:
            raise ValueError(f"session_id/user_id: {session_id!r}, {user_id!r} must be non-empty")
        existing = self.get_session(session_id)
        if existing is not None:
            if existing.user_id != user_id:
                raise ValueError(f"session_id: {session_id!r} belongs to user {existing.user_id!r}, not {user_id!r}")
            return existing
        meta = json.dumps(validate_metadata(metadata))
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, 1)",
                (session_id, user_id, to_timestamp(now), to_timestamp(now), meta),
            )
        return self.get_session(session_id)  # type: ignore[return-value]

    def get_session(self, session_id: str) -> SessionInfo | None:
        rows = self.db.query("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return _session(rows[0]) if rows else None

    def user_sessions(self, user_id: str, *, limit: int | None = None, active_only: bool = False) -> list[SessionInfo]:
        """A user's sessions, most recently updated first."""
        sql = "SELECT * FROM sessions WHERE user_id = ?" + (" AND active = 1" if active_only else "")
        sql += " ORDER BY updated_at DESC, id" + (" LIMIT ?" if limit else "")
        return [_session(r) for r in self.db.query(sql, (user_id, limit) if limit else (user_id,))]

    def end_session(self, session_id: str, now: datetime) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE sessions SET active = 0, updated_at = ? WHERE id = ?", (to_timestamp(now), session_id))

    # memories: the VectorStore protocol
    def upsert(self, items: Sequence[MemoryItem]) -> None:
        items = [item.replace(tier=MemoryTier.EPISODIC) for item in items]
        embedded = [item.embedding for item in items if item.embedding is not None]
        dim = self._stored_dim() or (embedded[0].shape[0] if embedded else None)
        for vector in embedded:  # every item is checked before anything is written
            check_vector(vector, dim, "embedding")
        with self.db.transaction() as conn:
            conn.executemany(f"INSERT OR REPLACE INTO memories VALUES ({','.join('?' * len(COLUMNS))})",
                             [_row_values(item) for item in items])  # fmt: skip
            touched = {(item.session_id, to_timestamp(item.last_accessed)) for item in items if item.session_id}
            conn.executemany("UPDATE sessions SET updated_at = MAX(updated_at, ?) WHERE id = ?",
                             [(t, s) for s, t in touched])  # fmt: skip
        if embedded:
            self._dim = dim
        if self._index is not None:
            self._index.upsert([item for item in items if item.embedding is not None])

    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        found: dict[str, MemoryItem] = {}
        for start in range(0, len(ids), 500):
            chunk = list(ids[start : start + 500])
            rows = self.db.query(f"SELECT * FROM memories WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            found.update((row["id"], _row_item(row)) for row in rows)
        return [found[i] for i in ids if i in found]

    def delete(self, ids: Sequence[str]) -> None:
        with self.db.transaction() as conn:
            conn.executemany("DELETE FROM memories WHERE id = ?", [(i,) for i in ids])
        if self._index is not None:
            self._index.delete(list(ids))

    def count(self) -> int:
        return self.db.query("SELECT COUNT(*) FROM memories")[0][0]

    def items(self, filter: MemoryFilter | None = None) -> Iterator[MemoryItem]:
        """Stored items passing ``filter``, oldest first (from the search index when it holds them all)."""
        if self._index is not None and self._index.count() == self.count():
            yield from sorted(self._index.items(filter), key=lambda item: (item.created_at, item.id))
            return
        for row in self.db.query("SELECT * FROM memories ORDER BY created_at, id"):
            item = _row_item(row)
            if filter is None or filter.matches(item):
                yield item

    def search(self, vector: np.ndarray, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """Cosine similarity over this tier's embedded items (higher is better)."""
        if self._index is None:
            self._index = ExactStore()
            self._index.upsert([item for item in self.items() if item.embedding is not None])
        return self._index.search(vector, k, filter)

    # session views
    def list_memories(
        self, session_id: str, *, tier: MemoryTier | str | None = None, limit: int | None = None
    ) -> list[MemoryItem]:
        """A session's memories, newest first, optionally of one tier, at most ``limit``."""
        sql, params = "SELECT * FROM memories WHERE session_id = ?", [session_id]
        if tier is not None:
            sql, params = sql + " AND tier = ?", params + [MemoryTier.parse(tier).value]
        sql += " ORDER BY created_at DESC, rowid DESC"
        if limit is not None:
            if limit < 1:
                raise ValueError(f"limit: {limit!r} must be >= 1")
            sql, params = sql + " LIMIT ?", params + [limit]
        return [_row_item(row) for row in self.db.query(sql, params)]

    def context(self, session_id: str, *, limit: int = 20) -> str:
        """The session's last ``limit`` memories as dated lines, oldest to newest."""
        return "\n".join(render_line(item) for item in reversed(self.list_memories(session_id, limit=limit)))

    # the consolidation log (consolidation.ConsolidationLog)
    def append_consolidation(self, at: datetime, report: Mapping[str, Any]) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO consolidation_log (at, report) VALUES (?, ?)",
                         (to_timestamp(at), json.dumps(report)))  # fmt: skip

    def consolidation_log(self) -> list[dict[str, Any]]:
        return [json.loads(r["report"]) for r in self.db.query("SELECT report FROM consolidation_log ORDER BY seq")]

    def close(self) -> None:
        self.db.close()

    def _stored_dim(self) -> int | None:
        """The embedding dimension of this file, read once (then kept from our own writes)."""
        if self._dim is None:
            row = self.db.query("SELECT embedding FROM memories WHERE embedding IS NOT NULL LIMIT 1")
            self._dim = len(row[0][0]) // 4 if row else None
        return self._dim


def _session(row: Any) -> SessionInfo:
    return SessionInfo(
        row["id"], row["user_id"], from_timestamp(row["created_at"]), from_timestamp(row["updated_at"]),
        json.loads(row["metadata"]), bool(row["active"]),
    )  # fmt: skip
