"""Encode throughput: raw sentence-transformers against the manager's add path, and a cached re-add.

    python benchmarks/bench_embedding.py [--texts 2000]

Targets (issue 2): the manager's overhead over raw encoding at most 10%; a cached re-add at least
20x faster than a cold one.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from openclaw_lab.clock import SimulatedClock  # noqa: E402
from openclaw_lab.datasets.synthetic import generate  # noqa: E402
from openclaw_lab.embedding import Embedder, EmbeddingCache  # noqa: E402
from openclaw_lab.manager import MemoryManager  # noqa: E402


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
    args = parser.parse_args()
    texts = chat_texts(args.texts)
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


if __name__ == "__main__":
    main()
