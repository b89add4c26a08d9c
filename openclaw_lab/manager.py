"""MemoryManager: composes the working, episodic and semantic tiers it is given.

``MemoryManager.open(path)`` builds the embedded default: working memory in process, an episodic
SQLite file and a semantic SQLite store beside it, both safe for many processes (see
docs/guarantees.md). Any other vector store can be handed in (``store=ChromaStore(...)``). No server to start.

>>> import tempfile
>>> from openclaw_lab.stores.exact import ExactStore
>>> memory = MemoryManager.open(tempfile.mkdtemp(), store=ExactStore())
>>> _ = memory.add("My sister Ana lives in Porto", session_id="s1")
>>> memory.search("where does Ana live?")[0].item.content
'My sister Ana lives in Porto'
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextlib import nullcontext
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock

from openclaw_lab.clock import Clock, SystemClock
from openclaw_lab.embedding import Embedder
from openclaw_lab.model import Hit, Importance, MemoryFilter, MemoryItem, MemoryQuery, MemoryTier, sorted_hits
from openclaw_lab.stores.protocol import VectorStore
from openclaw_lab.stores.sqlite import SQLiteStore
from openclaw_lab.tiers.episodic import EpisodicMemory
from openclaw_lab.consolidation.consolidate import promote, provenance
from openclaw_lab.tiers.semantic import SemanticMemory
from openclaw_lab.tiers.working import WorkingMemory

__all__ = ["MemoryManager"]


class MemoryManager:
    """Add, search, get, update and delete memories across tiers, with access tracking on the clock."""

    def __init__(
        self,
        *,
        embedder: Embedder,
        episodic: EpisodicMemory,
        semantic: SemanticMemory,
        clock: Clock | None = None,
        user_id: str = "default",
        working_max_size: int = 100,
        working_max_tokens: int = 2000,
        working_ttl: timedelta = timedelta(hours=1),
    ) -> None:
        self.embedder, self.episodic, self.semantic = embedder, episodic, semantic
        self.clock = clock or SystemClock()
        self.user_id = user_id
        self._working_params = dict(max_size=working_max_size, max_tokens=working_max_tokens, ttl=working_ttl)
        self._working: dict[str, WorkingMemory] = {}
        self._outbox_lock = FileLock(f"{episodic.db.path}.outbox.lock") if str(episodic.db.path) != ":memory:" else None
        self.apply_pending()  # semantic copies a crash left unwritten are written now

    @classmethod
    def open(
        cls,
        path: str | Path,
        *,
        store: VectorStore | None = None,
        clock: Clock | None = None,
        embedder: Embedder | None = None,
        **params: Any,
    ) -> MemoryManager:
        """The embedded default stack in ``path``: ``episodic.sqlite`` and, unless ``store`` is given, ``semantic.sqlite``."""
        root = Path(path)
        root.mkdir(parents=True, exist_ok=True)
        embedder = embedder or Embedder()
        store = store if store is not None else SQLiteStore(root / "semantic.sqlite", embedding_model=embedder.model_id)
        episodic = EpisodicMemory(root / "episodic.sqlite", embedding_model=embedder.model_id)
        return cls(embedder=embedder, episodic=episodic, semantic=SemanticMemory(store), clock=clock, **params)

    def working(self, session_id: str) -> WorkingMemory:
        """This session's working memory (created on first use)."""
        if session_id not in self._working:
            self._working[session_id] = WorkingMemory(
                clock=self.clock, count_tokens=self.embedder.count_tokens, session_id=session_id,
                **self._working_params,
            )  # fmt: skip
        return self._working[session_id]

    def add(self, content: str, *, replace: bool = False, **fields: Any) -> MemoryItem:
        """Embed and store one memory; see ``add_many`` for the fields."""
        return self.add_many([{"content": content, **fields}], replace=replace)[0]

    def add_many(self, records: Sequence[Mapping[str, Any]], *, replace: bool = False) -> list[MemoryItem]:
        """Validate every record, embed those without an embedding in one batch, store each in its tier.

        Fields: content, session_id ("default"), tier (episodic), importance (3), tags, source,
        metadata, source_ids, id, created_at (default: the clock's now), embedding. CRITICAL items are
        also promoted to semantic memory. Nothing is stored unless every record is valid; an explicit
        id that is already stored is an error unless ``replace`` is true.
        """
        now = self.clock.now()
        drafts = [
            MemoryItem.new(now=record.get("created_at", now), **{"session_id": "default", **_without(record, "created_at")})
            for record in records
        ]
        if missing := [i for i, item in enumerate(drafts) if item.embedding is None]:
            for i, vector in zip(missing, self.embedder.encode([drafts[i].content for i in missing])):
                drafts[i] = drafts[i].replace(embedding=vector)
        self.write(drafts, replace=replace)
        return drafts

    def write(
        self,
        items: Sequence[MemoryItem],
        *,
        promote_ids: Collection[str] | None = None,
        user_id: str | None = None,
        replace: bool = False,
    ) -> list[MemoryItem]:
        """The one write path (``add_many``, the agent loop and the replay all end here): store embedded items.

        Each item goes to its tier; those in ``promote_ids`` (default: the CRITICAL ones) also get a
        long-term semantic copy, which is returned. Episodic rows and the semantic writes are staged
        in one SQLite transaction (the outbox), then applied to the semantic store: a crash in
        between is repaired when the memory is next opened, so an add is never half done. Sessions
        are created for ``user_id`` (default: the manager's user).
        """
        now = self.clock.now()
        if promote_ids is None:
            promote_ids = {item.id for item in items if item.importance is Importance.CRITICAL}
        copies = [promote(item, now) for item in items if item.id in promote_ids and item.tier is not MemoryTier.SEMANTIC]
        by_tier = {tier: [item for item in items if item.tier is tier] for tier in MemoryTier}
        if not replace:
            self._refuse_stored(by_tier[MemoryTier.SEMANTIC] + by_tier[MemoryTier.WORKING])  # episodic: in its transaction
        for session_id in dict.fromkeys(item.session_id for item in items):
            self.episodic.ensure_session(session_id, user_id=user_id or self.user_id, now=now)
        semantic = by_tier[MemoryTier.SEMANTIC] + copies
        self.episodic.write(by_tier[MemoryTier.EPISODIC], semantic, replace=replace)
        try:
            self.apply_pending()
        except Exception:
            if not replace:  # the semantic store refused: new rows are taken back, so nothing is half added
                self.episodic.retract([item.id for item in by_tier[MemoryTier.EPISODIC]], [item.id for item in semantic])
            raise
        for item in by_tier[MemoryTier.WORKING]:
            self.working(item.session_id).put(item)
        return copies

    def apply_pending(self) -> int:
        """Write the semantic copies staged in the outbox (by this or a crashed process); how many were written."""
        if not self.episodic.has_pending_semantic():  # the usual case, without the lock: a copy staged after this
            return 0  # read is applied by the process that staged it (or by the next to open, after a crash)
        with self._outbox_lock or nullcontext():  # one applier at a time, so an older copy never lands last
            pending = self.episodic.pending_semantic()
            if pending:
                self.semantic.upsert(pending)
                self.episodic.confirm_semantic(pending)
        return len(pending)

    def _refuse_stored(self, items: Sequence[MemoryItem]) -> None:
        if taken := [item.id for item in items if self.get(item.id) is not None]:
            raise ValueError(f"id: {taken[:3]} already stored; update them, or add with replace=True")

    def search(self, query: MemoryQuery | str, *, record_access: bool = True) -> list[Hit]:
        """Hits from every tier the query allows, one per memory, merged by similarity (higher is better).

        A memory held in several tiers (an episodic item and its semantic copy) is one hit: the best
        scoring copy, with ``tiers`` naming every tier that holds it. With ``order="recency"`` the
        best ``limit`` hits are returned newest first. Each hit's access count and last access are
        updated in its tier, at the clock's now.
        """
        query = MemoryQuery(query) if isinstance(query, str) else query
        vector = self.embedder.encode_one(query.text)
        hits = self.search_vector(vector, query.limit, query.filter, record_access=record_access)
        if query.order == "recency":
            hits.sort(key=lambda hit: hit.item.created_at, reverse=True)
        return hits

    def search_vector(
        self,
        vector: np.ndarray,
        limit: int,
        filter: MemoryFilter | None = None,
        *,
        record_access: bool = True,
        distinct: bool = True,
    ) -> list[Hit]:
        """``search`` for an embedding already at hand (a replay reuses each turn's own vector).

        ``distinct=False`` keeps every copy as its own hit (the replay's access simulation counts
        each copy an agent's search returns, as the committed baselines were measured).
        """
        filter = filter or MemoryFilter()
        tiers = filter.tiers or frozenset(MemoryTier)
        hits: list[Hit] = []
        if MemoryTier.WORKING in tiers:
            for memory in self._working.values():
                hits += memory.search(vector, limit, filter)
        if MemoryTier.EPISODIC in tiers:
            hits += self.episodic.search(vector, limit, filter)
        if MemoryTier.SEMANTIC in tiers:
            hits += self.semantic.search(vector, limit, filter)
        ranked = sorted_hits(hits, len(hits))
        copies = list(by_memory(ranked).values())[:limit] if distinct else [[hit] for hit in ranked[:limit]]
        if record_access:  # an access counts for every copy of the memory
            updated = {hit.item.id: hit for hit in self.record_access([hit for group in copies for hit in group])}
            copies = [[updated[hit.item.id] for hit in group] for group in copies]
        return [group[0]._replace(tiers=tuple(dict.fromkeys(h.item.tier.value for h in group))) for group in copies]

    def record_access(self, hits: Sequence[Hit]) -> list[Hit]:
        """Count one access of each hit's item at the clock's now, persisted in its tier (atomically)."""
        now = self.clock.now()
        updated = [hit._replace(item=hit.item.accessed(now)) for hit in hits]
        for item in (hit.item for hit in updated if hit.item.tier is MemoryTier.WORKING):
            self.working(item.session_id).put(item)
        for tier in (MemoryTier.EPISODIC, MemoryTier.SEMANTIC):
            if ids := [hit.item.id for hit in hits if hit.item.tier is tier]:
                self._tier(tier).record_access(ids, now)
        return updated

    def get(self, item_id: str) -> MemoryItem | None:
        for memory in self._working.values():
            if (item := memory.get(item_id)) is not None:
                return item
        found = self.episodic.get([item_id]) or self.semantic.get([item_id])
        return found[0] if found else None

    def update(self, item_id: str, **changes: Any) -> MemoryItem:
        """Change fields of a stored item (re-embedding new content); the tier cannot change."""
        item = self.get(item_id)
        if item is None:
            raise ValueError(f"id: no memory {item_id!r}")
        if "tier" in changes and MemoryTier.parse(changes["tier"]) is not item.tier:
            raise ValueError(f"tier: an item cannot move from {item.tier.value} to {changes['tier']!r} by update")
        if "id" in changes or "embedding" in changes:
            raise ValueError("id/embedding: these are managed by the memory; change content instead")
        updated = item.replace(**changes)
        if updated.content != item.content:
            updated = updated.replace(embedding=self.embedder.encode_one(updated.content))
        self._store([updated])
        return updated

    def delete(self, item_id: str) -> bool:
        """Remove the item from whichever tier holds it; False if no tier did."""
        item = self.get(item_id)
        if item is None:
            return False
        if item.tier is MemoryTier.WORKING:
            self.working(item.session_id).remove(item_id)
        else:
            self._tier(item.tier).delete([item_id])
        return True

    def footprint(self) -> dict[str, int]:
        """Items held per tier."""
        return {
            MemoryTier.WORKING.value: sum(len(memory) for memory in self._working.values()),
            MemoryTier.EPISODIC.value: self.episodic.count(),
            MemoryTier.SEMANTIC.value: self.semantic.count(),
        }

    def close(self) -> None:
        self.episodic.close()

    def _tier(self, tier: MemoryTier) -> EpisodicMemory | SemanticMemory:
        return self.episodic if tier is MemoryTier.EPISODIC else self.semantic

    def _store(self, items: Sequence[MemoryItem]) -> None:
        """Write items of one tier back to that tier."""
        if items[0].tier is MemoryTier.WORKING:
            for item in items:
                self.working(item.session_id).put(item)
        else:
            self._tier(items[0].tier).upsert(items)

def memory_key(item: MemoryItem) -> str:
    """The memory an item stands for: a semantic copy stands for the episodic item it was promoted from."""
    if item.tier is MemoryTier.SEMANTIC and (sources := list(provenance(item))):
        return sources[0]
    return item.id


def by_memory(hits: Sequence[Hit]) -> dict[str, list[Hit]]:
    """Hits grouped by the memory they stand for, in order of each memory's best hit."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        groups.setdefault(memory_key(hit.item), []).append(hit)
    return groups


def _without(record: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != key}
