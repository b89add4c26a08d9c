"""The regression gate: a run's gated metrics against a committed baseline, question by question.

A retrieval metric fails only when its drop is larger than its tolerance *and* significant under a paired
test over the same questions (ranx's paired t-test by default): float noise that swaps a near tie on one
machine passes, printed with its size, and a real regression fails with its drop, tolerance and p-value.
The baseline therefore keeps each gated metric's per-question values beside its mean. Memory figures
(``memory.…``, under the pseudo-system ``memory``) are counts of what the memory holds: they have no
per-question values and no better direction, so a change beyond the tolerance either way fails.

>>> baseline = {"dense": {"turn.mrr": [1.0, 1.0, 0.5, 0.5]}}
>>> noise = check_metrics({"dense": {"turn.mrr": [1.0, 1.0, 0.5, 0.4999]}}, baseline)
>>> noise[0].status, noise[0].failed
('noise', False)
>>> drop = check_metrics({"dense": {"turn.mrr": [0.5, 0.5, 0.25, 0.25]}}, baseline)[0]
>>> drop.status, round(drop.drop, 3), drop.failed
('regression', 0.375, True)
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from ranx.statistical_tests import fisher_randomization_test, paired_student_t_test

from openclaw_lab.evaluation.metrics import question_scores
from openclaw_lab.harness.results import read_run
from openclaw_lab.harness.tolerance import DEFAULT_MAX_P, DEFAULT_TOLERANCE, Tolerance

__all__ = ["GateSettings", "Verdict", "check_metrics", "check_run", "write_baseline", "flatten", "MEMORY",
           "BASELINE_FORMAT"]  # fmt: skip

MEMORY = "memory"  # the baseline's pseudo-system for gated memory figures
BASELINE_FORMAT = 2  # 2: per-question values beside each mean
PAIRED_TESTS = {"student": "paired t-test", "fisher": "randomisation test"}
FAILING = ("regression", "changed", "missing")


@dataclass(frozen=True)
class GateSettings:
    """How the gate judges a difference: the default tolerance, per-metric ones, the test and its threshold.

    ``exact``: any difference of a mean, up or down, fails (the baseline must reproduce to the last digit).
    """

    tolerance: Tolerance = DEFAULT_TOLERANCE
    tolerances: Mapping[str, Tolerance] = field(default_factory=dict)
    max_p: float = DEFAULT_MAX_P
    test: str = "student"
    exact: bool = False

    def __post_init__(self) -> None:
        if self.test not in PAIRED_TESTS:
            raise ValueError(f"test: {self.test!r} is not one of {', '.join(PAIRED_TESTS)}")
        if not 0 < self.max_p <= 1:
            raise ValueError(f"max_p: {self.max_p!r} must be in (0, 1]")

    def tolerance_of(self, metric: str) -> Tolerance:
        return self.tolerances.get(metric, self.tolerance)

    @classmethod
    def of_run(cls, metrics_config: Mapping[str, Any], **overrides: Any) -> GateSettings:
        """The settings a run's config declares (``metrics.gate_tolerance``, ``gate_tolerances``, ``gate_max_p``;
        the library's defaults where a run predates them), with ``overrides`` set by the caller."""
        declared = {
            "tolerance": Tolerance.parse(metrics_config.get("gate_tolerance", DEFAULT_TOLERANCE.absolute)),
            "tolerances": {m: Tolerance.parse(t) for m, t in metrics_config.get("gate_tolerances", {}).items()},
            "max_p": metrics_config.get("gate_max_p", DEFAULT_MAX_P),
            "test": "fisher" if metrics_config.get("significance") == "fisher" else "student",
        }
        return cls(**(declared | {key: value for key, value in overrides.items() if value is not None}))


