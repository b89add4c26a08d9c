"""What a system costs in the run that scores it: wall time and the peak resident memory it added.

Measured in the same process and run as the metrics, so the ratios between systems hold on a
shared machine even when the absolute figures drift. Peak memory is sampled (every 10 ms) as the
resident set's growth over its size when the system started; memory a system keeps after it
finishes (a library's caches) is not charged to the next one, which starts from the new level.

>>> with measured() as cost:
...     _ = bytearray(50 * 2**20)
>>> cost["seconds"] >= 0 and cost["peak_rss_mib"] >= 0
True
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pandas as pd
import psutil

__all__ = ["measured", "per_thousand", "cost_table", "COST_COLUMNS"]

COST_COLUMNS = ("ingest_s_per_1k_turns", "consolidation_s_per_1k_turns", "query_ms", "peak_rss_mib", "seconds")


@contextmanager
def measured(interval: float = 0.01) -> Iterator[dict[str, Any]]:
    """``with measured() as cost:`` fills ``cost`` with ``seconds`` and ``peak_rss_mib`` when the block ends."""
    process = psutil.Process()
    start_rss = peak = process.memory_info().rss
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.wait(interval):
            peak = max(peak, process.memory_info().rss)

    sampler = threading.Thread(target=sample, name="peak-rss", daemon=True)
    cost: dict[str, Any] = {}
    started = time.perf_counter()
    sampler.start()
    try:
        yield cost
    finally:
        stop.set()
        sampler.join()
        peak = max(peak, process.memory_info().rss)
        cost["seconds"] = time.perf_counter() - started
        cost["peak_rss_mib"] = (peak - start_rss) / 2**20


def per_thousand(seconds: float, count: int) -> float:
    """Seconds per 1,000 of ``count`` (NaN when nothing was counted).

    >>> per_thousand(3.0, 1500)
    2.0
    """
    return seconds * 1000 / count if count else float("nan")


def cost_table(costs: Mapping[str, Mapping[str, Any]], replay: Mapping[str, Any]) -> pd.DataFrame:
    """One row per system: ingest seconds per 1,000 turns and the part of them consolidation took, milliseconds
    per query, peak memory added (MiB) and the system's own seconds.

    Our systems ingest through the shared replay, so each is charged the replay's time and peak, plus
    its own indexing; another memory system ingests and queries on its own (its adapter times both, and
    its consolidation is not told apart: NaN).

    >>> replay = {"seconds": 10.0, "peak_rss_mib": 50.0, "turns": 1000, "consolidation_seconds": 4.0}
    >>> ours = {"seconds": 3.0, "peak_rss_mib": 20.0, "index_seconds": 1.0, "query_seconds": 2.0, "queries": 100}
    >>> peer = {"seconds": 30.0, "peak_rss_mib": 80.0, "ingest_seconds": 25.0, "turns": 500, "query_seconds": 5.0,
    ...         "queries": 100}
    >>> cost_table({"dense": ours, "mem0": peer}, replay).round(1).to_dict("index")
    {'dense': {'ingest_s_per_1k_turns': 11.0, 'consolidation_s_per_1k_turns': 4.0, 'query_ms': 20.0, \
'peak_rss_mib': 50.0, 'seconds': 3.0}, 'mem0': {'ingest_s_per_1k_turns': 50.0, 'consolidation_s_per_1k_turns': nan, \
'query_ms': 50.0, 'peak_rss_mib': 80.0, 'seconds': 30.0}}
    """
    rows = {}
    for name, cost in costs.items():
        queries = cost.get("queries", 0)
        query_seconds = cost.get("query_seconds", cost["seconds"])  # a system that does not split: all of it
        if "ingest_seconds" in cost:  # another memory system, which ingests on its own
            ingest, peak = per_thousand(cost["ingest_seconds"], cost["turns"]), cost["peak_rss_mib"]
            consolidation = float("nan")
        else:
            ingest = per_thousand(replay["seconds"] + cost.get("index_seconds", 0.0), replay["turns"])
            peak = max(replay["peak_rss_mib"], cost["peak_rss_mib"])
            consolidation = per_thousand(replay.get("consolidation_seconds", 0.0), replay["turns"])
        rows[name] = {"ingest_s_per_1k_turns": ingest, "consolidation_s_per_1k_turns": consolidation,
                      "query_ms": 1000 * query_seconds / queries if queries else float("nan"),
                      "peak_rss_mib": peak, "seconds": cost["seconds"]}  # fmt: skip
    return pd.DataFrame.from_dict(rows, orient="index", columns=list(COST_COLUMNS))
