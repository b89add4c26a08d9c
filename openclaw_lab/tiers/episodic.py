"""Episodic memory: sessions and their memories in one SQLite file, searchable by embedding.

SQLite is the record (an ``SQLiteStore`` table); each process searches an exact index kept in step
with the file, so everything survives a restart and every process sees the others' committed
writes. The file also holds the semantic outbox: long-term copies written in the same transaction
as their episodic rows, then applied to the semantic store (see ``MemoryManager.write``).

>>> import tempfile, os
>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> memory = EpisodicMemory(os.path.join(tempfile.mkdtemp(), "episodic.sqlite"))
>>> _ = memory.create_session("s1", user_id="ana", now=datetime(2023, 5, 8))
>>> memory.upsert([MemoryItem.new("I moved to Lisbon", now=datetime(2023, 5, 8), session_id="s1", embedding=[1.0, 0.0])])
>>> [item.content for item in memory.list_memories("s1")]
['I moved to Lisbon']
"""

from __future__ import annotations

import json
import sqlite3
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
from openclaw_lab.stores.sqlite import SQLiteStore, row_item, row_values, table_schema
from openclaw_lab.stores.database import Database
from openclaw_lab.tiers.working import render_line

__all__ = ["EpisodicMemory", "SessionInfo"]

SCHEMA_VERSION = 1
SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, user_id TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}', active INTEGER NOT NULL DEFAULT 1);
CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions (user_id, updated_at);
CREATE TABLE IF NOT EXISTS consolidation_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, report TEXT NOT NULL);
""" + table_schema("memories") + table_schema("pending_semantic")


@dataclass(frozen=True)
class SessionInfo:
    id: str
    user_id: str
    created_at: datetime
    updated_at: datetime
    metadata: Mapping[str, Any] = field(default_factory=dict)
    active: bool = True


class EpisodicMemory:
    """Per-session memories persisted in SQLite; a VectorStore for the items that carry embeddings."""

    def __init__(self, path: str | Path, *, embedding_model: str | None = None) -> None:
        self.db = Database(path, SCHEMA, SCHEMA_VERSION)
        self.memories = SQLiteStore(table="memories", tier=MemoryTier.EPISODIC, database=self.db,
                                    embedding_model=embedding_model)  # fmt: skip
        self._outbox = SQLiteStore(table="pending_semantic", tier=MemoryTier.SEMANTIC, database=self.db)
        self._owners: dict[str, str] = {}  # session id -> its user, for the sessions this handle has seen

    @property
    def embedding_model(self) -> str | None:
        return self.memories.embedding_model

    # sessions
    def create_session(
        self, session_id: str, *, user_id: str, now: datetime, metadata: Mapping[str, Any] | None = None
    ) -> SessionInfo:
        """Create the session, or return it unchanged if it exists (for the same user)."""
        if not session_id or not user_id:
            raise ValueError(f"session_id/user_id: {session_id!r}, {user_id!r} must be non-empty")
        existing = self.get_session(session_id)
        if existing is None:
            meta = json.dumps(validate_metadata(metadata))
            with self.db.transaction() as conn:  # OR IGNORE: another process may create it at the same moment
                conn.execute("INSERT OR IGNORE INTO sessions VALUES (?, ?, ?, ?, ?, 1)",
                             (session_id, user_id, to_timestamp(now), to_timestamp(now), meta))  # fmt: skip
            existing = self.get_session(session_id)
            assert existing is not None  # inserted above or by the other process
        if existing.user_id != user_id:
            raise ValueError(f"session_id: {session_id!r} belongs to user {existing.user_id!r}, not {user_id!r}")
        self._owners[session_id] = user_id
        return existing

    def ensure_session(self, session_id: str, *, user_id: str, now: datetime) -> None:
        """``create_session``, without reading the file again for a session this handle has seen (a session
        is never deleted, nor given to another user)."""
        if self._owners.get(session_id) != user_id:
            self.create_session(session_id, user_id=user_id, now=now)

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

    # memories: the VectorStore protocol, and the one transaction of a write with its semantic copies
    def upsert(self, items: Sequence[MemoryItem]) -> None:
        self.write(items, replace=True)

    def write(self, items: Sequence[MemoryItem], semantic: Sequence[MemoryItem] = (), *, replace: bool = False) -> None:
        """Store ``items`` and stage their ``semantic`` copies in the outbox, in one transaction.

        ``replace=False`` refuses ids already stored (nothing is written); every embedding is checked first.
        """
        rows, staged = self.memories.prepare(items), self._outbox.prepare(semantic)
        with self.db.transaction() as conn:
            self.memories.write_rows(conn, rows, replace)
            self._outbox.write_rows(conn, staged, replace=True)
            touched = {(item.session_id, to_timestamp(item.last_accessed)) for item in items if item.session_id}
            conn.executemany("UPDATE sessions SET updated_at = MAX(updated_at, ?) WHERE id = ?",
                             [(t, s) for s, t in touched])  # fmt: skip

    def pending_semantic(self) -> list[MemoryItem]:
        """Semantic copies written here whose semantic write has not been confirmed (a crash in between)."""
        return [row_item(row) for row in self.db.query("SELECT * FROM pending_semantic ORDER BY rowid")]

    def has_pending_semantic(self) -> bool:
        return bool(self.db.query("SELECT 1 FROM pending_semantic LIMIT 1"))

    def confirm_semantic(self, items: Sequence[MemoryItem]) -> None:
        """Drop these outbox entries, unless a newer copy of the same id was staged since they were read."""
        with self.db.transaction() as conn:
            for item in items:
                row = conn.execute("SELECT * FROM pending_semantic WHERE id = ?", (item.id,)).fetchone()
                if row is not None and tuple(row) == row_values(item):
                    self._outbox.delete_rows(conn, [item.id])

    def retract(self, ids: Sequence[str], semantic_ids: Sequence[str]) -> None:
        """Remove rows just written and their staged semantic copies, in one transaction."""
        with self.db.transaction() as conn:
            self.memories.delete_rows(conn, ids)
            self._outbox.delete_rows(conn, semantic_ids)

    def record_access(self, ids: Sequence[str], now: datetime) -> None:
        self.memories.record_access(ids, now)

    def get(self, ids: Sequence[str]) -> list[MemoryItem]:
        return self.memories.get(ids)

    def delete(self, ids: Sequence[str]) -> None:
        self.memories.delete(ids)

    def count(self) -> int:
        return self.memories.count()

    def items(self, filter: MemoryFilter | None = None) -> Iterator[MemoryItem]:
        """Stored items passing ``filter``, oldest first."""
        return self.memories.items(filter)

    def search(self, vector: np.ndarray, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """Cosine similarity over this tier's embedded items (higher is better), as of the file's latest state."""
        return self.memories.search(vector, k, filter)

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
        return [row_item(row) for row in self.db.query(sql, params)]

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

    # a copy of the whole file, for a replay that forks (sessions, memories and log together)
    def snapshot(self) -> sqlite3.Connection:
        """An in-memory copy of this memory as committed now; ``restored`` opens it as a new file."""
        return self.db.snapshot()

    @classmethod
    def restored(cls, snapshot: sqlite3.Connection, path: str | Path) -> EpisodicMemory:
        """A new episodic memory at ``path`` holding ``snapshot`` (from ``snapshot()``)."""
        Database.restore(snapshot, path)
        return cls(path)

    def close(self) -> None:
        self.db.close()


def _session(row: Any) -> SessionInfo:
    return SessionInfo(
        row["id"], row["user_id"], from_timestamp(row["created_at"]), from_timestamp(row["updated_at"]),
        json.loads(row["metadata"]), bool(row["active"]),
    )  # fmt: skip
