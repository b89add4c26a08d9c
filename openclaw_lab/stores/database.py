"""The one SQLite connection helper: WAL, a busy timeout, a recorded schema version, one lock.

Several processes may open one file: SQLite serialises their writes (``BEGIN IMMEDIATE`` waits up to
``BUSY_TIMEOUT`` seconds for another writer) and each reader sees every committed write.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["Database", "BUSY_TIMEOUT"]

BUSY_TIMEOUT = 60.0  # seconds a write waits for another process's transaction


class Database:
    """A connection shared by the threads of one process; every write is one transaction."""

    def __init__(self, path: str | Path, schema: str, version: int) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT)
        self._conn.row_factory = sqlite3.Row
        self._lock = threading.RLock()
        self._conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        self.executescript(schema)
        with self.transaction() as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            if row is None:
                conn.execute("INSERT INTO schema_version VALUES (?)", (version,))
            elif row[0] != version:
                raise ValueError(f"schema_version: {self.path} has version {row[0]}, this code reads {version}")

    def executescript(self, schema: str) -> None:
        """Run CREATE … IF NOT EXISTS statements (idempotent), in one transaction."""
        with self.transaction() as conn:
            for statement in filter(str.strip, schema.split(";")):
                conn.execute(statement)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """BEGIN IMMEDIATE … COMMIT, or ROLLBACK on any error: a crash mid-write changes nothing."""
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            self._committed: list[Callable[[], None]] = []
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")
            for action in self._committed:
                action()

    def on_commit(self, action: Callable[[], None]) -> None:
        """Run ``action`` once the current transaction has committed (never if it rolls back)."""
        self._committed.append(action)

    def query(self, sql: str, params: tuple | list = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def snapshot(self) -> sqlite3.Connection:
        """An in-memory copy of the whole database as committed now (``restore`` writes it to a file)."""
        copy = sqlite3.connect(":memory:", check_same_thread=False)
        with self._lock:
            self._conn.backup(copy)
        return copy

    @staticmethod
    def restore(snapshot: sqlite3.Connection, path: str | Path) -> None:
        """Write ``snapshot`` (from ``snapshot()``) to a new file at ``path``."""
        target = sqlite3.connect(str(path))
        try:
            snapshot.backup(target)
        finally:
            target.close()

    def close(self) -> None:
        with self._lock:
            self._conn.close()