@dataclass(frozen=True)
class Verdict:
    """One gated metric of one system: its baseline and current means, the allowed margin and the judgement.

    ``status``: ``equal``, ``noise`` (a drop within the tolerance), ``improved``, ``not significant`` (a drop
    beyond the tolerance that the paired test does not tell from chance), ``regression``, ``changed`` (a
    memory figure moved beyond its tolerance, or any change under ``exact``) or ``missing``.
    """

    system: str
    metric: str
    baseline: float
    value: float | None
    tolerance: Tolerance
    margin: float
    status: str
    p_value: float | None = None
    test: str = "student"
    questions: int = 0

    @property
    def failed(self) -> bool:
        return self.status in FAILING

    @property
    def drop(self) -> float:
        return self.baseline - (self.value if self.value is not None else 0.0)

    def __str__(self) -> str:
        name = f"{self.system} {self.metric}"
        if self.value is None:
            return f"{name}: missing from the run (baseline {self.baseline:.6f})"
        change = f"drop {self.drop:.6f}" if self.drop >= 0 else f"gain {-self.drop:.6f}"
        shown = f"{name}: {self.value:.6f} against baseline {self.baseline:.6f} ({change}"
        tolerance = f"tolerance {self.tolerance}" + (f" = {self.margin:.6f}" if self.tolerance.relative else "")
        if self.p_value is None:
            return f"{shown}; {tolerance})"
        test = f"{PAIRED_TESTS[self.test]} p = {self.p_value:.4g} over {self.questions} questions"
        return f"{shown} > {tolerance}; {test})"


def paired_p(baseline: np.ndarray, current: np.ndarray, test: str = "student") -> float:
    """Two-sided p-value of ranx's paired test on per-question scores (1.0 when they never differ).

    >>> paired_p(np.array([1.0, 0.0, 1.0]), np.array([1.0, 0.0, 1.0]))
    1.0
    """
    if np.array_equal(baseline, current):
        return 1.0
    if test == "fisher":
        p, _ = fisher_randomization_test(baseline, current, n_permutations=1000, max_p=1.0, random_seed=42)
    else:
        p, _ = paired_student_t_test(baseline, current, max_p=1.0)
    return 1.0 if math.isnan(p) else float(p)


def _judge(system: str, metric: str, expected: Sequence[float] | float, found: Sequence[float] | float | None,
           settings: GateSettings) -> Verdict:  # fmt: skip
    """One metric's verdict: per-question lists are tested in pairs; a number (a memory figure) is two-sided."""
    per_question = not isinstance(expected, (int, float))
    baseline = float(np.mean(expected)) if per_question else float(expected)
    tolerance = settings.tolerance_of(metric)
    margin = tolerance.margin(baseline)
    verdict = dict(system=system, metric=metric, baseline=baseline, tolerance=tolerance, margin=margin, test=settings.test)
    if found is None:
        return Verdict(**verdict, value=None, status="missing")
    value = float(np.mean(found)) if per_question else float(found)
    verdict["value"] = value
    if value == baseline:
        return Verdict(**verdict, status="equal")
    if settings.exact:
        return Verdict(**verdict, status="changed")
    if not per_question:  # memory figures: neither direction is better
        return Verdict(**verdict, status="changed" if abs(value - baseline) > margin else "noise")
    if baseline - value <= margin:
        return Verdict(**verdict, status="improved" if value > baseline else "noise")
    p = paired_p(np.asarray(expected, dtype=float), np.asarray(found, dtype=float), settings.test)
    status = "regression" if p < settings.max_p else "not significant"
    return Verdict(**verdict, status=status, p_value=p, questions=len(expected))


def check_metrics(
    current: Mapping[str, Mapping[str, Any]], baseline: Mapping[str, Mapping[str, Any]],
    settings: GateSettings | None = None,
) -> list[Verdict]:
    """A verdict for every metric of ``baseline``: ``{system: {metric: per-question list, or a number}}``.

    Per-question lists must be in the same question order on both sides (``check_run`` aligns them).
    """
    settings = settings or GateSettings()
    verdicts = []
    for system, metrics in baseline.items():
        for metric, expected in metrics.items():
            found = current.get(system, {}).get(metric)
            if found is not None and not isinstance(expected, (int, float)) and len(found) != len(expected):
                raise ValueError(f"{system} {metric}: {len(found)} questions in the run, {len(expected)} in the baseline")
            verdicts.append(_judge(system, metric, expected, found, settings))
    return verdicts


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


