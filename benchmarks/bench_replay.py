"""Replay and evaluation cost on LoCoMo against pure encoding, warm against cold, a sweep against one run.

    python benchmarks/bench_replay.py [--conversations 10] [--points 20] [--engines local processes ray]

Targets (issue 7): cold replay + evaluation <= 1.1x the pure encode time of the same texts; a warm
replay (cached embeddings) <= 0.1x cold; a 20-point decay sweep <= 2x one cold run (issue 16), timed on
each engine asked for: points one after another here, in worker processes forked from this one (one per
CPU), or as tasks on a local Ray with this machine's CPUs (its start-up included). Each sweep is then run
again on its now warm cache and set against the warm run:
that ratio leaves out the encoding, which both cold figures share. The sweep's points differ only in the
decay factor, so they share one replay until their prune decisions part (``replay_shared``). ranx compiles
its numba kernels once per process (about 20 s here); it is warmed up before the timings and reported on
its own line, since every later evaluation in the process reuses the compiled code.

    python benchmarks/bench_replay.py --backends torch onnx-int8 [--experiment experiments/default.toml]

The encoder backends instead (issue 40): ``make run``'s experiment run cold (an empty embedding cache; the
model loaded and exported before the timing, on lines of their own) with each backend, in turn. Printed: each
run's seconds and speed-up over the first backend, and each system's session and turn R@10 beside the first
backend's. The bar for a new default: 2x faster, every R@10 within 0.005.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pandas as pd  # noqa: E402

from openclaw_lab.embedding import BACKENDS, Embedder, EmbeddingCache  # noqa: E402
from openclaw_lab.harness.config import ExperimentConfig  # noqa: E402
from openclaw_lab.engines import LocalEngine, ProcessEngine, RayEngine  # noqa: E402
from openclaw_lab.harness.experiment import load_benchmark, run_experiment  # noqa: E402
from openclaw_lab.evaluation.metrics import evaluate_run  # noqa: E402
from openclaw_lab.replay.conversation import memory_units  # noqa: E402
from openclaw_lab.harness.sweep import run_sweep  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=10)
    parser.add_argument("--points", type=int, default=20)
    parser.add_argument("--engines", nargs="+", default=["local"], choices=["local", "processes", "ray"])
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, help="compare encoder backends instead")
    parser.add_argument("--experiment", default=str(ROOT / "experiments" / "default.toml"))
    args = parser.parse_args()
    if args.backends:
        compare_backends(ExperimentConfig.from_toml(args.experiment), args.backends)
        return
    sweep_config = ExperimentConfig.from_toml(ROOT / "experiments" / "locomo-decay-sweep.toml")
    config = sweep_config.with_value("consolidation.law_params.daily", 0.9)
    benchmark = load_benchmark(config.dataset).subset(limit=args.conversations)
    texts = [r["content"] for c in benchmark.conversations for s in c.sessions for r in memory_units(s, "turn", c.id)]
    texts += [q.text for q in benchmark.questions]

    jit, _ = timed(lambda: evaluate_run({"q": {"a": 1}}, {"q": {"a": 1.0}}, ks=(1, 10)))
    model = Embedder(cache=False)
    model.encode_uncached(texts[:64])  # load and warm the model outside the timings
    encode, _ = timed(lambda: model.encode_uncached(texts))

    cache = EmbeddingCache(Path(tempfile.mkdtemp()) / "cache.sqlite")
    embedder = Embedder(cache=cache)
    embedder._model = model.st_model  # the same loaded weights; the cache starts empty
    run = lambda: run_experiment(config, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)  # noqa: E731
    cold, _ = timed(run)
    warm, _ = timed(run)
    grid = sweep_config.sweep["consolidation.law_params.daily"][: args.points]
    sweep = sweep_config.__class__.from_dict({**sweep_config.to_dict(), "sweep": {"consolidation.law_params.daily": grid}})
    sweeps = []
    for name in args.engines:
        fresh = Embedder(cache=EmbeddingCache(Path(tempfile.mkdtemp()) / "cache.sqlite"))
        fresh._model = model.st_model
        engine = {"local": LocalEngine, "processes": ProcessEngine, "ray": RayEngine}[name]()
        for state in ("cold", "warm"):  # warm: the same sweep again, every text now in the cache
            swept, _ = timed(lambda: run_sweep(sweep, results_dir=None, embedder=fresh, benchmark=benchmark,
                                               progress=False, engine=engine))  # fmt: skip
            base = cold if state == "cold" else warm
            sweeps.append((f"{len(grid)}-point decay sweep, {state}, {name}", swept, swept / base))

    print(f"LoCoMo: {len(benchmark.conversations)} conversations, {len(texts)} texts (turns + questions)")
    print(f"ranx numba warm-up (once per process): {jit:.1f} s")
    rows = [("pure encode of the same texts", encode, None), ("cold replay + evaluation", cold, cold / encode),
            ("warm replay + evaluation", warm, warm / cold), *sweeps]  # fmt: skip
    print(f"{'':<40}{'seconds':>9}  ratio")
    for name, seconds, ratio in rows:
        print(f"{name:<40}{seconds:>9.1f}  " + ("" if ratio is None else f"{ratio:.2f}"))
    print("ratios: cold/encode (target <= 1.1), warm/cold (target <= 0.1), cold sweep/cold run (target <= 2); "
          "warm sweep/warm run: what the points cost beyond encoding")


def compare_backends(config: ExperimentConfig, backends: list[str], bar: float = 0.005) -> None:
    benchmark = load_benchmark(config.dataset)
    jit, _ = timed(lambda: evaluate_run({"q": {"a": 1}}, {"q": {"a": 1.0}}, ks=(1, 10)))
    print(f"{config.name}: {len(benchmark.conversations)} conversations, {len(benchmark.questions)} questions; "
          f"ranx numba warm-up {jit:.1f} s")
    seconds, recall = {}, {}
    for backend in backends:
        embedder = Embedder(backend=backend, cache=EmbeddingCache(Path(tempfile.mkdtemp()) / "cache.sqlite"))
        ready, _ = timed(lambda: embedder.encode_uncached(["load the model, export it once"], progress=False))
        print(f"{backend}: model loaded (and exported, the first time on this machine) in {ready:.1f} s")
        point = config.with_value("embedding.backend", backend)
        seconds[backend], result = timed(lambda: run_experiment(point, results_dir=None, embedder=embedder,
                                                                benchmark=benchmark, progress=False))  # fmt: skip
        recall[backend] = result.table(["session.recall@10", "turn.recall@10"])
    first = backends[0]
    print(f"\ncold run, empty embedding cache\n{'backend':<12}{'seconds':>9}  speed-up over {first}")
    for backend in backends:
        print(f"{backend:<12}{seconds[backend]:>9.1f}  {seconds[first] / seconds[backend]:.2f}")
    for backend in backends[1:]:
        delta = recall[backend] - recall[first]
        table = pd.concat({first: recall[first], backend: recall[backend], "change": delta}, axis=1)
        print(f"\nR@10, {first} against {backend}\n{table.round(4).to_string()}")
        worst = float(delta.abs().max().max())
        speed = seconds[first] / seconds[backend]
        met = speed >= 2 and worst <= bar
        print(f"{backend}: {speed:.2f}x faster, largest R@10 change {worst:.4f}: the bar (2x, {bar}) is "
              f"{'met' if met else 'not met'}")


if __name__ == "__main__":
    main()
