"""Memory data types and their validation: MemoryItem, MemoryFilter, MemoryQuery, Hit.

Every check at the edge raises ``ValueError`` naming the field and the bad value, before anything
is stored. Times are timezone-aware UTC datetimes; a naive datetime is taken to be UTC.
Scores are similarities: higher is better, everywhere.

>>> from datetime import datetime, timezone
>>> item = MemoryItem.new("I moved to Lisbon", now=datetime(2023, 5, 8, tzinfo=timezone.utc))
>>> item.tier, int(item.importance)
(<MemoryTier.EPISODIC: 'episodic'>, 3)
"""

from __future__ import annotations

import dataclasses
import math
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum, IntEnum
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "check_text",
    "MemoryTier",
    "Importance",
    "MemoryItem",
    "MemoryFilter",
    "MemoryQuery",
    "Hit",
    "as_utc",
    "to_timestamp",
    "from_timestamp",
]

MetadataValue = str | int | float | bool


class MemoryTier(str, Enum):
    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"

    @classmethod
    def parse(cls, value: Any, field_name: str = "tier") -> MemoryTier:
        try:
            return cls(value.value if isinstance(value, Enum) else value)
        except ValueError:
            choices = ", ".join(t.value for t in cls)
            raise ValueError(f"{field_name}: unknown tier {value!r}; choose one of {choices}") from None


class Importance(IntEnum):
    """How much a memory matters; higher is more important."""

    MINIMAL = 1
    LOW = 2
    MEDIUM = 3
    HIGH = 4
    CRITICAL = 5

    @classmethod
    def parse(cls, value: Any, field_name: str = "importance") -> Importance:
        if isinstance(value, str) and value.upper() in cls.__members__:
            return cls[value.upper()]
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= 5:
            raise ValueError(f"{field_name}: {value!r} is not an importance from 1 to 5")
        return cls(int(value))


def as_utc(value: datetime, field_name: str = "time") -> datetime:
    """Return ``value`` as an aware UTC datetime (naive values are taken as UTC)."""
    if not isinstance(value, datetime):
        raise ValueError(f"{field_name}: {value!r} is not a datetime")
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def to_timestamp(value: datetime) -> float:
    return as_utc(value).timestamp()


def from_timestamp(value: float) -> datetime:
    return datetime.fromtimestamp(value, tz=timezone.utc)


def check_text(value: Any, field_name: str, *, empty: bool = True) -> str:
    """``value`` if it is text every store can hold: a string without NUL bytes or lone surrogates.

    >>> check_text("a" + chr(0) + "b", "content")
    Traceback (most recent call last):
    ...
    ValueError: content: 'a\\x00b' holds a NUL byte at position 1; remove it
    """
    if not isinstance(value, str):
        raise ValueError(f"{field_name}: {value!r} is a {type(value).__name__}, not a string")
    if not empty and not value:
        raise ValueError(f"{field_name}: {value!r} is not a non-empty string")
    if "\x00" in value:
        raise ValueError(f"{field_name}: {value!r} holds a NUL byte at position {value.index(chr(0))}; remove it")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{field_name}: {value!r} holds a lone surrogate at position {error.start}, which is not "
                         "valid Unicode text (decode the source with errors='replace')") from None  # fmt: skip
    return value


def _string_tuple(values: Iterable[Any] | None, field_name: str) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValueError(f"{field_name}: expected a list of strings, got {values!r}")
    return tuple(check_text(value, f"{field_name}[{i}]", empty=False) for i, value in enumerate(values))


def validate_metadata(values: Mapping[str, Any] | None) -> dict[str, MetadataValue]:
    if values is not None and not isinstance(values, Mapping):
        raise ValueError(f"metadata: {values!r} is not a mapping of names to values")
    out = dict(values or {})
    for key, value in out.items():
        check_text(key, f"metadata key {key!r}", empty=False)
        if not isinstance(value, (str, int, float, bool)):
            raise ValueError(f"metadata[{key!r}]: {value!r} is not a str, int, float or bool")
        if isinstance(value, str):
            check_text(value, f"metadata[{key!r}]")
    return out


def _embedding(value: Any) -> np.ndarray | None:
    if value is None:
        return None
    vector = np.asarray(value, dtype=np.float32)
    if vector.ndim != 1 or vector.size == 0:
        raise ValueError(f"embedding: expected a non-empty 1-d vector, got shape {vector.shape}")
    if not np.all(np.isfinite(vector)):
        raise ValueError("embedding: contains NaN or infinite values")
    return vector


def _content(value: Any) -> str:
    if not check_text(value, "content").strip():
        raise ValueError(f"content: {value!r} is empty")
    return value


def _access_count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"access_count: {value!r} is not a count >= 0")
    return value


# each field of a MemoryItem, checked and normalised (in this order, on construction and on replace)
ITEM_CHECKS: dict[str, Callable[[Any], Any]] = {
    "id": lambda value: check_text(value, "id", empty=False),
    "content": _content,
    "tier": MemoryTier.parse,
    "importance": Importance.parse,
    "created_at": lambda value: as_utc(value, "created_at"),
    "last_accessed": lambda value: as_utc(value, "last_accessed"),
    "embedding": _embedding,
    "access_count": _access_count,
    "tags": lambda value: _string_tuple(value, "tags"),
    "source_ids": lambda value: _string_tuple(value, "source_ids"),
    "source": lambda value: check_text(value, "source"),
    "session_id": lambda value: check_text(value, "session_id"),
    "metadata": validate_metadata,
}