def _per_question(data: Mapping[str, Any], metrics: Sequence[str]) -> dict[str, dict[str, dict[str, float]]]:
    """Each system's per-question scores of ``metrics`` (``level.metric`` names), from the run's files."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for system in (s["name"] for s in data["config"]["systems"]):
        out[system] = {}
        for level in dict.fromkeys(m.split(".", 1)[0] for m in metrics):
            names = [m.split(".", 1)[1] for m in metrics if m.startswith(f"{level}.")]
            key = f"{system}.{level}"
            if key not in data["runs"] or level not in data["qrels"]:
                continue
            scores = question_scores(data["qrels"][level], data["runs"][key], names)
            out[system] |= {f"{level}.{name}": scores[name].to_dict() for name in names}
    return out


def write_baseline(run_dir: str | Path, path: str | Path) -> dict[str, Any]:
    """Freeze a run's gated metrics (its config's ``metrics.gate``) as a baseline file: each mean, and each
    question's value for the paired test; gated memory figures (``memory.…``) go under ``memory``."""
    data = read_run(run_dir)
    gate = data["config"]["metrics"]["gate"]
    memory = flatten(data["metrics"]["memory"], "memory.")
    per_question = _per_question(data, [m for m in gate if not m.startswith("memory.")])
    metrics = {system: {m: data["metrics"]["systems"][system][m] for m in values} for system, values in per_question.items()}
    if gated := {m: memory[m] for m in gate if m in memory}:
        metrics[MEMORY] = gated
    baseline = {
        "format": BASELINE_FORMAT,
        "experiment": data["config"]["name"],
        "dataset": data["environment"]["dataset"],
        "git_commit": data["environment"]["git_commit"],
        "metrics": metrics,
        "per_question": per_question,
    }
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(baseline, indent=1, sort_keys=True) + "\n")
    return baseline


def read_baseline(path: str | Path) -> dict[str, Any]:
    """A baseline file, refused with what to do when it predates per-question values."""
    baseline = json.loads(Path(path).read_text())
    if baseline.get("format", 1) < BASELINE_FORMAT or "per_question" not in baseline:
        raise ValueError(
            f"baseline: {path} has means only, no per-question values (written before the paired gate); regenerate "
            f"it from a run of its experiment: openclaw-lab check <run folder> --baseline {path} --update"
        )
    return baseline


def check_run(run_dir: str | Path, baseline_path: str | Path, settings: GateSettings | None = None) -> list[Verdict]:
    """Every gated metric of the baseline judged on the run in ``run_dir`` (settings: the run's config's)."""
    data = read_run(run_dir)
    baseline = read_baseline(baseline_path)
    expected_sha = baseline.get("dataset", {}).get("sha256")
    actual_sha = data["environment"]["dataset"].get("sha256")
    if expected_sha and actual_sha and expected_sha != actual_sha:
        raise ValueError(f"dataset: the run used sha256 {actual_sha}, the baseline {expected_sha}")
    settings = settings or GateSettings.of_run(data["config"]["metrics"])
    gated = sorted({m for metrics in baseline["metrics"].values() for m in metrics})
    memory = flatten(data["metrics"]["memory"], "memory.")
    known = [*data["config"]["metrics"].get("gate", []), *(m for v in data["metrics"]["systems"].values() for m in v), *memory]
    if unknown := [m for m in gated if m not in known]:
        close = difflib.get_close_matches(unknown[0], sorted(set(known)), n=1)
        raise ValueError(f"baseline: {baseline_path} gates {', '.join(map(repr, unknown))}, which this run does not "
                         f"compute" + (f"; did you mean {close[0]!r}?" if close else ""))  # fmt: skip
    current_pq = _per_question(data, [m for m in gated if not m.startswith("memory.")])
    expected: dict[str, dict[str, Any]] = {}
    current: dict[str, dict[str, Any]] = {}
    for system, metrics in baseline["metrics"].items():
        expected[system], current[system] = {}, {}
        for metric, mean in metrics.items():
            if system == MEMORY:
                expected[system][metric] = mean
                if metric in memory:
                    current[system][metric] = memory[metric]
                continue
            questions = baseline["per_question"][system][metric]
            expected[system][metric] = list(questions.values())
            if (found := current_pq.get(system, {}).get(metric)) is not None:
                if set(found) != set(questions):
                    raise ValueError(f"{system} {metric}: the run scored {len(found)} questions, the baseline "
                                     f"{len(questions)}, not the same ones; rerun the baseline's experiment")  # fmt: skip
                current[system][metric] = [found[qid] for qid in questions]
    return check_metrics(current, expected, settings)
