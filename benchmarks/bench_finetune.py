"""Fine-tuning MiniLM: speed and peak memory by text length, the loss at once or gradient-cached.

Each case runs in a fresh process, so its peak RSS is its own. A case fits ``--triplets`` synthetic
triplets (batch 32, one epoch, CPU) whose texts have ``words`` random words each; 200 words reach
MiniLM's 256-token window, as a whole LongMemEval session does. ``mini_batch`` is ``FineTuner``'s
``mini_batch_size`` (none: ``MultipleNegativesRankingLoss`` over the whole batch at once). Prints a
markdown table: seconds, triplets a second, the ratio of time to the uncached case of the same length,
peak RSS, and the encoding of one text of that length through the fitted copy.

    .venv/bin/python benchmarks/bench_finetune.py                    # 20 and 200 words; none and 8
    .venv/bin/python benchmarks/bench_finetune.py --words 200 --mini-batches 0 4 8 --triplets 64
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def one_case(n: int, words: int, mini_batch: int | None) -> dict:
    from openclaw_lab.embedding import Embedder
    from openclaw_lab.retrieval.finetune import FineTuner, Triplet

    rng = random.Random(0)
    vocabulary = [f"w{i}" for i in range(5000)]

    def text() -> str:
        return " ".join(rng.choice(vocabulary) for _ in range(words))

    triplets = [Triplet(text(), text(), text()) for _ in range(n)]
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        tuner = FineTuner(folder=folder, mini_batch_size=mini_batch)
        fitted = tuner.fit(Embedder(cache=False), triplets, progress=False)
        seconds = time.perf_counter() - start
        fitted.encode(["warm up"])
        start = time.perf_counter()
        for _ in range(20):
            fitted.encode_uncached([text()])
        text_ms = (time.perf_counter() - start) / 20 * 1e3
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "rss_mb": rss_mb, "text_ms": text_ms}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triplets", type=int, default=96)
    parser.add_argument("--words", type=int, nargs="+", default=[20, 200])
    parser.add_argument("--mini-batches", type=int, nargs="+", default=[0, 8], help="0: the loss at once")
    args = parser.parse_args()
    print(f"{args.triplets} triplets, batch 32, one epoch, CPU\n")
    print("| words a text | mini-batch | seconds | triplets/s | time ratio | peak RSS MB | one text encoded, ms |")
    print("|--:|--:|--:|--:|--:|--:|--:|")
    for words in args.words:
        base = None
        for mini_batch in args.mini_batches:
            code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                    f"import bench_finetune as b; print(json.dumps(b.one_case({args.triplets}, {words}, "
                    f"{mini_batch or None!r})))")
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            row = json.loads(out.strip().splitlines()[-1])
            base = base or row["seconds"]
            print(f"| {words} | {mini_batch or 'none'} | {row['seconds']:.1f} | {args.triplets / row['seconds']:.1f} "
                  f"| {row['seconds'] / base:.2f} | {row['rss_mb']:.0f} | {row['text_ms']:.1f} |")


if __name__ == "__main__":
    main()
