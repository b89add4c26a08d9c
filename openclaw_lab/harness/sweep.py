"""Parameter sweeps: the grid of an experiment's ``[sweep]`` table, one replay per point.

Points share the embedder and its on-disk cache (each text is encoded once for the whole sweep)
and the loaded dataset. The summary has one row per point; ``pareto_front`` keeps the points that
no other point beats on both recall (higher is better) and footprint (lower is better).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from openclaw_lab.datasets.types import Benchmark
from openclaw_lab.embedding import Embedder
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.experiment import ExperimentResult, load_benchmark, run_experiment
from openclaw_lab.harness.results import new_run_dir

__all__ = ["grid", "run_sweep", "pareto_front", "recall_at_footprint", "SweepResult"]


def grid(config: ExperimentConfig) -> list[dict[str, Any]]:
    """Every combination of the sweep's values, as {setting: value} dicts."""
    if not config.sweep:
        raise ValueError(f"sweep: experiment {config.name!r} has no [sweep] table")
    keys = list(config.sweep)
    for key, values in config.sweep.items():
        if not isinstance(values, list) or not values:
            raise ValueError(f"sweep.{key}: expected a non-empty list of values, got {values!r}")
    return [dict(zip(keys, combo)) for combo in itertools.product(*config.sweep.values())]


@dataclass
class SweepResult:
    summary: pd.DataFrame
    points: list[ExperimentResult]
    path: Path | None


def run_sweep(
    config: ExperimentConfig,
    *,
    results_dir: str | Path | None = "results",
    embedder: Embedder | None = None,
    benchmark: Benchmark | None = None,
    progress: bool = True,
) -> SweepResult:
    """Run every grid point; write each point's run folder and a summary (CSV + Pareto plot)."""
    embedder = embedder or Embedder()
    benchmark = benchmark or load_benchmark(config.dataset)
    sweep_dir = new_run_dir(results_dir, config, suffix="-sweep") if results_dir is not None else None
    points, rows = [], []
    for n, values in enumerate(tqdm(grid(config), desc=f"sweep {config.name}", disable=not progress)):
        point = config
        for key, value in values.items():
            point = point.with_value(key, value)
        result = run_experiment(point, results_dir=None, run_dir=sweep_dir / f"point-{n:02d}" if sweep_dir else None,
                                embedder=embedder, benchmark=benchmark, progress=False)  # fmt: skip
        points.append(result)
        rows.append({"point": n, **values, **_summary_row(result)})
    summary = pd.DataFrame(rows)
    if sweep_dir is not None:
        summary.to_csv(sweep_dir / "summary.csv", index=False)
        _plot(summary, sweep_dir, config)
    return SweepResult(summary, points, sweep_dir)


def _summary_row(result: ExperimentResult) -> dict[str, float]:
    row = {key: value for key, value in result.memory.items() if isinstance(value, float)}
    for system, values in result.metrics.items():
        row |= {f"{system}.{metric}": value for metric, value in values.items() if metric.endswith("recall@10")}
    return row


def _plot(summary: pd.DataFrame, sweep_dir: Path, config: ExperimentConfig) -> None:
    from openclaw_lab.harness.plots import pareto_plot

    y = next((c for c in summary.columns if c.endswith("session.recall@10")), None)
    if y is None:
        return
    ax = pareto_plot(summary, "footprint", y, label=next(iter(config.sweep)))  # points labelled by the first setting
    ax.figure.tight_layout()
    ax.figure.savefig(sweep_dir / "pareto.png", dpi=110)


def pareto_front(points: pd.DataFrame, x: str = "footprint", y: str = "recall") -> pd.DataFrame:
    """Points not dominated on (lower ``x``, higher ``y``), sorted by ``x``."""
    ordered = points.sort_values([x, y], ascending=[True, False])
    best, keep = -np.inf, []
    for index, row in ordered.iterrows():
        if row[y] > best:
            keep.append(index)
            best = row[y]
    return ordered.loc[keep]


def recall_at_footprint(points: pd.DataFrame, footprint: float, x: str = "footprint", y: str = "recall") -> float:
    """The best ``y`` reachable at or below ``footprint`` on the Pareto front (step interpolation)."""
    front = pareto_front(points, x, y)
    reachable = front[front[x] <= footprint]
    return float(reachable[y].max()) if len(reachable) else float("nan")
