"""Run consolidation on a clock: ``tick()`` in a replay (simulated clock), a thread with wall time.

Runs fall on a fixed grid ``start + n·interval`` (no drift). When ``tick()`` finds that several
boundaries have passed (the replay clock jumped), by default it runs ONCE, at the clock's now: every
decay law only decreases with time and nothing happened in between, so the final state is the same
as running at each boundary, at a fraction of the cost (LoCoMo sessions are days apart). With
``catch_up=True`` it runs once per boundary passed, each at its boundary time (what a live clock
would have read), so that a log shows memory decaying through the gap.

Errors are logged with their traceback (``logging.exception``) and counted (``errors``,
``last_error``); ``raise_errors=True`` re-raises them from ``tick()``. Nothing is swallowed silently.

>>> from datetime import datetime, timedelta
>>> from openclaw_lab.clock import SimulatedClock
>>> clock = SimulatedClock(datetime(2023, 5, 8))
>>> scheduler = ConsolidationScheduler(lambda now: None, clock, interval=timedelta(hours=1))
>>> _ = clock.advance(timedelta(hours=5))
>>> scheduler.tick(), scheduler.runs
(1, 1)
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from openclaw_lab.clock import Clock

__all__ = ["ConsolidationScheduler"]

logger = logging.getLogger(__name__)


class ConsolidationScheduler:
    """Calls ``run(now)`` at every ``interval`` of ``clock``; ``runs`` counts attempts, ``errors`` failures."""

    def __init__(
        self,
        run: Callable[[datetime], Any],
        clock: Clock,
        interval: timedelta = timedelta(hours=1),
        *,
        catch_up: bool = False,
        raise_errors: bool = False,
    ) -> None:
        if not callable(run):
            raise ValueError(f"run: {run!r} is not callable; pass a function of now, e.g. consolidation_job(...)")
        if not isinstance(interval, timedelta) or interval <= timedelta(0):
            raise ValueError(f"interval: {interval!r} must be a timedelta > 0")
        self._run = run
        self.clock = clock
        self.interval = interval
        self.catch_up = catch_up
        self.raise_errors = raise_errors
        self.start_time = clock.now()
        self.next_due = self.start_time + interval
        self.runs = 0
        self.errors = 0
        self.last_error: BaseException | None = None
        self.last_result: Any = None
        self.last_run_at: datetime | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def tick(self) -> int:
        """Run what is due at the clock's now; returns how many runs were made (0 when none is due)."""
        return self._tick(self.raise_errors)

    def _tick(self, raise_errors: bool) -> int:
        with self._lock:
            now = self.clock.now()
            if now < self.next_due:
                return 0
            passed = (now - self.start_time) // self.interval  # boundaries since the start, >= 1
            last_boundary = self.start_time + passed * self.interval
            if not self.catch_up:
                self.next_due = last_boundary + self.interval
                self._run_once(now, raise_errors)
                return 1
            made = 0
            while self.next_due <= last_boundary:
                when, self.next_due = self.next_due, self.next_due + self.interval
                made += 1
                self._run_once(when, raise_errors)  # an error re-raised here leaves later boundaries due
            return made

    def timing(self) -> tuple[datetime, datetime, int]:
        """Where the schedule stands (start, next run, runs so far): ``resume`` continues from it."""
        return self.start_time, self.next_due, self.runs

    def resume(self, timing: tuple[datetime, datetime, int]) -> None:
        """Continue the schedule from ``timing`` (another scheduler's, at a copy of its memory)."""
        self.start_time, self.next_due, self.runs = timing

    def _run_once(self, when: datetime, raise_errors: bool) -> None:
        self.runs += 1
        self.last_run_at = when
        try:
            self.last_result = self._run(when)
        except Exception as error:
            self.errors += 1
            self.last_error = error
            logger.exception("consolidation run at %s failed (%d of %d runs failed)", when.isoformat(),
                             self.errors, self.runs)
            if raise_errors:
                raise

    # wall time: a daemon thread sleeping on an Event, so that stop() wakes it at once
    def start(self) -> ConsolidationScheduler:
        """Run in a background thread until ``stop()``; errors there are logged and counted, never raised."""
        if self.is_running:
            raise ValueError("start: this scheduler is already running; call stop() first")
        self._stopping.clear()
        self._thread = threading.Thread(target=self._loop, name="consolidation-scheduler", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stopping.wait(self._seconds_until_due()):
            self._tick(raise_errors=False)

    def _seconds_until_due(self) -> float:
        with self._lock:
            return max((self.next_due - self.clock.now()).total_seconds(), 0.0)

    def stop(self, timeout: float | None = None) -> None:
        """Wake the thread and join it (a run in progress finishes first)."""
        self._stopping.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout)
            if thread.is_alive():
                self._thread = thread
                raise TimeoutError(f"timeout: the scheduler thread is still in a run after {timeout} s")

    @property
    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def __enter__(self) -> ConsolidationScheduler:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return (f"ConsolidationScheduler(interval={self.interval}, next_due={self.next_due.isoformat()}, "
                f"runs={self.runs}, errors={self.errors})")
