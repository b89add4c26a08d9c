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

import pandas as pd
from tqdm.auto import tqdm

from openclaw_lab.datasets.types import Benchmark
from openclaw_lab.embedding import Embedder
from openclaw_lab.errors import ConfigError
from openclaw_lab.harness.build import build, build_embedder
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.experiment import ExperimentResult, run_experiment
from openclaw_lab.harness.plots import pareto_plot
from openclaw_lab.harness.results import new_run_dir

__all__ = ["grid", "points", "run_sweep", "SweepResult"]


def grid(config: ExperimentConfig) -> list[dict[str, Any]]:
    """Every combination of the sweep's values, as {setting: value} dicts."""
    if not config.sweep:
        raise ConfigError("sweep", f"experiment {config.name!r} has no [sweep] table")
    keys = list(config.sweep)
    for key, values in config.sweep.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(f"sweep.{key}", f"expected a non-empty list of values, got {values!r}")
    return [dict(zip(keys, combo)) for combo in itertools.product(*config.sweep.values())]


def points(config: ExperimentConfig, embedder: Embedder | None = None) -> list[tuple[dict[str, Any], ExperimentConfig]]:
    """Each grid point's settings and config, every one built once so that a bad value fails before any run."""
    out = []
    for values in grid(config):
        point = config
        for key, value in values.items():
            try:
                point = point.with_value(key, value)
            except ConfigError as error:
                raise ConfigError(f"sweep.{key}", f"the value {value!r}: {error}") from None
        build(point, embedder=embedder)
        out.append((values, point))
    return out


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
    embedder = embedder or build_embedder(config)
    grid_points = points(config, embedder)  # every point checked before the dataset loads
    benchmark = benchmark or build(config, embedder=embedder).load_dataset()
    sweep_dir = new_run_dir(results_dir, config, suffix="-sweep") if results_dir is not None else None
    if sweep_dir is not None:
        sweep_dir.mkdir(parents=True)  # each point appears in it when complete
    results, rows = [], []
    for n, (values, point) in enumerate(tqdm(grid_points, desc=f"sweep {config.name}", disable=not progress)):
        result = run_experiment(point, results_dir=None, run_dir=sweep_dir / f"point-{n:02d}" if sweep_dir else None,
                                embedder=embedder, benchmark=benchmark, progress=False)  # fmt: skip
        results.append(result)
        rows.append({"point": n, **values, **_summary_row(result)})
    summary = pd.DataFrame(rows)
    if sweep_dir is not None:
        summary.to_csv(sweep_dir / "summary.csv", index=False)
        _plot(summary, sweep_dir, config)
    return SweepResult(summary, results, sweep_dir)


def _summary_row(result: ExperimentResult) -> dict[str, float]:
    row = {key: value for key, value in result.memory.items() if isinstance(value, float)}
    for system, values in result.metrics.items():
        row |= {f"{system}.{metric}": value for metric, value in values.items() if metric.endswith("recall@10")}
    return row


def _plot(summary: pd.DataFrame, sweep_dir: Path, config: ExperimentConfig) -> None:
    y = next((c for c in summary.columns if c.endswith("session.recall@10")), None)
    if y is None:
        return
    ax = pareto_plot(summary, "footprint", y, label=next(iter(config.sweep)))  # points labelled by the first setting
    ax.figure.tight_layout()
    ax.figure.savefig(sweep_dir / "pareto.png", dpi=110)
