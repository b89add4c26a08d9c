"""The scheduler on a simulated clock (run counts, errors surfaced) and on wall time (a clean stop)."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

import pytest

from openclaw_lab.clock import SystemClock
from openclaw_lab.consolidation import ConsolidationScheduler, MemoryLog, consolidation_job
from openclaw_lab.stores.exact import ExactStore

HOUR = timedelta(hours=1)


class Recorder:
    """A run(now) that records its times and fails on the calls listed in ``fail_on`` (1-based)."""

    def __init__(self, fail_on=()):
        self.times, self.fail_on = [], set(fail_on)

    def __call__(self, now):
        self.times.append(now)
        if len(self.times) in self.fail_on:
            raise RuntimeError(f"injected failure on run {len(self.times)}")
        return len(self.times)


def test_runs_once_per_boundary_crossed_at_the_clocks_now(clock):
    start, run = clock.now(), Recorder()
    scheduler = ConsolidationScheduler(run, clock, interval=HOUR)
    clock.advance(timedelta(minutes=59))
    assert scheduler.tick() == 0
    clock.advance(timedelta(minutes=1))
    assert scheduler.tick() == 1 and scheduler.tick() == 0  # due once per boundary
    clock.advance(timedelta(hours=5, minutes=30))  # a replay jump over five boundaries: one run
    assert scheduler.tick() == 1
    assert scheduler.next_due == start + 7 * HOUR  # back on the grid, no drift
    clock.advance(timedelta(minutes=30))
    assert scheduler.tick() == 1
    assert run.times == [start + HOUR, start + timedelta(hours=6, minutes=30), start + 7 * HOUR]
    assert scheduler.runs == 3 and scheduler.errors == 0 and scheduler.last_result == 3


def test_catch_up_runs_every_boundary_at_its_own_time(clock):
    start, run = clock.now(), Recorder()
    scheduler = ConsolidationScheduler(run, clock, interval=HOUR, catch_up=True)
    clock.advance(timedelta(hours=5, minutes=10))
    assert scheduler.tick() == 5
    assert run.times == [start + n * HOUR for n in range(1, 6)]
    assert scheduler.next_due == start + 6 * HOUR and scheduler.last_run_at == start + 5 * HOUR


def test_an_injected_error_is_counted_logged_with_traceback_and_later_runs_go_on(clock, caplog):
    run = Recorder(fail_on={2})
    scheduler = ConsolidationScheduler(run, clock, interval=HOUR)
    with caplog.at_level(logging.ERROR, logger="openclaw_lab.consolidation.scheduler"):
        for _ in range(3):
            clock.advance(HOUR)
            scheduler.tick()
    assert scheduler.runs == 3 and scheduler.errors == 1
    assert isinstance(scheduler.last_error, RuntimeError) and "run 2" in str(scheduler.last_error)
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.exc_info is not None and record.exc_info[0] is RuntimeError
    assert "Traceback" in caplog.text and "injected failure on run 2" in caplog.text
    assert "1 of 2 runs failed" in record.getMessage()


def test_raise_errors_re_raises_and_leaves_later_boundaries_due(clock, caplog):
    start, run = clock.now(), Recorder(fail_on={2})
    scheduler = ConsolidationScheduler(run, clock, interval=HOUR, catch_up=True, raise_errors=True)
    clock.advance(4 * HOUR)
    with pytest.raises(RuntimeError, match="injected failure on run 2"):
        scheduler.tick()
    assert scheduler.errors == 1 and "Traceback" in caplog.text  # logged as well as raised
    assert scheduler.next_due == start + 3 * HOUR
    assert scheduler.tick() == 2 and run.times[-2:] == [start + 3 * HOUR, start + 4 * HOUR]


def test_consolidation_on_the_simulated_clock_logs_each_run(clock, make_item):
    episodic, semantic, log = ExactStore(), ExactStore(), MemoryLog()
    episodic.upsert([make_item("e1", importance=5, access=3)])
    scheduler = ConsolidationScheduler(consolidation_job(episodic, semantic, log=log), clock, interval=HOUR)
    for _ in range(30):  # a month of daily jumps
        clock.advance(timedelta(days=1))
        scheduler.tick()
    entries = log.consolidation_log()
    assert len(entries) == 30 and scheduler.errors == 0
    assert [n for n, e in enumerate(entries, 1) if e["promoted"]] == [1]
    # the copy was last accessed at the start: 1.3 · 0.9^d < 0.1 first at day 25
    assert [n for n, e in enumerate(entries, 1) if e["pruned"]["semantic"]] == [25]


def test_wall_time_thread_runs_and_stops_cleanly():
    enough = threading.Event()

    def run(now):
        if scheduler.runs >= 3:
            enough.set()

    scheduler = ConsolidationScheduler(run, SystemClock(), interval=timedelta(milliseconds=5))
    scheduler.start()
    assert scheduler.is_running
    with pytest.raises(ValueError, match="^start: "):
        scheduler.start()
    assert enough.wait(timeout=30)
    scheduler.stop(timeout=30)
    assert not scheduler.is_running
    runs = scheduler.runs
    threading.Event().wait(0.05)
    assert scheduler.runs == runs  # nothing runs after stop()


def test_stop_wakes_a_long_wait_and_thread_errors_are_counted(caplog):
    failed = threading.Event()

    def run(now):
        failed.set()
        raise ValueError("boom")

    scheduler = ConsolidationScheduler(run, SystemClock(), interval=timedelta(milliseconds=5))
    with caplog.at_level(logging.ERROR, logger="openclaw_lab.consolidation.scheduler"), scheduler:
        assert failed.wait(timeout=30)
    assert scheduler.errors >= 1 and scheduler.errors == scheduler.runs and "Traceback" in caplog.text
    sleepy = ConsolidationScheduler(run, SystemClock(), interval=timedelta(days=1)).start()
    sleepy.stop(timeout=30)  # raises TimeoutError if the Event did not wake the day-long wait
    assert not sleepy.is_running and sleepy.runs == 0


@pytest.mark.parametrize("kwargs, field", [({"interval": timedelta(0)}, "interval"), ({"run": 3}, "run")])
def test_bad_arguments_name_the_field(clock, kwargs, field):
    args = {"run": Recorder(), "clock": clock, **kwargs}
    with pytest.raises(ValueError, match=f"^{field}: "):
        ConsolidationScheduler(**args)
