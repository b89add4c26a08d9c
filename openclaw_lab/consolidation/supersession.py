"""Supersession: when a newer memory restates the same subject and attribute, the older one is retired.

Nothing is deleted. The older item is marked ``superseded_by`` (the newer item's id) and ``valid_until``
(the newer item's time, in the dataset's own time), as temporal knowledge graphs (Zep/Graphiti) do with
an LLM; here the decision needs none: two memories name the same subject (a capitalised name other than
the speaker's) and their embeddings are close (cosine in ``[min_similarity, max_similarity)``; above it
they are near-duplicates, which merging handles). Retrieval can then demote or filter superseded items
(a system's ``superseded`` setting), so both are measured.

>>> from datetime import datetime
>>> old = MemoryItem.new("My sister Ana lives in Porto", now=datetime(2023, 1, 1), id="a", embedding=[1.0, 0.2])
>>> new = MemoryItem.new("Ana moved to Lyon last week", now=datetime(2023, 3, 1), id="b", embedding=[1.0, 0.6])
>>> [(item.id, item.metadata[SUPERSEDED_BY]) for item in Supersession(min_similarity=0.8).marks([old, new])]
[('a', 'b')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from openclaw_lab.model import MemoryItem

__all__ = ["Supersession", "SupersessionRule", "SUPERSEDED_BY", "VALID_UNTIL", "subjects", "candidate_pairs", "mark", "mark_newest"]

SUPERSEDED_BY, VALID_UNTIL = "superseded_by", "valid_until"
_NAME = re.compile(r"\b[A-Z][a-z]+\b")
_NOT_NAMES = frozenset("I My The We He She They It This That What When Where How Yes No Oh Hi Hey Thanks".split())


def subjects(item: MemoryItem) -> frozenset[str]:
    """The names an item's content mentions, without its speaker's.

    >>> from datetime import datetime
    >>> sorted(subjects(MemoryItem.new("Caroline: My sister Ana lives in Porto", now=datetime(2023, 1, 1),
    ...                                metadata={"speaker": "Caroline"})))
    ['Ana', 'Porto']
    """
    return _subjects(item.content, str(item.metadata.get("speaker", "")))


@lru_cache(maxsize=100_000)  # consolidation asks about every memory at every run
def _subjects(content: str, speaker: str) -> frozenset[str]:
    return frozenset(name for name in _NAME.findall(content) if name not in _NOT_NAMES and name != speaker)


class SupersessionRule(Protocol):
    """Anything that picks the memories a newer one replaces: ``Supersession``, ``LearnedSupersession``."""

    def marks(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        """The items to rewrite, each marked ``superseded_by`` / ``valid_until``."""
        ...


@dataclass(frozen=True)
class Supersession:
    """Mark older memories that a newer one about the same subject replaces (see the module doc)."""

    min_similarity: float = 0.6
    max_similarity: float = 0.95

    def __post_init__(self) -> None:
        if not -1.0 <= self.min_similarity < self.max_similarity <= 1.0:
            raise ValueError(f"min_similarity/max_similarity: {self.min_similarity}, {self.max_similarity} must satisfy "
                             "-1 <= min < max <= 1")  # fmt: skip

    def marks(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        """The items to rewrite, marked by their newest replacement; items already marked are left alone."""
        live, pairs = candidate_pairs(items, self.min_similarity, self.max_similarity)
        return mark_newest(live, pairs)


def candidate_pairs(
    items: Sequence[MemoryItem], min_similarity: float, max_similarity: float
) -> tuple[list[MemoryItem], list[tuple[int, int, float]]]:
    """The unmarked items with embeddings, oldest first, and the (older, newer, cosine) index pairs where the
    newer item names a subject the older one names and their cosine is in ``[min_similarity, max_similarity)``."""
    live = sorted((i for i in items if i.embedding is not None and SUPERSEDED_BY not in i.metadata),
                  key=lambda item: (item.created_at, item.id))  # fmt: skip
    if len(live) < 2:
        return live, []
    matrix = np.vstack([item.embedding for item in live]).astype(np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    cosine = matrix @ matrix.T
    close = (cosine >= min_similarity) & (cosine < max_similarity)
    names = [subjects(item) for item in live]
    pairs = []
    for older in range(len(live) - 1):
        if not names[older]:
            continue
        for newer in np.flatnonzero(close[older, older + 1 :]) + older + 1:
            if names[older] & names[newer] and live[newer].created_at > live[older].created_at:
                pairs.append((older, int(newer), float(cosine[older, newer])))
    return live, pairs


def mark_newest(live: Sequence[MemoryItem], pairs: Sequence[tuple[int, int, float]]) -> list[MemoryItem]:
    """Each older item of ``pairs`` marked by its newest replacement (pairs come in (older, newer) order)."""
    newest = {older: newer for older, newer, _ in pairs}  # the last newer of an older one wins
    return [mark(live[older], live[newer]) for older, newer in newest.items()]


def mark(older: MemoryItem, replacement: MemoryItem) -> MemoryItem:
    """``older`` marked as replaced by ``replacement`` from the time ``replacement`` was made."""
    return older.replace(metadata={**older.metadata, SUPERSEDED_BY: replacement.id,
                                   VALID_UNTIL: replacement.created_at.isoformat()})  # fmt: skip
