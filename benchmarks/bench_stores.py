"""Add throughput and query latency of every vector store against the exact numpy store.

Prints a markdown table: items/s for adding (batches of 1,000), and the median latency of a
top-10 query with no filter, a selective filter (a tag held by 1% of items) and a broad one
(importance >= 2, about 80% of items), each with its ratio to the exact store.

    .venv/bin/python benchmarks/bench_stores.py                      # 10k and 100k items
    .venv/bin/python benchmarks/bench_stores.py --sizes 10000 --stores exact chroma
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# one BLAS thread: on a small shared machine a threaded gemv spins and turns 1 ms into 20 ms
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import numpy as np  # noqa: E402

from openclaw_lab.model import MemoryFilter, MemoryItem  # noqa: E402
from openclaw_lab.harness.registry import stores  # noqa: E402

T0 = datetime(2023, 5, 8, tzinfo=timezone.utc)
FILTERS = {
    "none": None,
    "selective": MemoryFilter(tags_any=("rare",)),
    "broad": MemoryFilter(min_importance=2),
}
BATCH = 1000


def make_items(n: int, dim: int, seed: int = 0) -> list[MemoryItem]:
    """``n`` items with random unit vectors; 1% carry the tag "rare", importance is uniform on 1..5."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    importance = rng.integers(1, 6, size=n)
    items = []
    for i in range(n):
        tags = ("rare",) if i % 100 == 0 else (("work",) if i % 3 == 0 else ())
        items.append(
            MemoryItem.new(
                f"memory {i}",
                id=f"m{i}",
                now=T0 + timedelta(minutes=i),
                importance=int(importance[i]),
                embedding=vectors[i],
                tags=tags,
                session_id=f"s{i % 50}",
                metadata={"speaker": "alice" if i % 2 else "bob"},
            )
        )
    return items


def open_store(kind: str, folder: Path):
    if kind == "exact":
        return stores.create("exact")  # in memory, saved once after the adds (its intended use at scale)
    files = {"milvus": "m.db", "sqlite": "m.sqlite"}  # the others take a folder
    return stores.create(kind, path=folder / files[kind] if kind in files else folder)


def time_adds(store, items: list[MemoryItem], folder: Path) -> float:
    start = time.perf_counter()
    for i in range(0, len(items), BATCH):
        store.upsert(items[i : i + BATCH])
    if hasattr(store, "save"):  # the exact store, kept in memory: one save to disk
        store.save(folder)
    if hasattr(store, "flush"):  # milvus: seal and index the rows (milvus-lite scans unflushed rows in Python)
        store.flush()
    return len(items) / (time.perf_counter() - start)


def time_queries(store, queries: np.ndarray, filter, budget_s: float) -> tuple[float, int]:
    """Median ms per top-10 query; stops early (after at least 5 queries) when over ``budget_s``."""
    store.search(queries[0], 10, filter)  # warm-up
    times, spent = [], 0.0
    for query in queries:
        start = time.perf_counter()
        hits = store.search(query, 10, filter)
        elapsed = time.perf_counter() - start
        if not hits:
            raise RuntimeError(f"{type(store).__name__} returned no hit for a filter that matches items")
        times.append(elapsed * 1000)
        spent += elapsed
        if len(times) >= 5 and spent > budget_s:
            break
    return statistics.median(times), len(times)


def bench(kind: str, items: list[MemoryItem], queries: np.ndarray, budget_s: float) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"bench-{kind}-") as tmp:
        folder = Path(tmp)
        store = open_store(kind, folder)
        row = {"store": kind, "n": len(items), "add": time_adds(store, items, folder)}
        for name, filter in FILTERS.items():
            row[name], row[f"{name}_q"] = time_queries(store, queries, filter, budget_s)
        getattr(store, "close", lambda: None)()
    return row


def ratio(value: float) -> str:
    return f"{value:.1f}x" if value < 10 else f"{value:.0f}x"


def table(rows: list[dict]) -> str:
    exact = {row["n"]: row for row in rows if row["store"] == "exact"}
    lines = [
        "| store | items | add (items/s) | query ms: no filter | selective (1% tag) | broad (importance >= 2) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        base = exact.get(row["n"])
        add = f"{row['add']:,.0f}" + (f" ({ratio(base['add'] / row['add'])} the exact store's time)" if base and row is not base else "")
        cells = []
        for name in FILTERS:
            cell = f"{row[name]:.2f}"
            if base and row is not base:
                cell += f" ({ratio(row[name] / base[name])})"
            cells.append(cell)
        lines.append(f"| {row['store']} | {row['n']:,} | {add} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--stores", nargs="+", default=["exact", "sqlite", "chroma", "qdrant", "milvus"])
    parser.add_argument("--dim", type=int, default=384, help="all-MiniLM-L6-v2's dimension")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--budget", type=float, default=20.0, help="seconds of queries per cell at most")
    args = parser.parse_args(argv)
    queries = np.random.default_rng(1).normal(size=(args.queries, args.dim)).astype(np.float32)
    rows = []
    for n in args.sizes:
        items = make_items(n, args.dim)
        for kind in args.stores:
            row = bench(kind, items, queries, args.budget)
            rows.append(row)
            print(
                f"{kind:>7} n={n:>7,}: add {row['add']:,.0f}/s; ms none {row['none']:.2f} "
                f"selective {row['selective']:.2f} broad {row['broad']:.2f} "
                f"(queries {row['none_q']}/{row['selective_q']}/{row['broad_q']})",
                file=sys.stderr,
                flush=True,
            )
    print(f"k=10, dim={args.dim}, median of up to {args.queries} queries; (n x) = time relative to the exact store")
    print(table(rows))


if __name__ == "__main__":
    main()
