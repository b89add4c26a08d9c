"""Fit the learned reranker that the ``rerank`` strategy ships with.

    python scripts/train_learned_reranker.py

It is fitted on 8 LoCoMo conversations and never on conv-26 or conv-30, the CI gate's subset, so
the gate evaluates it on conversations it has not seen (the harness refuses the others). The
model file records the conversations, the dataset sha256 and the first-stage depth.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from openclaw_lab.datasets import load_locomo
from openclaw_lab.embedding import Embedder
from openclaw_lab.harness.build import build
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.crossfit import training_queries
from openclaw_lab.harness.experiment import questions_by_conversation, replay_benchmark
from openclaw_lab.retrieval.learned import DEFAULT_MODEL_PATH, LearnedReranker

HELD_OUT = ("conv-26", "conv-30")
DEPTH = 50  # default_rerank's candidates: rank features depend on it
SOURCES = ("dense", "bm25", "context")  # the first stage it reads (context: the hybrid-context strategy)


def main() -> None:
    full = load_locomo()
    train_ids = [c.id for c in full.conversations if c.id not in HELD_OUT]
    benchmark = full.subset(train_ids)
    config = ExperimentConfig.from_toml(Path(__file__).parents[1] / "experiments" / "locomo-baselines.toml")
    embedder = Embedder()
    replays = replay_benchmark(benchmark, build(config, embedder=embedder).replay, embedder, Path(tempfile.mkdtemp()))
    queries = training_queries(replays, questions_by_conversation(benchmark), embedder, DEPTH, SOURCES)
    fitted = [q for q in queries.values() if q.relevant]
    model = LearnedReranker(sources=SOURCES).fit(
        fitted, provenance={"dataset": "locomo", "sha256": benchmark.sha256, "depth": DEPTH,
                            "held_out": list(HELD_OUT), "script": "scripts/train_learned_reranker.py"},
    )  # fmt: skip
    print(f"fitted on {len(fitted)} questions of {len(train_ids)} conversations -> {model.save(DEFAULT_MODEL_PATH)}")


if __name__ == "__main__":
    main()
