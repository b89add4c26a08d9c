from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_lab.clock import SimulatedClock
from openclaw_lab.model import MemoryItem
from openclaw_lab.tiers.working import WorkingMemory, render_line

T0 = datetime(2023, 5, 8, tzinfo=timezone.utc)


def count_words(text: str) -> int:
    return len(text.split())


def item(i: str, text: str = "one two", clock: SimulatedClock | None = None) -> MemoryItem:
    return MemoryItem.new(text, now=(clock.now() if clock else T0), id=i)


def test_lru_order_and_size_cap():
    clock = SimulatedClock(T0)
    memory = WorkingMemory(clock=clock, max_size=2, max_tokens=100, count_tokens=count_words)
    memory.put(item("a"))
    memory.put(item("b"))
    memory.get("a")  # a is now the most recent
    assert memory.put(item("c")) == ["b"]
    assert [i.id for i in memory.items()] == ["a", "c"]


def test_expired_items_are_evicted_before_recent_ones():
    clock = SimulatedClock(T0)
    memory = WorkingMemory(clock=clock, max_size=2, max_tokens=100, ttl=timedelta(minutes=10), count_tokens=count_words)
    memory.put(item("old"), ttl=timedelta(minutes=1))
    memory.put(item("b"))
    clock.advance(timedelta(minutes=2))
    assert memory.get("old") is None
    assert memory.put(item("c")) == []  # the expired item made room; b survives
    assert [i.id for i in memory.items()] == ["b", "c"]
    clock.advance(timedelta(minutes=9))  # b (put at 0 with a 10-minute ttl) expires; c (put at 2) lives
    assert [i.id for i in memory.items()] == ["c"]


def test_token_budget_evicts_least_recent():
    clock = SimulatedClock(T0)
    memory = WorkingMemory(clock=clock, max_size=10, max_tokens=12, count_tokens=count_words)
    for i in "abc":  # each rendered line: "[date time] one two" = 4 words
        memory.put(item(i))
    assert memory.total_tokens == 12
    assert memory.put(item("d")) == ["a"]


def test_an_item_larger_than_the_budget_is_refused_and_nothing_changes():
    clock = SimulatedClock(T0)
    memory = WorkingMemory(clock=clock, max_tokens=5, count_tokens=count_words)
    memory.put(item("a"))
    with pytest.raises(ValueError, match="^content: item 'big' has 12 tokens"):
        memory.put(item("big", " ".join(["w"] * 10)))
    assert [i.id for i in memory.items()] == ["a"]


def test_context_takes_the_newest_that_fit_and_renders_oldest_first():
    clock = SimulatedClock(T0)
    memory = WorkingMemory(clock=clock, max_tokens=100, count_tokens=count_words)
    for i, text in enumerate(["first note", "second note", "third note"]):
        clock.advance(60)
        memory.put(item(str(i), text, clock))
    lines = memory.context(max_tokens=8).splitlines()  # 4 tokens a line: the two newest fit
    assert lines == ["[2023-05-08 00:02] second note", "[2023-05-08 00:03] third note"]


def test_real_tokenizer_counts(embedder):
    memory = WorkingMemory(clock=SimulatedClock(T0), count_tokens=embedder.count_tokens)
    memory.put(item("a", "hello world"))
    assert memory.total_tokens == embedder.count_tokens(render_line(item("a", "hello world")))


operations = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.integers(0, 9), st.integers(1, 8), st.integers(1, 30)),
        st.tuples(st.just("get"), st.integers(0, 9)),
        st.tuples(st.just("advance"), st.integers(1, 20)),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(operations)
def test_caps_and_lru_order_always_hold(ops):
    clock = SimulatedClock(T0)
    memory = WorkingMemory(clock=clock, max_size=4, max_tokens=20, ttl=timedelta(minutes=15), count_tokens=count_words)
    recency: list[str] = []  # our own model of LRU order
    for op in ops:
        if op[0] == "put":
            _, key, n_words, ttl = op
            text = " ".join(["w"] * n_words)
            try:
                evicted = memory.put(item(f"i{key}", text, clock), ttl=timedelta(minutes=ttl))
            except ValueError:
                assert n_words + 2 > 20
                continue
            recency = [r for r in recency if r != f"i{key}" and r not in evicted] + [f"i{key}"]
        elif op[0] == "get":
            if memory.get(f"i{op[1]}") is not None:
                recency = [r for r in recency if r != f"i{op[1]}"] + [f"i{op[1]}"]
        else:
            clock.advance(timedelta(minutes=op[1]))
        live = [i.id for i in memory.items()]
        assert len(live) <= 4 and memory.total_tokens <= 20
        assert live == [r for r in recency if r in live]  # LRU order holds
