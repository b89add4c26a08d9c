"""Working memory: an LRU cache with per-item TTL, a size cap and a token budget, for one session.

Eviction removes expired items first, then the least recently used, until both caps hold. An item
larger than the whole token budget is refused with a ValueError (the seed's eviction loop never
ended in that case).

>>> from datetime import datetime
>>> from openclaw_lab.clock import SimulatedClock
>>> from openclaw_lab.model import MemoryItem
>>> clock = SimulatedClock(datetime(2023, 5, 8))
>>> memory = WorkingMemory(clock=clock, max_tokens=50)
>>> _ = memory.put(MemoryItem.new("I like tea", now=clock.now(), id="a"))
>>> memory.context()
'[2023-05-08 00:00] I like tea'
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from openclaw_lab.text import estimate_tokens
from openclaw_lab.clock import Clock
from openclaw_lab.model import Hit, MemoryFilter, MemoryItem, MemoryTier, check_k, sorted_hits
from openclaw_lab.stores.codec import check_vector, normalise

__all__ = ["WorkingMemory", "estimate_tokens", "render_line"]

TokenCounter = Callable[[str], int]


def render_line(item: MemoryItem) -> str:
    """One memory as a context line, dated so that temporal questions are answerable."""
    return f"[{item.created_at:%Y-%m-%d %H:%M}] {item.content}"


@dataclass(frozen=True)
class _Entry:
    item: MemoryItem
    tokens: int
    expires_at: datetime


class WorkingMemory:
    """Recent items of one session, most recently used last (``OrderedDict`` order)."""

    def __init__(
        self,
        *,
        clock: Clock,
        max_size: int = 100,
        max_tokens: int = 2000,
        ttl: timedelta = timedelta(hours=1),
        count_tokens: TokenCounter | None = None,
        session_id: str = "",
    ) -> None:
        if max_size < 1 or max_tokens < 1:
            raise ValueError(f"max_size/max_tokens: {max_size}, {max_tokens} must both be >= 1")
        if ttl <= timedelta(0):
            raise ValueError(f"ttl: {ttl} must be positive")
        self.clock, self.max_size, self.max_tokens, self.ttl = clock, max_size, max_tokens, ttl
        self.count_tokens = count_tokens or estimate_tokens
        self.session_id = session_id
        self._entries: OrderedDict[str, _Entry] = OrderedDict()

    def __len__(self) -> int:
        self._drop_expired()
        return len(self._entries)

    def __contains__(self, item_id: object) -> bool:
        self._drop_expired()
        return item_id in self._entries

    @property
    def total_tokens(self) -> int:
        return sum(entry.tokens for entry in self._entries.values())

    def put(self, item: MemoryItem, ttl: timedelta | None = None) -> list[str]:
        """Store ``item`` as the most recent; return the ids evicted to make room."""
        tokens = self.count_tokens(render_line(item))
        if tokens > self.max_tokens:
            raise ValueError(
                f"content: item {item.id!r} has {tokens} tokens, more than the whole budget of {self.max_tokens}"
            )
        ttl = ttl or self.ttl
        if ttl <= timedelta(0):
            raise ValueError(f"ttl: {ttl} must be positive")
        self._entries.pop(item.id, None)
        item = item.replace(tier=MemoryTier.WORKING)
        self._entries[item.id] = _Entry(item, tokens, self.clock.now() + ttl)
        return self._evict()

    def get(self, item_id: str) -> MemoryItem | None:
        """The item if live, marked as most recently used; None if absent or expired."""
        self._drop_expired()
        entry = self._entries.get(item_id)
        if entry is None:
            return None
        self._entries.move_to_end(item_id)
        return entry.item

    def remove(self, item_id: str) -> bool:
        return self._entries.pop(item_id, None) is not None

    def items(self) -> list[MemoryItem]:
        """Live items, least recently used first."""
        self._drop_expired()
        return [entry.item for entry in self._entries.values()]

    def context(self, max_tokens: int | None = None) -> str:
        """The newest items that fit ``max_tokens`` (default: the whole budget), rendered oldest to newest."""
        budget = check_k(max_tokens, "max_tokens") if max_tokens is not None else self.max_tokens
        self._drop_expired()
        chosen: list[MemoryItem] = []
        for entry in reversed(self._entries.values()):
            if entry.tokens > budget:
                break  # keep the window contiguous: older items never jump a newer one that did not fit
            budget -= entry.tokens
            chosen.append(entry.item)
        return "\n".join(render_line(item) for item in reversed(chosen))

    def search(self, vector: np.ndarray, k: int, filter: MemoryFilter | None = None) -> list[Hit]:
        """Live items with embeddings, by cosine similarity to ``vector`` (higher is better)."""
        k = check_k(k)
        candidates = [i for i in self.items() if i.embedding is not None and (filter is None or filter.matches(i))]
        if not candidates:
            return []
        query = normalise(check_vector(vector, candidates[0].embedding.shape[0], "vector"))
        scores = normalise(np.vstack([i.embedding for i in candidates])) @ query
        return sorted_hits((Hit(i, float(s)) for i, s in zip(candidates, scores)), k)

    def _drop_expired(self) -> list[str]:
        now = self.clock.now()
        expired = [item_id for item_id, entry in self._entries.items() if entry.expires_at <= now]
        for item_id in expired:
            del self._entries[item_id]
        return expired

    def _evict(self) -> list[str]:
        evicted = self._drop_expired()
        total = self.total_tokens
        while len(self._entries) > self.max_size or total > self.max_tokens:
            item_id, entry = self._entries.popitem(last=False)  # least recently used
            total -= entry.tokens
            evicted.append(item_id)
        return evicted
