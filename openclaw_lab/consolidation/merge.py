"""Restatement merge: memories that say the same fact again become one memory, in any tier.

The near-duplicate merge inside ``consolidate`` only sees items being promoted, and only above a cosine
of 0.95; people restate a fact in other words ("Ana rents a flat in Porto", later "Ana has been living in
Porto for a while"). Here every stored, unmarked memory is a candidate: the pair model
(``fact_pairs.FactPairModel``: nearest neighbours and shared names for candidates, a fitted network for the
decision) judges each pair, and the pairs it calls a ``restatement`` with probability at least
``threshold`` (0.3: on 20,000 synthetic turns, duplicate precision 0.953 and recall 0.835; at 0.5, 0.977
and 0.759) are joined (transitively) into groups. Each group becomes one memory that keeps the oldest
item's id (so that links to it, such as a semantic copy's home, still hold), the newest item's words, time
and embedding, and every source turn id (provenance); access counts add up, importance and last access
take the highest. ``merged_from`` lists the ids it absorbed, ``merged_sessions`` the sessions they came from
(``sessions_of``: a merged memory speaks for every session that said its fact). Summaries, which join
statements on purpose, and items already marked superseded are left alone (``repointed`` moves their marks to
the memory that absorbed their replacement).

>>> from datetime import datetime
>>> old = MemoryItem.new("user: I live in Porto.", now=datetime(2023, 1, 1), id="a", embedding=[1.0, 0.0], source_ids=["t1"])
>>> new = MemoryItem.new("user: Home is Porto.", now=datetime(2023, 2, 1), id="b", embedding=[0.9, 0.1], source_ids=["t9"])
>>> kept = absorb([old, new])
>>> kept.id, kept.content, kept.source_ids, kept.metadata[MERGED_FROM]
('a', 'user: Home is Porto.', ('t1', 't9'), 'b')
>>> sessions_of(absorb([old.replace(session_id="s1"), new.replace(session_id="s4")]))
('s4', 's1')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from openclaw_lab.consolidation.consolidate import ACCESS_COUNT, FROM, _union, _with_provenance, provenance
from openclaw_lab.consolidation.fact_pairs import RELATIONS, FactPairModel
from openclaw_lab.consolidation.summaries import SUMMARY_OF
from openclaw_lab.consolidation.supersession import SUPERSEDED_BY
from openclaw_lab.model import MemoryItem

__all__ = ["RestatementMerge", "absorb", "repointed", "sessions_of", "MERGED_FROM", "MERGED_SESSIONS"]

MERGED_FROM = "merged_from"
MERGED_SESSIONS = "merged_sessions"


def _joined(item: MemoryItem, key: str) -> list[str]:
    """A comma-joined metadata list (metadata values stay scalars, as every store keeps them)."""
    return [value for value in str(item.metadata.get(key, "")).split(",") if value]


def sessions_of(item: MemoryItem) -> tuple[str, ...]:
    """The sessions a memory speaks for: its own, then those of the memories merged into it."""
    return tuple(_union([item.session_id], _joined(item, MERGED_SESSIONS)))


def absorb(group: Sequence[MemoryItem]) -> MemoryItem:
    """One memory for a group of restatements, oldest first (see the module doc)."""
    oldest, newest = group[0], group[-1]
    absorbed = [item.id for item in group[1:]]
    earlier = [id_ for item in group for id_ in _joined(item, MERGED_FROM)]
    sessions = [s for item in group for s in sessions_of(item) if s != newest.session_id]
    metadata = {**oldest.metadata, **newest.metadata, MERGED_FROM: ",".join(_union(earlier, absorbed))}
    if sessions:
        metadata[MERGED_SESSIONS] = ",".join(_union(sessions))
    counts: dict[str, int | None] = {}
    for item in group:  # semantic copies: the episodic ids each one was made from
        counts |= provenance(item) if FROM in item.metadata else {}
    if counts:
        summed = sum(int(item.metadata.get(ACCESS_COUNT, item.access_count)) for item in group)
        metadata = _with_provenance(oldest.replace(metadata=metadata), counts, summed)
    return oldest.replace(
        content=newest.content, embedding=newest.embedding, created_at=newest.created_at,
        session_id=newest.session_id, metadata=metadata,
        importance=max(item.importance for item in group), access_count=sum(item.access_count for item in group),
        last_accessed=max(item.last_accessed for item in group),
        source_ids=_union(*(item.source_ids for item in group)), tags=_union(*(item.tags for item in group)),
    )  # fmt: skip


class RestatementMerge:
    """Join memories that restate one fact (see the module doc): ``merged(items)`` gives what to write and
    the ids to delete."""

    def __init__(self, path: str | Path | None = None, *, threshold: float = 0.3) -> None:
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold: {threshold!r} must be a probability strictly between 0 and 1")
        self.threshold, self.model = threshold, FactPairModel(path)

    def __repr__(self) -> str:
        return f"RestatementMerge(threshold={self.threshold})"

    def restatements(self, items: Sequence[MemoryItem]) -> tuple[list[MemoryItem], list[tuple[int, int]]]:
        """``items`` oldest first, and the (older, newer) index pairs judged to restate one fact."""
        live, pairs, chances = self.model.pairs(items)
        chance = chances[:, RELATIONS.index("restatement")]
        return live, [(older, newer) for (older, newer, _), p in zip(pairs, chance) if p >= self.threshold]

    def groups(self, items: Sequence[MemoryItem]) -> list[list[MemoryItem]]:
        """The groups of two or more restatements among ``items``, each oldest first."""
        live, pairs = self.restatements([item for item in items if SUMMARY_OF not in item.metadata])
        parent = list(range(len(live)))

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for older, newer in pairs:
            parent[root(newer)] = root(older)
        members: dict[int, list[MemoryItem]] = {}
        for index, item in enumerate(live):  # live is oldest first, so each group is too
            members.setdefault(root(index), []).append(item)
        return [group for group in members.values() if len(group) > 1]

    def merged(self, items: Sequence[MemoryItem]) -> tuple[list[MemoryItem], dict[str, str]]:
        """The merged memories to write, and each absorbed id (to delete) with the id that absorbed it."""
        groups = self.groups(items)
        return [absorb(group) for group in groups], {item.id: group[0].id for group in groups for item in group[1:]}


def repointed(items: Sequence[MemoryItem], absorbed: Mapping[str, str]) -> list[MemoryItem]:
    """The ``items`` marked superseded by an absorbed memory, marked by the one that absorbed it instead, so
    that what replaced them can still be found.

    >>> from datetime import datetime
    >>> old = MemoryItem.new("Ana lives in Porto", now=datetime(2023, 1, 1), id="x", metadata={SUPERSEDED_BY: "b"})
    >>> [item.metadata[SUPERSEDED_BY] for item in repointed([old], {"b": "a"})]
    ['a']
    """
    return [item.replace(metadata={**item.metadata, SUPERSEDED_BY: absorbed[item.metadata[SUPERSEDED_BY]]})
            for item in items if item.metadata.get(SUPERSEDED_BY) in absorbed]  # fmt: skip
