"""Turn recall on the hand-written Chinese histories (datasets/zh-daily: 5 users, 232 turns, 45 questions) for each
strategy, with the English MiniLM and with the model the default config picks for them (multilingual e5-small).

    .venv/bin/python benchmarks/bench_chinese.py

The default MiniLM is English: it maps most Chinese characters to [UNK], so dense retrieval with it finds about
half of what e5-small finds, and fusion with it loses to BM25 over jieba's words. A config that names no model
gets e5-small for a history like this one (``harness.build.resolve_embedding``). Printed, not asserted (the
tests in tests/datasets/test_zh_daily.py assert the default's figures).
"""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from openclaw_lab.harness.config import ExperimentConfig  # noqa: E402
from openclaw_lab.harness.experiment import run_experiment  # noqa: E402

EXPERIMENT = Path(__file__).resolve().parents[1] / "experiments" / "zh-daily.toml"
DATA = Path(__file__).resolve().parents[1] / "datasets" / "zh-daily" / "zh_daily.json"
MODELS = {"MiniLM (English)": "sentence-transformers", "default (auto: e5-small)": None}


def main() -> None:
    base = ExperimentConfig.from_toml(EXPERIMENT).with_value("dataset.params", {"path": str(DATA)})
    tables = {}
    for label, name in MODELS.items():
        config = base.with_value("embedding.name", name)
        result = run_experiment(config, results_dir=None, progress=False)
        tables[label] = result.table(["turn.recall@10", "turn.mrr"])
        print(f"{label}: embedding.name = {result.config.embedding.name!r}")
    print(f"\n{'system':<10}" + "".join(f"{label:>30}" for label in MODELS))
    for system in tables[next(iter(MODELS))].index:
        cells = [f"{t.loc[system, 'turn.recall@10']:.3f} / {t.loc[system, 'turn.mrr']:.3f}" for t in tables.values()]
        print(f"{system:<10}" + "".join(f"{cell:>30}" for cell in cells))
    print("(turn R@10 / MRR)")


if __name__ == "__main__":
    main()
