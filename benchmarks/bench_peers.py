"""Ingest and query cost of our systems and the other memory systems, cold against cold and warm against warm.

    python benchmarks/bench_peers.py [--conversations 2] [--systems dense bm25 mem0 mempalace-raw mempalace-hybrid]

Each system runs alone, in an experiment of its own over the same LoCoMo conversations (the synthetic set
when LoCoMo is not on the data path), with the same all-MiniLM-L6-v2 weights:

- **cold**: an empty embedding cache. Our systems encode every turn and question; MemPalace embeds through
  our local endpoint, which reads that same empty cache; mem0 embeds with its own copy of the model. Our
  model is loaded once before the timings (its load time is printed on its own line); mem0 loads its copy
  inside its ingest, so that load is charged to it.
- **warm**: the same run again on the cache the cold run filled. mem0 has no embedding cache, so its warm run
  costs what its cold one does.

Printed: ingest seconds per 1,000 turns and milliseconds per question, each as a ratio to our dense system in
the same state. The figures are also written to ``results/figures/bench_peers.json``, which the peers page of
the docs cites.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pandas as pd  # noqa: E402

from openclaw_lab.embedding import Embedder, EmbeddingCache  # noqa: E402
from openclaw_lab.harness.config import ExperimentConfig  # noqa: E402
from openclaw_lab.harness.experiment import load_benchmark, run_experiment  # noqa: E402
from openclaw_lab.peers import protocol  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SYSTEMS = {
    "dense": {"strategy": "dense"},
    "bm25": {"strategy": "bm25"},
    "mem0": {"strategy": "mem0"},
    "mempalace-raw": {"strategy": "mempalace", "params": {"mode": "raw"}},
    "mempalace-hybrid": {"strategy": "mempalace", "params": {"mode": "hybrid"}},
}


def config_for(system: str, conversations: int) -> ExperimentConfig:
    return ExperimentConfig.from_dict({
        "name": f"bench-peers-{system}",
        "dataset": {"name": "locomo", "limit": conversations, "fallback": "synthetic",
                    "fallback_params": {"n_turns": 600 * conversations, "n_conversations": conversations, "seed": 0}},
        "memory": {"store": "exact", "unit": "turn", "simulate_access": False},
        "consolidation": {"enabled": False},
        "systems": [{"name": system, **SYSTEMS[system]}],
        "metrics": {"k": [1, 10]},
    })  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    args = parser.parse_args()
    missing = [s for s in args.systems if SYSTEMS[s]["strategy"] in ("mem0", "mempalace")
               and not protocol.installed(SYSTEMS[s]["strategy"])]  # fmt: skip
    if missing:
        raise SystemExit(f'not installed: {", ".join(missing)}; run pip install "openclaw-lab[mem0,mempalace]"')
    benchmark = load_benchmark(config_for("dense", args.conversations).dataset)
    turns = sum(len(s.turns) for c in benchmark.conversations for s in c.sessions)
    print(f"{benchmark.name}: {len(benchmark.conversations)} conversations, {turns} turns, "
          f"{len(benchmark.questions)} questions")

    started = time.perf_counter()
    Embedder(cache=False).st_model  # noqa: B018 - loaded once, outside the runs' timings; every embedder shares it
    print(f"our model's load, outside the timings: {time.perf_counter() - started:.1f} s")

    rows = []
    for system in args.systems:
        with tempfile.TemporaryDirectory(prefix="bench-peers-") as folder:
            embedder = Embedder(cache=EmbeddingCache(Path(folder) / "cache.sqlite"))
            for state in ("cold", "warm"):
                result = run_experiment(config_for(system, args.conversations), results_dir=None, embedder=embedder,
                                        benchmark=benchmark, progress=False)  # fmt: skip
                cost = result.costs.loc[system]
                rows.append({"system": system, "state": state, "ingest_s_per_1k_turns": cost["ingest_s_per_1k_turns"],
                             "query_ms": cost["query_ms"], "peak_rss_mib": cost["peak_rss_mib"],
                             "turn.recall@10": result.metrics[system]["turn.recall@10"]})  # fmt: skip
                print(f"  {system:<17} {state}: {rows[-1]['ingest_s_per_1k_turns']:7.1f} s / 1k turns, "
                      f"{rows[-1]['query_ms']:7.1f} ms / question", flush=True)

    table = pd.DataFrame(rows).set_index(["state", "system"]).sort_index()
    for state in ("cold", "warm"):
        dense = table.loc[(state, "dense")] if (state, "dense") in table.index else None
        part = table.loc[state].copy()
        if dense is not None:
            part["ingest × dense"] = part["ingest_s_per_1k_turns"] / dense["ingest_s_per_1k_turns"]
            part["query × dense"] = part["query_ms"] / dense["query_ms"]
        print(f"\n{state} (empty embedding cache)" if state == "cold" else f"\n{state} (the cache the cold run filled)")
        print(part.round(2).to_string())
    out = ROOT / "results" / "figures" / "bench_peers.json"
    out.write_text(json.dumps({"dataset": benchmark.name, "sha256": benchmark.sha256, "turns": turns,
                               "questions": len(benchmark.questions), "rows": rows}, indent=1))  # fmt: skip
    print(f"\nwritten: {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
