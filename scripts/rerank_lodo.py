"""Leave one dataset out: does a reranker fitted on other kinds of history beat plain CombSUM on this one?

    python scripts/rerank_lodo.py [--out results/rerank-lodo]

Four kinds of history, two datasets: LoCoMo (the 8 conversations outside the CI gate) with turns and with
whole sessions as memory units, and the synthetic generator (two seeds) with turns and with sessions. For
each dataset, a reranker over the shipped model's sources (dense, BM25, hybrid-context; no length feature)
is fitted on the other dataset's two kinds only, then scored on both kinds of the held-out dataset beside
CombSUM (dense + BM25, min-max, 1,000 candidates: the best unlearned fusion on the held-out LongMemEval-format
set), the same reranker fused with CombSUM by RRF (a trial, registered here only) and the shipped `rerank`.
Each run is a normal run folder under ``--out``; docs/results/out-of-domain.md reads them.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from openclaw_lab.datasets import generate, load_locomo
from openclaw_lab.embedding import Embedder
from openclaw_lab.harness.build import build
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.crossfit import training_queries
from openclaw_lab.harness.experiment import questions_by_conversation, replay_benchmark, run_experiment
from openclaw_lab.retrieval.learned import LearnedReranker

HELD_OUT = ("conv-26", "conv-30")  # the CI gate's conversations: never fitted on
DEPTH = 50
SOURCES = ("dense", "bm25", "context")
UNITS = ("turn", "session")


SYNTHETIC = {"name": "synthetic",
             "params": {"n_turns": 8000, "n_conversations": 8, "seed": 301, "duplicate_rate": 0.03}}  # fmt: skip


def datasets() -> dict[str, tuple[dict, object]]:
    """Each dataset's config table and its benchmark."""
    locomo = load_locomo()
    kept = [c.id for c in locomo.conversations if c.id not in HELD_OUT]
    return {"locomo": ({"name": "locomo", "conversations": kept}, locomo.subset(kept)),
            "synthetic": (SYNTHETIC, generate(**SYNTHETIC["params"]))}  # fmt: skip


def config(name: str, unit: str, systems: list[dict], dataset: dict) -> ExperimentConfig:
    levels = ["turn", "session"] if unit == "turn" else ["session"]
    return ExperimentConfig.from_dict({
        "name": name, "dataset": dataset, "memory": {"store": "exact", "unit": unit},
        "consolidation": {"enabled": True, "interval_hours": 24, "law": "none"},
        "systems": systems, "metrics": {"k": [1, 5, 10], "levels": levels, "gate": [f"{levels[-1]}.recall@10"]},
    })  # fmt: skip


def rerank_combsum(embedder=None, clock=None, model=None):
    """The reranker's ranking and CombSUM's, fused by RRF: a trial."""
    from openclaw_lab.retrieval.fusion import FusedRetriever, hybrid
    from openclaw_lab.retrieval.rerank import default_rerank

    combsum = hybrid(embedder, method="wsum", candidates=1000)
    return FusedRetriever([default_rerank(embedder, clock, model=model), combsum], method="rrf", candidates=100)


def main() -> None:
    from openclaw_lab.harness.registry import retrievers

    retrievers.register("rerank-combsum", rerank_combsum)
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("results/rerank-lodo"))
    args = parser.parse_args()
    embedder = Embedder()
    data = datasets()
    queries = {}
    for name, (table, bench) in data.items():
        for unit in UNITS:
            replays = replay_benchmark(bench, build(config("fit", unit, [{"name": "d", "strategy": "dense"}], table),
                                                    embedder=embedder).replay, embedder, Path(tempfile.mkdtemp()))
            found = training_queries(replays, questions_by_conversation(bench), embedder, DEPTH, SOURCES)
            queries[name, unit] = [q for q in found.values() if q.relevant]
            print(f"{name}/{unit}: {len(queries[name, unit])} training questions", flush=True)
    models = Path(tempfile.mkdtemp())
    for held_out, (table, bench) in data.items():
        fitted = [q for (name, _), qs in queries.items() if name != held_out for q in qs]
        model = LearnedReranker(sources=SOURCES).fit(fitted, provenance={"lodo_held_out": held_out})
        path = model.save(models / f"without-{held_out}.json")
        for unit in UNITS:
            systems = [
                {"name": "combsum", "strategy": "hybrid", "params": {"method": "wsum", "candidates": 1000}},
                {"name": f"rerank-without-{held_out}+combsum", "strategy": "rerank-combsum",
                 "params": {"model": str(path)}},
                {"name": "rerank-shipped", "strategy": "rerank"},
                {"name": f"rerank-without-{held_out}", "strategy": "rerank", "params": {"model": str(path)}},
            ]
            if held_out == "locomo":
                systems = [s for s in systems if s["name"] != "rerank-shipped"]  # fitted on these conversations
            result = run_experiment(config(f"lodo-{held_out}-{unit}", unit, systems, table), results_dir=args.out,
                                    embedder=embedder, benchmark=bench, progress=False)  # fmt: skip
            level = "turn" if unit == "turn" else "session"
            metrics = [f"{level}.hit_rate@5", f"{level}.recall_all@5", f"{level}.ndcg@10", f"{level}.recall@10"]
            print(f"\nheld out: {held_out}, {unit} units ({result.path})")
            print(result.table(metrics).round(4).to_string(), flush=True)


if __name__ == "__main__":
    main()
