"""The adapter protocol every external memory system implements, as small as it can be.

>>> Recalled(id="m1", source_ids=("t3",), score=0.8, content="Alice: I adopted a puppy").source_ids
('t3',)
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import Protocol

__all__ = ["Observation", "Recalled", "MemorySystem", "require", "check_installed", "installed"]


@dataclass(frozen=True)
class Observation:
    """One turn as a memory system receives it: the rendered text and where and when it was said."""

    source_id: str  # the dataset's turn id: what every recalled memory must map back to
    text: str
    speaker: str
    session_id: str
    at: datetime  # dataset time


@dataclass(frozen=True)
class Recalled:
    """One memory a system returns for a query, mapped back to the turns it came from."""

    id: str  # the system's own memory id
    source_ids: tuple[str, ...]
    score: float  # higher is better
    content: str = ""


class MemorySystem(Protocol):
    """Many users' memories; ``add`` receives one session of a user at a time, in dataset order."""

    def add(self, user: str, turns: Sequence[Observation]) -> None: ...

    def search(self, user: str, query: str, k: int, at: datetime) -> list[Recalled]:
        """The best ``k`` memories of ``user`` for ``query`` asked at ``at``, best first."""
        ...

    def close(self) -> None: ...


def installed(module: str) -> bool:
    """Whether ``module`` (its top-level package) can be imported, without importing it."""
    return importlib.util.find_spec(module.partition(".")[0]) is not None


def check_installed(module: str, extra: str) -> None:
    """Fail with the command that installs the optional extra ``extra`` unless ``module`` can be imported."""
    if not installed(module):
        raise ImportError(f"{module} is not installed; run `pip install \"openclaw-lab[{extra}]\"`")


def require(module: str, extra: str) -> ModuleType:
    """``module`` of the optional extra ``extra``, imported; its install command when it is missing."""
    check_installed(module, extra)
    return importlib.import_module(module)

