from datetime import datetime, timedelta, timezone

import pytest

from openclaw_lab.clock import SimulatedClock, SystemClock


def test_simulated_clock_sets_and_advances():
    clock = SimulatedClock(datetime(2023, 5, 8))
    assert clock.advance(90) == datetime(2023, 5, 8, 0, 1, 30, tzinfo=timezone.utc)
    assert clock.set(datetime(2024, 1, 1)) == datetime(2024, 1, 1, tzinfo=timezone.utc)
    with pytest.raises(ValueError, match="^delta"):
        clock.advance(timedelta(seconds=-1))


def test_system_clock_is_aware_utc():
    assert SystemClock().now().tzinfo is timezone.utc
