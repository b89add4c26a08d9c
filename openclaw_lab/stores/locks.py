"""One process at a time for stores whose embedded engine is not safe for several (chroma's folder).

>>> import tempfile
>>> folder = tempfile.mkdtemp()
>>> lock = hold_folder(folder, "chroma")  # held until released; the same process may hold it again
>>> lock.is_locked
True
>>> lock.release()
"""

from __future__ import annotations

import os
from pathlib import Path

from filelock import FileLock, Timeout

from openclaw_lab.errors import OpenClawError

__all__ = ["StoreBusy", "hold_folder", "LOCK_NAME"]

LOCK_NAME = ".openclaw.lock"


class StoreBusy(OpenClawError, RuntimeError):
    """Another process holds a store folder that only one process may open at a time."""


def hold_folder(folder: str | Path, engine: str) -> FileLock:
    """Take ``folder``'s lock without waiting; ``StoreBusy`` naming the holder's pid if another process has it."""
    path = Path(folder) / LOCK_NAME
    lock = FileLock(path, is_singleton=True)  # one lock object per file in this process: re-entrant here
    try:
        lock.acquire(timeout=0)
    except Timeout:
        holder = path.with_suffix(".pid").read_text().strip() if path.with_suffix(".pid").exists() else "?"
        raise StoreBusy(
            f"path: {folder} is open in another process (pid {holder}); {engine}'s embedded client is not safe for "
            "several processes on one folder. Close it there, or share the memory across processes with the "
            "default SQLite store (MemoryManager.open(path) without store=)"
        ) from None
    path.with_suffix(".pid").write_text(str(os.getpid()))
    return lock
