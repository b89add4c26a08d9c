"""Clocks: the only place that reads wall time. Everything else is handed ``now`` or a clock.

>>> from datetime import datetime, timedelta
>>> clock = SimulatedClock(datetime(2023, 5, 8, 13, 56))
>>> clock.advance(timedelta(minutes=1)).isoformat()
'2023-05-08T13:57:00+00:00'
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Protocol

from openclaw_lab.model import as_utc

__all__ = ["Clock", "SystemClock", "SimulatedClock"]


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    """Wall time, UTC."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def __repr__(self) -> str:
        return "SystemClock()"


class SimulatedClock:
    """A settable clock, so that a replay runs in the dataset's own time."""

    def __init__(self, start: datetime) -> None:
        self._now = as_utc(start, "start")

    def now(self) -> datetime:
        return self._now

    def set(self, when: datetime) -> datetime:
        self._now = as_utc(when, "when")
        return self._now

    def advance(self, delta: timedelta | float) -> datetime:
        """Move forward by a timedelta or a number of seconds; never backwards."""
        step = delta if isinstance(delta, timedelta) else timedelta(seconds=delta)
        if step < timedelta(0):
            raise ValueError(f"delta: {delta!r} is negative; a clock does not run backwards")
        self._now += step
        return self._now

    def __repr__(self) -> str:
        return f"SimulatedClock({self._now.isoformat()})"
