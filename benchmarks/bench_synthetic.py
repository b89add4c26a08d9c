"""Synthetic generation speed and memory by size, and LongMemEval streaming memory against json.load.

Each generation size runs in a fresh process so its peak RSS is its own. Prints markdown tables:
seconds, microseconds per turn, the ratio of time per turn to the smallest size's (linear ≈ 1), and peak RSS;
then, for a LongMemEval-format file written from a synthetic benchmark, the time and traced peak memory of
``iter_longmemeval`` and ``load_longmemeval`` against ``json.load`` of the same file.

    .venv/bin/python benchmarks/bench_synthetic.py                     # 10k, 100k, 1M turns; 20 MB file
    .venv/bin/python benchmarks/bench_synthetic.py --sizes 100000 --conversations 1 --lme-mb 0
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from openclaw_lab.datasets import generate, iter_longmemeval, load_longmemeval


def one_size(n_turns: int, n_conversations: int | None) -> dict:
    start = time.perf_counter()
    bench = generate(n_turns, n_conversations=n_conversations)
    seconds = time.perf_counter() - start
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"n_turns": n_turns, "seconds": seconds, "questions": len(bench.questions), "rss_mb": rss_mb,
            "conversations": len(bench.conversations)}


def generation_table(sizes: list[int], n_conversations: int | None) -> None:
    print("| turns | conversations | questions | seconds | µs/turn | ratio to smallest | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    base = None
    for n in sizes:
        code = f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import bench_synthetic as b; "
        code += f"print(json.dumps(b.one_size({n}, {n_conversations!r})))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        row = json.loads(out.strip().splitlines()[-1])
        per_turn = row["seconds"] / n * 1e6
        base = base or per_turn
        print(f"| {n:,} | {row['conversations']:,} | {row['questions']:,} | {row['seconds']:.2f} | {per_turn:.1f} "
              f"| {per_turn / base:.2f} | {row['rss_mb']:.0f} |")


def write_longmemeval(path: Path, megabytes: float) -> int:
    """Write synthetic conversations as LongMemEval records (one per question) until the file is large enough."""
    size, seed, first = 0, 0, True
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        while size < megabytes * 1e6:
            bench = generate(2000, seed=seed)
            seed += 1
            for conversation in bench.conversations:
                questions = [q for q in bench.questions if q.conversation_id == conversation.id]
                for question in questions[:10]:
                    evidence = set(question.evidence_turn_ids)
                    record = {
                        "question_id": question.id, "question_type": question.category, "question": question.text,
                        "answer": question.answer, "question_date": question.asked_at.strftime("%Y/%m/%d (%a) %H:%M"),
                        "haystack_dates": [s.started_at.strftime("%Y/%m/%d (%a) %H:%M") for s in conversation.sessions],
                        "haystack_session_ids": [s.id for s in conversation.sessions],
                        "haystack_sessions": [
                            [{"role": t.speaker, "content": t.text, "has_answer": t.id in evidence} for t in s.turns]
                            for s in conversation.sessions
                        ],
                        "answer_session_ids": list(question.evidence_session_ids),
                    }
                    text = ("" if first else ",") + json.dumps(record)
                    first = False
                    out.write(text)
                    size += len(text)
        out.write("]")
    return path.stat().st_size


def streaming_table(megabytes: float) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "longmemeval_bench.json"
        size = write_longmemeval(path, megabytes)
        rows = []
        readers = (
            ("iter_longmemeval", lambda: sum(1 for _ in iter_longmemeval(path))),
            ("load_longmemeval", lambda: len(load_longmemeval(path).questions)),
            ("json.load", lambda: len(json.load(open(path, encoding="utf-8")))),
        )
        for name, run in readers:
            start = time.perf_counter()
            count = run()
            seconds = time.perf_counter() - start
            tracemalloc.start()
            run()
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            rows.append((name, count, seconds, peak))
    print(f"\nLongMemEval-format file: {size / 1e6:.1f} MB (seconds untraced; peak from a second, traced run)\n")
    print("| reader | questions | seconds | traced peak MB | peak / file size |")
    print("|---|---|---|---|---|")
    for name, count, seconds, peak in rows:
        print(f"| {name} | {count:,} | {seconds:.2f} | {peak / 1e6:.1f} | {peak / size:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--conversations", type=int, default=None, help="default: one per 1,000 turns")
    parser.add_argument("--lme-mb", type=float, default=20.0, help="size of the streamed file; 0 skips it")
    args = parser.parse_args()
    generation_table(args.sizes, args.conversations)
    if args.lme_mb > 0:
        streaming_table(args.lme_mb)


if __name__ == "__main__":
    main()
