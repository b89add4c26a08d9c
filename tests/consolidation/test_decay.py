"""Decay laws: hand-computed values, the seed's consequence day, vectorised == per item."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openclaw_lab.consolidation.decay import (
    EbbinghausDecay,
    ExponentialDecay,
    NoDecay,
    PowerLawDecay,
    SeedDecay,
    days_since_access,
    decay_inputs,
    decay_scores,
)
from openclaw_lab.model import MemoryItem
from openclaw_lab.harness.registry import decay_laws

NOW = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)

ALL_LAWS = [SeedDecay(), ExponentialDecay(), EbbinghausDecay(), EbbinghausDecay(importance_weighted=True),
            PowerLawDecay(), NoDecay()]


# hand-computed values, one per law
def test_seed_value(make_item, now):
    item = make_item("a", importance=3, access=2, age_days=2)
    assert SeedDecay().score(item, now) == pytest.approx((0.6 + 0.2) * 0.81)  # 0.648


def test_seed_access_bonus_is_capped(make_item, now):
    item = make_item("a", importance=2, access=10)
    assert SeedDecay().score(item, now) == pytest.approx(0.4 + 0.3)


def test_seed_counts_fractional_days(make_item, now):
    item = make_item("a", importance=5, access=0, age_days=0.5)
    assert SeedDecay().score(item, now) == pytest.approx(1.0 * math.sqrt(0.9))  # 0.9487


def test_seed_every_constant_is_a_parameter(make_item, now):
    item = make_item("a", importance=4, access=2, age_days=1)
    law = SeedDecay(per_access=0.25, cap=0.4, daily=0.5, importance_scale=8)
    assert law.score(item, now) == pytest.approx((4 / 8 + 0.4) * 0.5)  # 0.45


def test_exponential_halves_every_half_life(make_item, now):
    item = make_item("a", importance=4, age_days=14)
    assert ExponentialDecay(half_life_days=7).score(item, now) == pytest.approx(0.8 * 0.25)


def test_ebbinghaus_strength_grows_with_recalls(make_item, now):
    law = EbbinghausDecay()  # MemoryBank: S = 1 + recalls (days)
    assert law.score(make_item("a", access=2, age_days=3), now) == pytest.approx(math.exp(-1))  # S = 3
    assert law.score(make_item("b", access=0, age_days=3), now) == pytest.approx(math.exp(-3))  # S = 1
    scaled = EbbinghausDecay(base_strength_days=2, growth=0.5, importance_weighted=True)
    # S = 2 · (1 + 0.5·2) = 4 days; t = 4 → e^-1, times importance 4/5
    assert scaled.score(make_item("c", importance=4, access=2, age_days=4), now) == pytest.approx(0.8 * math.exp(-1))


def test_power_law(make_item, now):
    item = make_item("a", importance=5, age_days=3)
    assert PowerLawDecay(scale_days=1, alpha=0.5).score(item, now) == pytest.approx(0.5)  # 4^-0.5
    assert PowerLawDecay(scale_days=2, alpha=2).score(item, now) == pytest.approx(1 / 2.5**2)  # 0.16


def test_no_decay_is_one_forever(make_item, now):
    assert NoDecay().score(make_item("a", importance=1, age_days=10_000), now) == 1.0


def test_critical_item_accessed_three_times_falls_below_point_one_on_day_25(make_item, now):
    # (1.0 + 0.3) · 0.9^d < 0.1  ⇔  d > ln(1/13) / ln(0.9) ≈ 24.34: day 24 keeps it, day 25 does not
    assert math.log(1 / 13) / math.log(0.9) == pytest.approx(24.344, abs=1e-3)
    item = make_item("a", importance=5, access=3)
    law = SeedDecay()
    assert law.score(item, now + timedelta(days=24)) == pytest.approx(1.3 * 0.9**24)  # 0.10366
    assert law.score(item, now + timedelta(days=24)) >= 0.1
    assert law.score(item, now + timedelta(days=25)) == pytest.approx(1.3 * 0.9**25)  # 0.09329
    first_day_below = next(d for d in range(60) if law.score(item, now + timedelta(days=d)) < 0.1)
    assert first_day_below == 25


def test_days_are_floored_at_zero(make_item, now):
    future = make_item("a", importance=5, age_days=-3)  # accessed after `now` (an out-of-order replay)
    assert days_since_access([future], now).tolist() == [0.0]
    assert SeedDecay().score(future, now) == pytest.approx(1.0)


@pytest.mark.parametrize("law", ALL_LAWS, ids=repr)
def test_vectorised_scores_equal_per_item_scores(law, make_item, now):
    items = [make_item(f"i{n}", importance=1 + n % 5, access=n % 7, age_days=n * 0.37) for n in range(50)]
    expected = [law.score(item, now) for item in items]
    scores = decay_scores(items, law, now)
    assert scores.dtype == np.float64 and scores.shape == (50,)
    np.testing.assert_allclose(scores, expected, rtol=1e-12)
    # inputs read once and shared by several laws give every law exactly its own scores
    np.testing.assert_array_equal(decay_scores(items, law, now, decay_inputs(items, now)), scores)
    days = decay_inputs(items, now).days
    np.testing.assert_allclose(days, [n * 0.37 for n in range(50)], atol=1e-9)


def test_decay_scores_accepts_any_law_with_score(make_item, now):
    class Halving:
        def score(self, item, now):
            return int(item.importance) / 2

    assert decay_scores([make_item("a", importance=3)], Halving(), now).tolist() == [1.5]
    with pytest.raises(ValueError, match="^law: "):
        decay_scores([], object(), now)


@settings(max_examples=60, deadline=None)
@given(importance=st.integers(1, 5), access=st.integers(0, 20), age=st.floats(0, 400), later=st.floats(0, 400))
def test_every_law_is_non_increasing_in_time(importance, access, age, later):
    # the scheduler's "run once after a jump" relies on this: waiting never raises a score
    item = MemoryItem.new("x", now=NOW, importance=importance, access_count=access)
    for law in ALL_LAWS:
        sooner = law.score(item, NOW + timedelta(days=age))
        assert law.score(item, NOW + timedelta(days=age + later)) <= sooner + 1e-12
        assert sooner >= 0


@pytest.mark.parametrize("name, cls", [("seed", SeedDecay), ("exponential", ExponentialDecay),
                                       ("ebbinghaus", EbbinghausDecay), ("power", PowerLawDecay), ("none", NoDecay)])
def test_registered_names_build_the_laws(name, cls):
    assert isinstance(decay_laws.create(name), cls)


@pytest.mark.parametrize("make, field", [
    (lambda: SeedDecay(daily=1.5), "daily"),
    (lambda: SeedDecay(per_access=-0.1), "per_access"),
    (lambda: SeedDecay(importance_scale=0), "importance_scale"),
    (lambda: ExponentialDecay(half_life_days=0), "half_life_days"),
    (lambda: EbbinghausDecay(base_strength_days=-1), "base_strength_days"),
    (lambda: PowerLawDecay(alpha=float("nan")), "alpha"),
])
def test_bad_parameters_name_the_field(make, field):
    with pytest.raises(ValueError, match=f"^{field}: "):
        make()
