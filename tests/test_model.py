import dataclasses
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from openclaw_lab.model import Importance, MemoryFilter, MemoryItem, MemoryQuery, MemoryTier

NOW = datetime(2023, 5, 8, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("fields", "field_name"),
    [
        ({"content": "  "}, "content"),
        ({"importance": 0}, "importance"),
        ({"importance": 6}, "importance"),
        ({"importance": True}, "importance"),
        ({"tier": "long-term"}, "tier"),
        ({"tags": ["ok", 3]}, "tags"),
        ({"tags": "solo"}, "tags"),
        ({"access_count": -1}, "access_count"),
        ({"metadata": {"k": [1, 2]}}, "metadata"),
        ({"embedding": [np.nan, 1.0]}, "embedding"),
    ],
)
def test_bad_item_fields_name_the_field(fields, field_name):
    base = {"content": "hello"}
    with pytest.raises(ValueError, match=f"^{field_name}"):
        MemoryItem.new(now=NOW, **{**base, **fields})
    item = MemoryItem.new("hello", now=NOW, id="a")
    with pytest.raises(ValueError, match=f"^{field_name}"):  # a copy's changes are checked as the constructor's
        item.replace(**fields)


def test_replace_normalises_what_it_changes_and_keeps_the_rest():
    item = MemoryItem.new("hello", now=NOW, id="a", tags=["x"], embedding=[1, 0])
    copy = item.replace(importance="high", last_accessed=datetime(2023, 5, 9), tags=["y"])
    assert copy.importance is Importance.HIGH and copy.tags == ("y",)
    assert copy.last_accessed == datetime(2023, 5, 9, tzinfo=timezone.utc)
    assert (copy.id, copy.content, copy.created_at) == (item.id, item.content, item.created_at)
    assert copy == dataclasses.replace(item, importance=Importance.HIGH, last_accessed=copy.last_accessed, tags=("y",))
    assert item.importance is Importance.MEDIUM and item.tags == ("x",)  # the original is untouched
    with pytest.raises(TypeError, match="colour"):
        item.replace(colour="red")


def test_importance_parses_names_and_numbers():
    assert Importance.parse("critical") is Importance.CRITICAL
    assert Importance.parse(2) is Importance.LOW


def test_naive_datetimes_are_taken_as_utc():
    item = MemoryItem.new("x", now=datetime(2023, 5, 8))
    assert item.created_at == NOW


@pytest.mark.parametrize(
    ("query", "field_name"),
    [({"text": ""}, "text"), ({"text": "q", "limit": 0}, "limit"), ({"text": "q", "order": "random"}, "order")],
)
def test_bad_query_fields(query, field_name):
    with pytest.raises(ValueError, match=f"^{field_name}"):
        MemoryQuery(**query)


def test_filter_semantics():
    item = MemoryItem.new("x", now=NOW, importance=4, tags=("a", "b"), session_id="s1", metadata={"speaker": "Ana"})
    assert MemoryFilter(min_importance=4, tags_any=("z", "a"), tags_all=("a", "b")).matches(item)
    assert not MemoryFilter(min_importance=5).matches(item)
    assert not MemoryFilter(tags_all=("a", "z")).matches(item)
    assert MemoryFilter(since=NOW, until=NOW + timedelta(seconds=1)).matches(item)
    assert not MemoryFilter(until=NOW).matches(item)  # until is exclusive
    assert not MemoryFilter(tiers=[MemoryTier.SEMANTIC]).matches(item)
    assert MemoryFilter(where={"speaker": "Ana"}, session_ids=("s1",)).matches(item)
    with pytest.raises(ValueError, match="^tiers"):
        MemoryFilter(tiers=["nowhere"])
    with pytest.raises(ValueError, match="^since/until"):
        MemoryFilter(since=NOW, until=NOW)
