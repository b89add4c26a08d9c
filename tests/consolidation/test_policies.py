"""Promotion and prune policies: the seed's rules, every threshold a parameter, the no-prune argument."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_lab.consolidation.decay import ExponentialDecay, NoDecay, SeedDecay
from openclaw_lab.consolidation.policies import ConsolidationPolicy, PrunePolicy
from openclaw_lab.model import MemoryItem

NOW = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


@pytest.mark.parametrize("importance, access, expected", [
    (5, 0, True),   # CRITICAL
    (1, 3, True),   # access_count >= 3
    (2, 2, False),
    (3, 1, True),   # importance >= 3 and accessed once
    (3, 0, False),
    (4, 0, False),
    (2, 1, False),
])
def test_seed_rules(make_item, now, importance, access, expected):
    assert ConsolidationPolicy().should_consolidate(make_item("a", importance, access), now) is expected


def test_every_threshold_is_a_parameter(make_item, now):
    strict = ConsolidationPolicy(critical=None, access_threshold=5, importance_threshold=4,
                                 min_access_with_importance=2)
    assert not strict.should_consolidate(make_item("a", importance=5, access=0), now)  # CRITICAL rule off
    assert not strict.should_consolidate(make_item("b", importance=3, access=4), now)
    assert strict.should_consolidate(make_item("c", importance=1, access=5), now)
    assert strict.should_consolidate(make_item("d", importance=4, access=2), now)
    assert not strict.should_consolidate(make_item("e", importance=4, access=1), now)
    assert ConsolidationPolicy(critical=4).should_consolidate(make_item("f", importance=4), now)


def test_min_age_holds_back_fresh_items(make_item, now):
    policy = ConsolidationPolicy(min_age=timedelta(days=1))
    assert not policy.should_consolidate(make_item("a", importance=5, age_days=0.5), now)
    assert policy.should_consolidate(make_item("a", importance=5, age_days=1), now)


def test_removal_after_promotion_is_off_by_default():
    assert ConsolidationPolicy().remove_after_promotion is False


@pytest.mark.parametrize("kwargs, field", [
    ({"access_threshold": -1}, "access_threshold"),
    ({"importance_threshold": 7}, "importance_threshold"),
    ({"critical": 0}, "critical"),
    ({"min_age": 3}, "min_age"),
    ({"remove_after_promotion": "yes"}, "remove_after_promotion"),
])
def test_bad_policy_parameters_name_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        ConsolidationPolicy(**kwargs)


def test_prune_selects_scores_strictly_below_threshold(make_item, now):
    # exponential, half-life 1 day: importance 5 at t=1 scores exactly 0.5
    items = [make_item("at", importance=5, age_days=1), make_item("below", importance=4, age_days=1),
             make_item("above", importance=5, age_days=0)]
    prune = PrunePolicy(ExponentialDecay(half_life_days=1), threshold=0.5)
    scores, ids = prune.evaluate(items, now)
    assert scores.tolist() == pytest.approx([0.5, 0.4, 1.0])
    assert ids == ["below"] == prune.select_prunable(items, now)


def test_seed_prune_defaults(make_item, now):
    # importance 1, never accessed: 0.2 · 0.9^d < 0.1 ⇔ d > ln(0.5)/ln(0.9) ≈ 6.58
    items = [make_item("six", importance=1, age_days=6), make_item("seven", importance=1, age_days=7)]
    assert PrunePolicy().select_prunable(items, now) == ["seven"]
    assert PrunePolicy(NoDecay()).select_prunable(items, now + timedelta(days=10_000)) == []


def test_bad_prune_parameters():
    with pytest.raises(ValueError, match="^law: "):
        PrunePolicy(law="seed")
    with pytest.raises(ValueError, match="^threshold: "):
        PrunePolicy(threshold=float("inf"))


# An item accessed since the last (hourly) run is never pruned by the default policy. Why: an access
# means access_count >= 1 and importance >= 1, so its seed score is at least (1/5 + 0.1) · 0.9^t;
# within an hour t <= 1/24 day and the score is >= 0.3 · 0.9^(1/24) ≈ 0.2987 > 0.1. The weakest such
# item would need t > ln(1/3)/ln(0.9) ≈ 10.43 days without access to fall below 0.1.
@settings(max_examples=200, deadline=None)
@given(importance=st.integers(1, 5), access=st.integers(1, 50), seconds=st.floats(0, 3600))
def test_an_item_accessed_since_the_last_hourly_run_is_never_pruned(importance, access, seconds):
    item = MemoryItem.new("x", now=NOW, importance=importance, access_count=access)
    later = NOW + timedelta(seconds=seconds)
    assert SeedDecay().score(item, later) >= 0.3 * 0.9 ** (1 / 24) > 0.1
    assert PrunePolicy().select_prunable([item], later) == []


def test_the_weakest_accessed_item_survives_ten_days_but_not_eleven(make_item, now):
    assert math.log(1 / 3) / math.log(0.9) == pytest.approx(10.427, abs=1e-3)
    item = make_item("weak", importance=1, access=1)
    assert PrunePolicy().select_prunable([item], now + timedelta(days=10)) == []
    assert PrunePolicy().select_prunable([item], now + timedelta(days=11)) == ["weak"]