@dataclass(frozen=True)
class MemoryItem:
    """One memory. ``source_ids`` are the dataset turn ids it came from (evidence mapping)."""

    id: str
    content: str
    tier: MemoryTier
    created_at: datetime
    last_accessed: datetime
    importance: Importance = Importance.MEDIUM
    embedding: np.ndarray | None = field(default=None, compare=False, repr=False)
    access_count: int = 0
    tags: tuple[str, ...] = ()
    source: str = ""
    session_id: str = ""
    source_ids: tuple[str, ...] = ()
    metadata: Mapping[str, MetadataValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, check in ITEM_CHECKS.items():
            object.__setattr__(self, name, check(getattr(self, name)))

    @classmethod
    def new(cls, content: str, *, now: datetime, id: str | None = None, **fields: Any) -> MemoryItem:
        """A fresh item created and last accessed at ``now``, with a random id unless given."""
        fields.setdefault("tier", MemoryTier.EPISODIC)
        return cls(id=id or uuid.uuid4().hex, content=content, created_at=now, last_accessed=now, **fields)

    def replace(self, **changes: Any) -> MemoryItem:
        """A copy with ``changes``, each checked as the constructor checks it (the other fields already were)."""
        if not changes.keys() <= ITEM_CHECKS.keys():
            return dataclasses.replace(self, **changes)  # its TypeError names the unknown field
        copy = object.__new__(MemoryItem)
        copy.__dict__.update(self.__dict__)
        copy.__dict__.update({name: ITEM_CHECKS[name](value) for name, value in changes.items()})
        return copy

    def accessed(self, now: datetime) -> MemoryItem:
        """This item after one more access at ``now``."""
        return self.replace(access_count=self.access_count + 1, last_accessed=now)


@dataclass(frozen=True)
class MemoryFilter:
    """Conditions every store and retriever applies before it cuts the top k.

    ``where`` is metadata equality; ``session_ids`` keeps items of those sessions; times bound
    ``created_at`` (``since`` inclusive, ``until`` exclusive).
    """

    tiers: frozenset[MemoryTier] | None = None
    min_importance: Importance | None = None
    tags_any: tuple[str, ...] = ()
    tags_all: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    session_ids: tuple[str, ...] = ()
    where: Mapping[str, MetadataValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.tiers is not None:
            tiers = [self.tiers] if isinstance(self.tiers, (str, MemoryTier)) else self.tiers
            set_(self, "tiers", frozenset(MemoryTier.parse(t, "tiers") for t in tiers))
        if self.min_importance is not None:
            set_(self, "min_importance", Importance.parse(self.min_importance, "min_importance"))
        set_(self, "tags_any", _string_tuple(self.tags_any, "tags_any"))
        set_(self, "tags_all", _string_tuple(self.tags_all, "tags_all"))
        set_(self, "session_ids", _string_tuple(self.session_ids, "session_ids"))
        if self.since is not None:
            set_(self, "since", as_utc(self.since, "since"))
        if self.until is not None:
            set_(self, "until", as_utc(self.until, "until"))
        if self.since and self.until and self.since >= self.until:
            raise ValueError(f"since/until: since {self.since} is not before until {self.until}")
        set_(self, "where", validate_metadata(self.where))

    @property
    def is_empty(self) -> bool:
        return self == NO_FILTER

    def matches(self, item: MemoryItem) -> bool:
        """The reference semantics that every store's native filter must reproduce."""
        if self.tiers is not None and item.tier not in self.tiers:
            return False
        if self.min_importance is not None and item.importance < self.min_importance:
            return False
        if self.tags_any and not set(self.tags_any) & set(item.tags):
            return False
        if self.tags_all and not set(self.tags_all) <= set(item.tags):
            return False
        if self.since is not None and item.created_at < self.since:
            return False
        if self.until is not None and item.created_at >= self.until:
            return False
        if self.session_ids and item.session_id not in self.session_ids:
            return False
        return all(item.metadata.get(key) == value for key, value in self.where.items())


NO_FILTER = MemoryFilter()


@dataclass(frozen=True)
class MemoryQuery:
    """A search: text, filters, how many hits, and the order (``relevance`` or ``recency``)."""

    text: str
    filter: MemoryFilter = field(default_factory=MemoryFilter)
    limit: int = 10
    order: str = "relevance"

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError(f"text: the query {self.text!r} is empty")
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit < 1:
            raise ValueError(f"limit: {self.limit!r} must be an integer >= 1")
        if self.order not in ("relevance", "recency"):
            raise ValueError(f"order: {self.order!r} is not one of relevance, recency")
        if not isinstance(self.filter, MemoryFilter):
            raise ValueError(f"filter: {self.filter!r} is not a MemoryFilter")


class Hit(NamedTuple):
    """A retrieved item and its score (higher is better); ``tiers``: every tier that holds this memory."""

    item: MemoryItem
    score: float
    tiers: tuple[str, ...] = ()


def check_k(k: Any, field_name: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"{field_name}: {k!r} must be an integer >= 1")
    return int(k)


def sorted_hits(hits: Iterable[Hit], k: int) -> list[Hit]:
    """Top ``k`` hits by score descending; ties broken by id so that runs are deterministic."""
    ranked = sorted(hits, key=lambda hit: (-hit.score, hit.item.id))
    for hit in ranked:
        if not math.isfinite(hit.score):
            raise ValueError(f"score: {hit.score!r} for item {hit.item.id!r} is not finite")
    return ranked[:k]
