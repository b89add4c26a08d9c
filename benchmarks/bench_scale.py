"""Memory at scale: 10k, 100k and 1M synthetic memories in the exact store, the SQLite store (what
``MemoryManager.open`` uses), chroma and BM25: add rate, peak RSS, query latency with and without
filters, and a log-log cost curve.

    .venv/bin/python benchmarks/bench_scale.py                                  # 10k, 100k, 1M
    .venv/bin/python benchmarks/bench_scale.py --sizes 10000 100000 --stores exact sqlite
    .venv/bin/python benchmarks/bench_scale.py --png results/figures/scale.png

Texts are the synthetic generator's turns (its 1M-turn output, for BM25); vectors are random unit
vectors (dense search time does not depend on what the vectors mean). Memories are made and added in
batches of 1,000, and each (store, size) cell runs in a process of its own, so that its peak RSS is the
store's and its index's (plus the generated conversations, about 300 MB at 1M turns, and the imports;
BM25 indexes one list, which it holds). chroma adds about 650 items/s here, so it is left out of the 1M cell unless asked
(``--chroma-max``). Targets (issue 16): 1M memories in <= 8 GiB RSS; filtered search on the default
store <= 2x the exact store at 100k.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see bench_stores: a threaded gemv spins on a small machine
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stores import BATCH, FILTERS, open_store, time_queries  # noqa: E402

from openclaw_lab.datasets.synthetic import generate  # noqa: E402
from openclaw_lab.model import MemoryItem  # noqa: E402

DIM = 384


def synthetic_items(n: int, seed: int = 0) -> Iterator[MemoryItem]:
    """``n`` turns of the synthetic generator as memories, made one at a time (a store holds them, not this
    benchmark): random unit vectors, 1% tagged "rare", importance uniform on 1..5 (``bench_stores``' filters)."""
    benchmark = generate(n, seed=seed)
    rng = np.random.default_rng(seed)
    i = 0
    for conversation in benchmark.conversations:
        for session in conversation.sessions:
            for j, turn in enumerate(session.turns):
                vector = rng.normal(size=DIM).astype(np.float32)
                yield MemoryItem.new(
                    f"{turn.speaker}: {turn.text}", id=f"m{i}", now=session.started_at + timedelta(seconds=30 * j),
                    importance=int(rng.integers(1, 6)), embedding=vector / np.linalg.norm(vector),
                    tags=("rare",) if i % 100 == 0 else (), session_id=session.id)  # fmt: skip
                i += 1


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def one_cell(kind: str, n: int, queries: int, budget: float) -> dict:
    """Build and query one store of ``n`` memories in this process (the time to make the items is not counted)."""
    row: dict = {"store": kind, "n": n}
    with tempfile.TemporaryDirectory(prefix=f"scale-{kind}-") as tmp:
        if kind == "bm25":  # its index is built from the whole list at once
            from openclaw_lab.retrieval.bm25 import BM25Retriever

            items = list(synthetic_items(n))
            retriever = BM25Retriever()
            start = time.perf_counter()
            retriever.index(items)
            row["add_per_s"] = n / (time.perf_counter() - start)
            times = []
            for item in items[:: max(1, n // queries)][:queries]:
                start = time.perf_counter()
                retriever.search(item.content, 10)
                times.append((time.perf_counter() - start) * 1000)
            row["none_ms"] = float(np.median(times))
        else:
            store = open_store(kind, Path(tmp))
            adding = 0.0
            stream = synthetic_items(n)
            while batch := list(itertools.islice(stream, BATCH)):
                started = time.perf_counter()
                store.upsert(batch)
                adding += time.perf_counter() - started
            started = time.perf_counter()
            if hasattr(store, "save"):
                store.save(Path(tmp))
            row["add_per_s"] = n / (adding + time.perf_counter() - started)
            vectors = np.random.default_rng(1).normal(size=(queries, DIM)).astype(np.float32)
            for name, memory_filter in FILTERS.items():
                row[f"{name}_ms"], _ = time_queries(store, vectors, memory_filter, budget)
            getattr(store, "close", lambda: None)()
    row["peak_rss_mb"] = peak_rss_mb()
    return row


def run_cell(kind: str, n: int, args: argparse.Namespace) -> dict:
    command = [sys.executable, __file__, "--one", kind, str(n), "--queries", str(args.queries), "--budget", str(args.budget)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} at {n:,}: {done.stderr.strip().splitlines()[-1] if done.stderr else done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for n, kind in enumerate(dict.fromkeys(row["store"] for row in rows)):
        mine = [row for row in rows if row["store"] == kind]
        sizes, color = [row["n"] for row in mine], f"C{n}"  # one colour per store in every panel
        axes[0].loglog(sizes, [1 / row["add_per_s"] * 1e6 for row in mine], "o-", color=color, label=kind)
        axes[1].loglog(sizes, [row["none_ms"] for row in mine], "o-", color=color, label=kind)
        if "selective_ms" in mine[0]:
            axes[1].loglog(sizes, [row["selective_ms"] for row in mine], "x--", color=color, label=f"{kind}, 1% filter")
        axes[2].loglog(sizes, [row["peak_rss_mb"] for row in mine], "o-", color=color, label=kind)
    for ax, title in zip(axes, ("add: µs per memory", "query: ms (top 10)", "peak RSS: MB")):
        ax.set_title(title)
        ax.set_xlabel("memories")
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--stores", nargs="+", default=["exact", "sqlite", "chroma", "bm25"])
    parser.add_argument("--chroma-max", type=int, default=100_000, help="largest size chroma is run at")
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--budget", type=float, default=20.0, help="seconds of queries per cell at most")
    parser.add_argument("--png", type=Path, default=Path("results/figures/scale.png"))
    parser.add_argument("--one", nargs=2, metavar=("STORE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_cell(args.one[0], int(args.one[1]), args.queries, args.budget)))
        return
    rows = []
    for n in args.sizes:
        for kind in args.stores:
            if kind == "chroma" and n > args.chroma_max:
                continue
            rows.append(run_cell(kind, n, args))
            row = rows[-1]
            print(f"{kind:>7} n={n:>9,}: add {row['add_per_s']:,.0f}/s, peak RSS {row['peak_rss_mb']:,.0f} MB, "
                  f"query ms {row['none_ms']:.2f}" + (f", 1% filter {row['selective_ms']:.2f}, broad {row['broad_ms']:.2f}"
                  if "selective_ms" in row else ""), file=sys.stderr, flush=True)  # fmt: skip
    exact = {row["n"]: row for row in rows if row["store"] == "exact"}
    print("| store | memories | add (memories/s) | peak RSS (MB) | query ms | 1% filter ms (× exact) | broad filter ms (× exact) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        cells = []
        for name in ("selective", "broad"):
            if f"{name}_ms" not in row:
                cells.append("")
                continue
            base = exact.get(row["n"])
            times = f" ({row[f'{name}_ms'] / base[f'{name}_ms']:.1f}×)" if base and row is not base else ""
            cells.append(f"{row[f'{name}_ms']:.2f}{times}")
        print(f"| {row['store']} | {row['n']:,} | {row['add_per_s']:,.0f} | {row['peak_rss_mb']:,.0f} | "
              f"{row['none_ms']:.2f} | {cells[0]} | {cells[1]} |")  # fmt: skip
    plot(rows, args.png)
    args.png.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    print(f"log-log cost curves: {args.png} (figures: {args.png.with_suffix('.json').name})")


if __name__ == "__main__":
    main()
