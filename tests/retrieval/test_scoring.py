"""Memory-aware scoring (Generative Agents): relevance, recency and importance, worked by hand."""

from __future__ import annotations

import math
from datetime import timedelta

import pytest

from openclaw_lab.model import MemoryFilter, MemoryItem
from openclaw_lab.retrieval.scoring import DEFAULT_HALF_LIFE_HOURS, MemoryAwareRetriever, min_max, recency

from .conftest import T0, FixedRetriever


def three_items():
    # relevance 0.9, 0.5, 0.1 -> 1, 0.5, 0; accessed 0, 24, 48 h ago; importance 1, 3, 5 -> 0, 0.5, 1
    def item(id, hours, importance):
        when = T0 - timedelta(hours=hours)
        return MemoryItem.new(f"memory {id}", now=when, id=id, importance=importance)

    base = FixedRetriever({"fresh": 0.9, "middle": 0.5, "old": 0.1})
    base.index([item("fresh", 0, 1), item("middle", 24, 3), item("old", 48, 5)])
    return base


def scored(retriever, k=3, filter=None):
    return [(hit.item.id, round(hit.score, 9)) for hit in retriever.search("anything", k, filter)]


def test_equal_weights_worked_by_hand(clock):
    retriever = MemoryAwareRetriever(three_items(), clock, half_life_hours=24.0)
    # fresh: 1 + 1 + 0 = 2; middle: 0.5 + 0.5 + 0.5 = 1.5; old: 0 + 0.25 + 1 = 1.25
    assert scored(retriever) == [("fresh", 2.0), ("middle", 1.5), ("old", 1.25)]


def test_weights_change_the_order(clock):
    retriever = MemoryAwareRetriever(three_items(), clock, w_rel=1, w_rec=1, w_imp=3, half_life_hours=24.0)
    # fresh: 1 + 1 + 0 = 2; middle: 0.5 + 0.5 + 1.5 = 2.5; old: 0 + 0.25 + 3 = 3.25
    assert scored(retriever) == [("old", 3.25), ("middle", 2.5), ("fresh", 2.0)]
    relevance_only = MemoryAwareRetriever(three_items(), clock, w_rec=0, w_imp=0)
    assert scored(relevance_only) == [("fresh", 1.0), ("middle", 0.5), ("old", 0.0)]


def test_recency_follows_the_clock(clock):
    retriever = MemoryAwareRetriever(three_items(), clock, w_rel=0, w_imp=0, half_life_hours=24.0)
    clock.advance(timedelta(hours=24))
    assert scored(retriever) == [("fresh", 0.5), ("middle", 0.25), ("old", 0.125)]


def test_the_default_half_life_is_generative_agents_decay_of_0_995_per_hour():
    assert 0.5 ** (1 / DEFAULT_HALF_LIFE_HOURS) == pytest.approx(0.995)
    item = MemoryItem.new("x", now=T0)
    assert recency(item, T0 + timedelta(hours=10), DEFAULT_HALF_LIFE_HOURS) == pytest.approx(0.995**10)
    assert recency(item, T0 - timedelta(hours=5), 24.0) == 1.0  # an access after "now" counts as now


def test_candidates_come_from_the_base_with_the_filter(clock):
    base = three_items()
    retriever = MemoryAwareRetriever(base, clock, candidates=50, half_life_hours=24.0)
    # the filter leaves middle and old: relevance 0.5, 0.1 -> 1, 0; middle: 1 + 0.5 + 0.5, old: 0 + 0.25 + 1
    assert scored(retriever, k=2, filter=MemoryFilter(min_importance=3)) == [("middle", 2.0), ("old", 1.25)]
    assert base.depths == [50]
    retriever.search("anything", 80)
    assert base.depths[-1] == 80


def test_a_single_candidate_is_fully_relevant(clock):
    base = three_items()
    retriever = MemoryAwareRetriever(base, clock, half_life_hours=24.0)
    assert scored(retriever, filter=MemoryFilter(min_importance=5)) == [("old", 1 + 0.25 + 1)]
    assert min_max([3.0, 3.0]) == [1.0, 1.0]


def test_bad_parameters_and_a_missing_clock_raise(clock):
    with pytest.raises(ValueError, match=r"^clock: MemoryAwareRetriever needs a clock"):
        MemoryAwareRetriever(three_items(), None).search("x", 3)
    with pytest.raises(ValueError, match=r"^w_rec: -1 must be a finite number >= 0"):
        MemoryAwareRetriever(three_items(), clock, w_rec=-1).search("x", 3)
    with pytest.raises(ValueError, match=r"^half_life_hours: 0 is not a half-life"):
        MemoryAwareRetriever(three_items(), clock, half_life_hours=0).search("x", 3)
    with pytest.raises(ValueError, match=r"^w_imp: nan must be"):
        MemoryAwareRetriever(three_items(), clock, w_imp=math.nan).search("x", 3)
    with pytest.raises(ValueError, match=r"^candidates: 0 must be an integer >= 1"):
        MemoryAwareRetriever(three_items(), clock, candidates=0).search("x", 3)
