"""The regression gate: a run's gated metrics against a committed baseline, with a tolerance.

>>> failures = check_metrics({"dense": {"session.recall@10": 0.70}}, {"dense": {"session.recall@10": 0.72}}, 0.01)
>>> failures[0].metric, round(failures[0].drop, 3)
('session.recall@10', 0.02)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openclaw_lab.harness.results import read_run

__all__ = ["Regression", "check_metrics", "check_run", "write_baseline", "flatten", "MEMORY"]

MEMORY = "memory"  # the baseline's pseudo-system for gated memory figures


@dataclass(frozen=True)
class Regression:
    system: str
    metric: str
    baseline: float
    value: float | None

    @property
    def drop(self) -> float:
        return self.baseline - (self.value if self.value is not None else 0.0)

    def __str__(self) -> str:
        shown = "missing" if self.value is None else f"{self.value:.4f}"
        return f"{self.system} {self.metric}: {shown} against baseline {self.baseline:.6f} (drop {self.drop:.6f})"


def check_metrics(
    current: dict[str, dict[str, float]], baseline: dict[str, dict[str, float]], tolerance: float, exact: bool = False
) -> list[Regression]:
    """Every baseline metric that fell by more than ``tolerance`` (absolute), or is missing.

    ``exact``: any difference at all, up or down, fails (the baseline must reproduce to the last digit).
    Memory figures (system ``memory``) have no better direction: a change beyond ``tolerance`` either way fails.
    """
    if tolerance < 0:
        raise ValueError(f"tolerance: {tolerance!r} must be >= 0")
    failures = []
    for system, metrics in baseline.items():
        for metric, expected in metrics.items():
            value = current.get(system, {}).get(metric)
            change = abs(expected - value) if system == MEMORY and value is not None else expected - (value or 0)
            if value is None or change > tolerance or (exact and value != expected):
                failures.append(Regression(system, metric, expected, value))
    return failures


def flatten(figures: dict[str, Any], prefix: str = "") -> dict[str, float]:
    """Nested figures as ``a.b.c`` names (numbers only).

    >>> flatten({"retention.any": 1.0, "compression": {"all": {"items": 3}}, "note": "x"}, "memory.")
    {'memory.retention.any': 1.0, 'memory.compression.all.items': 3}
    """
    out: dict[str, float] = {}
    for key, value in figures.items():
        if isinstance(value, dict):
            out |= flatten(value, f"{prefix}{key}.")
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = value
    return out


def write_baseline(run_dir: str | Path, path: str | Path) -> dict[str, Any]:
    """Freeze a run's gated metrics (its config's ``metrics.gate``) as a baseline file; gated memory
    figures (``memory.…``) go under the pseudo-system ``memory``."""
    data = read_run(run_dir)
    gate = data["config"]["metrics"]["gate"]
    systems = data["metrics"]["systems"]
    metrics = {system: {m: values[m] for m in gate if m in values} for system, values in systems.items()}
    memory = flatten(data["metrics"]["memory"], "memory.")
    if gated := {m: memory[m] for m in gate if m in memory}:
        metrics[MEMORY] = gated
    baseline = {
        "experiment": data["config"]["name"],
        "dataset": data["environment"]["dataset"],
        "git_commit": data["environment"]["git_commit"],
        "metrics": metrics,
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n")
    return baseline


def check_run(run_dir: str | Path, baseline_path: str | Path, tolerance: float, exact: bool = False) -> list[Regression]:
    data = read_run(run_dir)
    baseline = json.loads(Path(baseline_path).read_text())
    expected_sha = baseline.get("dataset", {}).get("sha256")
    actual_sha = data["environment"]["dataset"].get("sha256")
    if expected_sha and actual_sha and expected_sha != actual_sha:
        raise ValueError(f"dataset: the run used sha256 {actual_sha}, the baseline {expected_sha}")
    current = {**data["metrics"]["systems"], MEMORY: flatten(data["metrics"]["memory"], "memory.")}
    return check_metrics(current, baseline["metrics"], tolerance, exact)
