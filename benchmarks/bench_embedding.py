"""Encode throughput: raw sentence-transformers against the manager's add path, a cached re-add, the
encoder backends (torch, onnx, onnx-int8) with what each changes in the gated metrics of a LoCoMo run,
and session-long texts read in windows against truncated at the model's window.

    python benchmarks/bench_embedding.py [--texts 2000] [--sessions 100] [--experiment experiments/ci-gate.toml]
    python benchmarks/bench_embedding.py --grid [--threads 1 2] [--batch-sizes 16 32 64 128]

``--grid`` times only the settings a bigger machine would change: threads (torch's; for onnx, texts run at once)
and torch's batch size, for each backend, as texts/s and the ratio to the defaults (every core, batch 64).

Targets (issue 2): the manager's overhead over raw encoding at most 10%; a cached re-add at least
20x faster than a cold one. Issue 16: another backend becomes the default only if it is >= 1.5x faster
and loses <= 0.005 on every gated metric.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pandas as pd  # noqa: E402

from openclaw_lab.clock import SimulatedClock  # noqa: E402
from openclaw_lab.datasets.synthetic import generate  # noqa: E402
from openclaw_lab.embedding import BACKENDS, Embedder, EmbeddingCache  # noqa: E402
from openclaw_lab.harness.config import ExperimentConfig  # noqa: E402
from openclaw_lab.harness.experiment import load_benchmark, run_experiment  # noqa: E402
from openclaw_lab.manager import MemoryManager  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def chat_texts(n: int) -> list[str]:
    benchmark = generate(n * 10, seed=11)  # turns repeat across conversations: draw more, keep n distinct
    texts = [f"{t.speaker}: {t.text}" for c in benchmark.conversations for s in c.sessions for t in s.turns]
    return list(dict.fromkeys(texts))[:n]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sessions", type=int, default=100, help="session-long texts for the long_texts timing")
    parser.add_argument("--experiment", type=Path, default=ROOT / "experiments" / "ci-gate.toml")
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument("--grid", action="store_true", help="time threads x batch sizes only")
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[16, 32, 64, 128])
    args = parser.parse_args()
    texts = chat_texts(args.texts)
    if args.grid:
        return settings_grid(texts, args.backends, args.threads, args.batch_sizes, args.repeats)
    embedder = Embedder(cache=False)
    embedder.encode_uncached(texts[:64])  # load the model and warm up outside the timings
    records = [{"content": t, "session_id": "bench"} for t in texts]
    clock = SimulatedClock(generate(100).conversations[0].sessions[0].started_at)
    raws, colds = [], []
    with tempfile.TemporaryDirectory() as folder:
        for trial in range(args.repeats):  # alternate the two paths so that machine load hits both alike
            raws.append(timed(lambda: embedder.st_model.encode(texts, batch_size=64, normalize_embeddings=True)))
            cold_embedder = Embedder(cache=EmbeddingCache(f"{folder}/cache-{trial}.sqlite"))
            cold_embedder._model = embedder.st_model  # same weights, empty cache
            memory = MemoryManager.open(f"{folder}/cold-{trial}", embedder=cold_embedder, clock=clock)
            colds.append(timed(lambda: memory.add_many(records)))
        warm_memory = MemoryManager.open(f"{folder}/warm", embedder=cold_embedder, clock=clock)
        warm = timed(lambda: warm_memory.add_many(records))
    raw, cold = min(raws), min(colds)
    n = len(texts)
    print(f"texts: {n} (distinct chat-like turns from the synthetic generator); best of {args.repeats} alternating trials")
    print(f"{'path':<38}{'seconds':>9}{'texts/s':>10}")
    for name, seconds in (("raw sentence-transformers encode", raw), ("manager.add_many, cold cache", cold),
                          ("manager.add_many, warm cache", warm)):  # fmt: skip
        print(f"{name:<38}{seconds:>9.2f}{n / seconds:>10.0f}")
    print(f"manager cold / raw encode: {cold / raw:.3f}  (target <= 1.10)")
    print(f"cold / warm re-add:        {cold / warm:.1f}x  (target >= 20x)")
    compare_long_texts(texts, args.sessions, args.repeats)
    compare_backends(texts, args.backends, args.experiment, args.repeats)


def settings_grid(texts: list[str], backends: list[str], threads: list[int], batch_sizes: list[int],
                  repeats: int) -> None:
    """texts/s per backend, thread count (torch's threads; for onnx, texts run at once) and batch size (torch only:
    onnx runs each text alone), best of ``repeats``, against the defaults."""
    rows = []
    for backend in backends:
        loaded = Embedder(cache=False, backend=backend)
        loaded.encode_uncached(texts[:64], progress=False)  # load (and export) once, outside the timings
        for count in [None, *threads]:
            for batch in sorted({64, *batch_sizes}) if backend == "torch" else [64]:
                encoder = Embedder(cache=False, backend=backend, threads=count, batch_size=batch)
                encoder._model = loaded._model  # the same loaded weights (an onnx session is made per thread count)
                best = min(timed(lambda: encoder.encode_uncached(texts, progress=False)) for _ in range(repeats))
                rows.append({"backend": backend, "threads": count or "default", "batch": batch,
                             "texts/s": len(texts) / best})  # fmt: skip
    table = pd.DataFrame(rows)
    default = table[(table["threads"] == "default") & (table["batch"] == 64)].set_index("backend")["texts/s"]
    table["vs default"] = (table["texts/s"] / table["backend"].map(default)).round(2)
    print(f"{len(texts)} texts, best of {repeats}; default: torch's own thread count ({os.cpu_count()} cores here), "
          "batch 64")
    print(table.round({"texts/s": 1}).to_string(index=False))


def compare_long_texts(texts: list[str], sessions: int, repeats: int) -> None:
    """Sessions/s read in windows (the default) against truncated, on texts of 40 turns each."""
    per_session = 40
    long = [" ".join(texts[(i * per_session + j) % len(texts)] for j in range(per_session)) for i in range(sessions)]
    encoders = {mode: Embedder(cache=False, long_texts=mode) for mode in ("truncate", "windows")}
    encoders["windows"]._model = encoders["truncate"].st_model  # the same loaded weights
    seconds: dict[str, list[float]] = {mode: [] for mode in encoders}
    for _ in range(repeats):
        for mode, encoder in encoders.items():
            seconds[mode].append(timed(lambda: encoder.encode_uncached(long, progress=False)))
    windowed = encoders["windows"]
    tokens = sum(windowed.count_tokens(text) for text in long) / sessions
    windows = sum(len(windowed.windows(text)) for text in long) / sessions
    print(f"\nlong texts: {sessions} sessions of {per_session} turns ({tokens:.0f} tokens, {windows:.1f} windows "
          f"each), best of {repeats}")
    for mode in encoders:
        print(f"{mode:<10}{sessions / min(seconds[mode]):>10.1f} sessions/s")
    print(f"windows / truncate time: {min(seconds['windows']) / min(seconds['truncate']):.2f}x")


def compare_backends(texts: list[str], backends: list[str], experiment: Path, repeats: int) -> None:
    """texts/s of each backend (best of ``repeats``, alternating) and its gated metrics on ``experiment``."""
    encoders = {name: Embedder(cache=False, backend=name) for name in backends}
    for encoder in encoders.values():
        encoder.encode_uncached(texts[:64])  # load, export once, warm up
    seconds = {name: [] for name in backends}
    for _ in range(repeats):
        for name, encoder in encoders.items():
            seconds[name].append(timed(lambda: encoder.encode_uncached(texts, progress=False)))
    config = ExperimentConfig.from_toml(experiment)
    benchmark = load_benchmark(config.dataset)
    rows = {}
    for name in backends:  # each backend's vectors in the default cache, under its own key
        result = run_experiment(config, results_dir=None, embedder=Embedder(backend=name), benchmark=benchmark, progress=False)
        gated = {f"{system}.{metric}": result.metrics[system][metric] for system in result.metrics
                 for metric in config.metrics.gate if metric in result.metrics[system]}  # fmt: skip
        rows[name] = {"texts/s": len(texts) / min(seconds[name]), **gated}
    table = pd.DataFrame(rows).T
    base = table.loc[backends[0]]
    speedup = table["texts/s"] / base["texts/s"]
    loss = (base.drop("texts/s") - table.drop(columns="texts/s")).max(axis=1)  # the largest drop on any gated metric
    summary = pd.DataFrame({"texts/s": table["texts/s"].round(1), "speed-up": speedup.round(2), "largest loss": loss.round(4)})
    print(f"\nbackends: {len(texts)} texts, best of {repeats}; gated metrics of {experiment.name} "
          f"({len(benchmark.conversations)} conversations, {len(benchmark.questions)} questions)")
    print(summary.to_string())
    print(table.drop(columns="texts/s").T.round(4).to_string())
    print("a backend may become the default if speed-up >= 1.5 and largest loss <= 0.005")


if __name__ == "__main__":
    main()
