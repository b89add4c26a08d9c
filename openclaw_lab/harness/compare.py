"""Compare systems on the same questions: scores, paired tests (ranx's), p-values.

The first run is the baseline; each other system gets a p-value against it per metric. Metrics are
ranx's names and ours (``recall_all@k``, ``ndcg_lme@k``), scored per question as ``metrics.json`` is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from ranx.statistical_tests import compute_statistical_significance

from openclaw_lab.evaluation.metrics import question_scores
from openclaw_lab.harness.results import read_run
from openclaw_lab.retrieval.protocol import RunDict

__all__ = ["compare_runs", "compare_dirs"]

DEFAULT_METRICS = ("recall@10", "hit_rate@5", "ndcg@10", "mrr")


def compare_runs(
    qrels: Mapping[str, Mapping[str, int]],
    runs: Mapping[str, RunDict],
    metrics: Sequence[str] = DEFAULT_METRICS,
    stat_test: str = "student",
    max_p: float = 0.05,
) -> pd.DataFrame:
    """A table: one row per system (baseline first), metric means and p-values against the baseline."""
    if len(runs) < 2:
        raise ValueError(f"runs: need at least two systems to compare, got {list(runs)}")
    scores = {name: question_scores(qrels, run, metrics) for name, run in runs.items()}
    # ranx.compare scores only ranx's metrics; the paired tests it runs take per-question scores of any metric
    tests = compute_statistical_significance(
        list(runs), {name: {m: table[m].to_numpy() for m in metrics} for name, table in scores.items()},
        stat_test=stat_test, max_p=max_p,
    )
    baseline = next(iter(runs))
    rows = []
    for name, table in scores.items():
        row = {"system": name, **table.mean().round(4).to_dict()}
        for metric in metrics:
            row[f"p({metric})"] = None if name == baseline else tests[baseline, name][metric]["p_value"]
        rows.append(row)
    return pd.DataFrame(rows).set_index("system")


def compare_dirs(
    run_dirs: Sequence[str | Path], level: str = "session", metrics: Sequence[str] | None = None,
    stat_test: str | None = None, baseline: str | None = None, categories: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Compare every system of the given run folders, which must share their qrels.

    ``stat_test`` defaults to the first run's ``metrics.significance``; ``baseline`` names the system the
    others are tested against (default: the first run's first system); ``categories`` keeps only the
    questions of those categories (LoCoMo's standard subset leaves out ``adversarial``).
    """
    runs: dict[str, RunDict] = {}
    first, qrels = None, None
    for run_dir in run_dirs:
        data = read_run(run_dir)
        if level not in data["qrels"]:
            raise ValueError(f"level: {data['path']} has no {level}-level results (it has {', '.join(data['qrels'])})")
        if first is not None and data["qrels"][level] != first:
            raise ValueError(f"run_dirs: {run_dir} was evaluated on other questions than {run_dirs[0]}")
        first = qrels = data["qrels"][level]
        if categories is not None:
            qrels = _of_categories(qrels, data, categories)
        stat_test = stat_test or data["config"]["metrics"].get("significance", "student")
        for system in (s["name"] for s in data["config"]["systems"]):  # the config's order: its first is the baseline
            name = system if len(run_dirs) == 1 else f"{Path(run_dir).name}:{system}"
            runs[name] = {qid: ranked for qid, ranked in data["runs"][f"{system}.{level}"].items() if qid in qrels}
    if baseline is not None:
        if baseline not in runs:
            raise ValueError(f"baseline: no system {baseline!r} in these runs; choose one of {', '.join(runs)}")
        runs = {baseline: runs[baseline], **runs}
    return compare_runs(qrels or {}, runs, metrics or DEFAULT_METRICS, stat_test)


def _of_categories(
    qrels: Mapping[str, Mapping[str, int]], data: Mapping[str, Any], categories: Sequence[str]
) -> dict[str, Mapping[str, int]]:
    """The qrels of the questions whose category is one of ``categories``."""
    table = data["questions"]
    if table is None:
        raise ValueError(f"categories: {data['path']} has no questions.csv (it predates question categories); rerun it")
    known = set(table["category"])
    if unknown := [c for c in categories if c not in known]:
        raise ValueError(f"categories: no question of category {', '.join(map(repr, unknown))} in {data['path']}; "
                         f"it has {', '.join(sorted(known))}")  # fmt: skip
    keep = set(table.loc[table["category"].isin(list(categories)), "question"])
    return {qid: relevant for qid, relevant in qrels.items() if qid in keep}
