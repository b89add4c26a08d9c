"""Leave one dataset out: does a reranker fitted on other kinds of history beat plain CombSUM on this one?

    python scripts/rerank_lodo.py [--out results/rerank-lodo]

Four kinds of history, two datasets: LoCoMo (the 8 conversations outside the CI gate) and the synthetic
generator (seed 301), each with turns and with whole sessions as memory units. For each dataset, two rerankers
are fitted on the other dataset's two kinds only, then scored on both kinds of the held-out dataset beside
CombSUM (dense + BM25, min-max, 1,000 candidates: the best unlearned fusion on the held-out LongMemEval-format
set):

- ``rerank-full``: the model shipped before issue 38 (dense, BM25 and context fused by RRF; every feature);
- ``rerank-portable``: the recipe shipped now (scripts/train_learned_reranker.py): CombSUM's top 50, each
  source's z-score, reciprocal rank and presence, nothing about the memory itself.

Each run is a normal run folder under ``--out``, the fitted models are in ``--out``/models, and
docs/results/out-of-domain.md reads them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from train_learned_reranker import SHIPPED, SYNTHETIC, UNITS, config, fitting_queries, locomo_table, synthetic_table

from openclaw_lab.embedding import Embedder
from openclaw_lab.harness.experiment import run_experiment
from openclaw_lab.retrieval.learned import LearnedReranker
from openclaw_lab.retrieval.rerank import COMBSUM

VARIANTS = {"rerank-full": {"sources": ("dense", "bm25", "context")}, "rerank-portable": SHIPPED}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=Path("results/rerank-lodo"))
    args = parser.parse_args()
    embedder = Embedder()
    data = {"locomo": locomo_table(), "synthetic": synthetic_table(SYNTHETIC)}
    queries = {(variant, name, unit): fitting_queries(table, bench, unit, embedder, options)
               for name, (table, bench) in data.items() for unit in UNITS
               for variant, options in VARIANTS.items()}  # fmt: skip
    models = args.out / "models"  # the runs' configs name these files
    for held_out, (table, bench) in data.items():
        systems = [{"name": "combsum", "strategy": "hybrid", "params": COMBSUM}]
        for variant, options in VARIANTS.items():
            fitted = [q for (v, name, _), qs in queries.items() if v == variant and name != held_out for q in qs]
            model = LearnedReranker(**options).fit(fitted, provenance={"lodo_held_out": held_out})
            path = model.save(models / f"{variant}-without-{held_out}.json")
            name = f"{variant}-without-{held_out}"
            systems.append({"name": name, "strategy": "rerank", "params": {"model": str(path)}})
        for unit in UNITS:
            result = run_experiment(config(f"lodo-{held_out}-{unit}", unit, systems, table), results_dir=args.out,
                                    embedder=embedder, benchmark=bench, progress=False)  # fmt: skip
            level = "turn" if unit == "turn" else "session"
            metrics = [f"{level}.hit_rate@5", f"{level}.recall_all@5", f"{level}.ndcg@10", f"{level}.recall@10"]
            print(f"\nheld out: {held_out}, {unit} units ({result.path})")
            print(result.table(metrics).round(4).to_string(), flush=True)


if __name__ == "__main__":
    main()
