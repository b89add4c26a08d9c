"""Parameter sweeps: the grid of an experiment's ``[sweep]`` table, one run per point.

Points share the embedder and its on-disk cache (each text is encoded once for the whole sweep)
and the loaded dataset; on Ray each point is a task, and both are shipped once to all of them.
Points that differ only in what consolidation prunes (``DECAY_SETTINGS``: a decay sweep) share one
replay, which forks where their prune decisions first differ (``replay.replay_shared``), and points
left with the same memory share its evaluation; the results are those of separate runs. The summary
has one row per point; ``pareto_front`` keeps the points that no other point beats on both recall
(higher is better) and footprint (lower is better). Each point's config is built once, before the
dataset loads, and that build is the one its replay and run use (on Ray a task builds its own).
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd
from tqdm.auto import tqdm

from openclaw_lab.datasets.types import Benchmark
from openclaw_lab.embedding import Embedder
from openclaw_lab.errors import ConfigError
from openclaw_lab.harness.build import Built, build, build_dataset, build_embedder, build_engine, resolve_embedding
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.costs import measured
from openclaw_lab.engines import Engine, LocalEngine, Outcome, TaskError, for_tasks
from openclaw_lab.harness.experiment import (
    Evaluation, ExperimentResult, Replayed, evaluate_systems, replay_plans, run_experiment,
)  # fmt: skip
from openclaw_lab.harness.plots import pareto_plot
from openclaw_lab.replay.conversation import unit_texts
from openclaw_lab.harness.results import REQUIRED, new_run_dir

__all__ = ["grid", "points", "Point", "run_sweep", "SweepResult", "DECAY_SETTINGS"]

# what a sweep point may change and still share its replay with the others (what consolidation prunes)
DECAY_SETTINGS = ("law", "law_params", "threshold")
# what is made once and shipped to every point, so a sweep cannot vary it: the table, and what to do instead
SHARED_BY_POINTS = {
    "embedding": "the points of a sweep share one embedder; run one experiment per embedding setting "
                 "(openclaw-lab run … --set embedding.…=…)",
    "dataset": "the points of a sweep share one loaded dataset; set it in the config's [dataset] table, one sweep "
               "per dataset",
}  # fmt: skip


def grid(config: ExperimentConfig) -> list[dict[str, Any]]:
    """Every combination of the sweep's values, as {setting: value} dicts."""
    if not config.sweep:
        raise ConfigError("sweep", f"experiment {config.name!r} has no [sweep] table")
    keys = list(config.sweep)
    for key, values in config.sweep.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(f"sweep.{key}", f"expected a non-empty list of values, got {values!r}")
        if (table := key.split(".")[0]) in SHARED_BY_POINTS:
            raise ConfigError(f"sweep.{key}", SHARED_BY_POINTS[table])
    return [dict(zip(keys, combo)) for combo in itertools.product(*config.sweep.values())]


class Point(NamedTuple):
    """One grid point: its settings, its config as it runs (on the engine ``local``, see ``_local``) and that
    config built."""

    values: dict[str, Any]
    config: ExperimentConfig
    built: Built


def points(config: ExperimentConfig, embedder: Embedder | None = None) -> list[Point]:
    """Each grid point, built once so that a bad value fails before any run; the build is kept for its run."""
    out = []
    for values in grid(config):
        point = config
        for key, value in values.items():
            try:
                point = point.with_value(key, value)
            except ConfigError as error:
                raise ConfigError(f"sweep.{key}", f"the value {value!r}: {error}") from None
        # the config that runs is built, so the Built is exactly the one run_experiment would make (its engine
        # included); the engine is left out of the fingerprint, so the point's identity is unchanged
        point = _local(point)
        out.append(Point(values, point, build(point, embedder=embedder)))
    return out


@dataclass
class SweepResult:
    summary: pd.DataFrame  # one row per point, in grid order
    points: dict[int, ExperimentResult]  # the points run now (a point found already written is not rerun)
    path: Path | None


def run_sweep(
    config: ExperimentConfig,
    *,
    results_dir: str | Path | None = "results",
    embedder: Embedder | None = None,
    benchmark: Benchmark | None = None,
    progress: bool = True,
    engine: Engine | None = None,
    reuse: bool = True,
) -> SweepResult:
    """Run every grid point on ``engine`` (default: the config's); write each point's run folder as it
    finishes, then a summary (CSV + Pareto plot).

    With ``reuse``, a point already written by an earlier sweep of this experiment (same config
    fingerprint, same dataset) is copied instead of run again, so a sweep that failed or was killed
    resumes where it stopped. A point that fails does not stop the others: the finished ones are
    written and the failures raised together at the end (``TaskError``, each named by its settings).
    """
    given = embedder
    embedder = embedder or build_embedder(config)
    grid_points = points(config, embedder)  # every point checked before the dataset loads
    engine = engine or build_engine(config.engine)
    benchmark = benchmark or build_dataset(config.dataset)()  # its points are built already: the loader is enough
    say = tqdm.write if progress else None
    if given is None and (resolved := resolve_embedding(config, benchmark, say)) != config:
        config, embedder = resolved, build_embedder(resolved)  # the model that fits the history, for every point
        grid_points = points(config, embedder)
    sweep_dir = new_run_dir(results_dir, config, suffix="-sweep") if results_dir is not None else None
    if sweep_dir is not None:
        sweep_dir.mkdir(parents=True)  # each point appears in it when complete
    written = _written_points(Path(results_dir) / config.name, benchmark) if reuse and sweep_dir is not None else {}
    rows: dict[int, dict[str, Any]] = {}
    todo: list[tuple[int, Point]] = []  # (grid index, point) of the points to run now
    for n, point in enumerate(grid_points):
        if (earlier := written.get(point.config.fingerprint())) is not None:
            shutil.copytree(earlier, sweep_dir / f"point-{n:02d}")  # type: ignore[operator]
            metrics = json.loads((earlier / "metrics.json").read_text())
            rows[n] = _summary_row(n, point.values, point.config, metrics["systems"], metrics["memory"])
        else:
            todo.append((n, point))
    if todo:  # the texts go with the tasks only when there are tasks
        embedder = for_tasks(embedder, _texts(benchmark, todo), engine, progress)
    shared = {"embedder": embedder, "benchmark": benchmark}
    names = [f"{n} ({', '.join(f'{k}={v!r}' for k, v in point.values.items())})" for n, point in todo]
    replayed, failed = {}, []
    for group in _replay_groups([point.config for _, point in todo]):  # points that differ only in decay replay once
        try:
            replayed |= _replay_together(group, [todo[i][1].built for i in group], benchmark, shared["embedder"],
                                         engine, progress, config.name)  # fmt: skip
        except TaskError as error:
            failed += [Outcome(i, names[i], error=error) for i in group]
    runnable = [i for i in range(len(todo)) if i not in {o.index for o in failed}]
    in_process = isinstance(engine, LocalEngine)
    inner = progress and in_process  # a point's own bars, under the sweep's, where they can show
    # a point's build goes only to a task in this process: it holds the driver's embedder (not the copy shipped to
    # workers) and the QA cache's SQLite connection, which a forked worker must not share; on Ray it would be
    # pickled with its clients and closures. A worker builds its point itself, once
    inputs = [(point.config, sweep_dir / f"point-{n:02d}" if sweep_dir else None, replayed.get(i), inner,
               point.built if in_process else None) for i, (n, point) in enumerate(todo) if i in runnable]  # fmt: skip
    results = {}
    outcomes = engine.map(_run_point, inputs, names=[names[i] for i in runnable], shared=shared)
    for outcome in tqdm(outcomes, total=len(runnable), desc=f"sweep {config.name}", unit="point", disable=not progress):
        if outcome.error is not None:
            failed.append(outcome)
            continue
        n, point = todo[runnable[outcome.index]]
        results[n] = outcome.value
        rows[n] = _summary_row(n, point.values, point.config, outcome.value.metrics, outcome.value.memory)
        _write_summary(rows, sweep_dir)  # a sweep stopped midway still has the summary of what finished
    summary = pd.DataFrame([rows[n] for n in sorted(rows)])
    if sweep_dir is not None:
        _write_summary(rows, sweep_dir)
        _plot(summary, sweep_dir, config)
    if failed:
        raise TaskError(failed, "sweep point") from failed[0].error
    return SweepResult(summary, results, sweep_dir)


def _run_point(point: ExperimentConfig, run_dir: Path | None, replayed: Replayed | None, progress: bool,
               built: Built | None, embedder: Embedder, benchmark: Benchmark) -> ExperimentResult:  # fmt: skip
    return run_experiment(point, results_dir=None, run_dir=run_dir, embedder=embedder, benchmark=benchmark,
                          progress=progress, replayed=replayed, built=built)  # fmt: skip


def _replay_groups(configs: list[ExperimentConfig]) -> list[list[int]]:
    """The points (indices) that replay together: more than one whose configs differ only in ``DECAY_SETTINGS``.
    A fork copies the semantic store item by item, which keeps the exact store's row order and so its ties;
    points on another store replay alone."""
    groups: dict[str, list[int]] = {}
    for i, config in enumerate(configs):
        settings, memory = config.consolidation, config.memory
        if settings.enabled and settings.summaries is None and not memory.persist and memory.store == "exact":
            data = config.to_dict()
            data.pop("engine")
            for key in DECAY_SETTINGS:
                data["consolidation"].pop(key)
            groups.setdefault(json.dumps(data, sort_keys=True), []).append(i)
    return [group for group in groups.values() if len(group) > 1]


def _replay_together(group: list[int], built: list[Built], benchmark: Benchmark, embedder: Embedder,
                     engine: Engine, progress: bool, name: str) -> dict[int, Replayed]:  # fmt: skip
    """One shared replay for the points ``group`` (``built``: their builds); each point is charged its share of
    the cost. ``embedder`` is the one the engine's tasks read."""
    with measured() as cost:
        per_point = replay_plans(benchmark, [b.replay for b in built], embedder, None, progress,
                                 f"{name} ({len(built)} points)", engine)  # fmt: skip
    share = {"seconds": cost["seconds"] / len(built), "peak_rss_mib": cost["peak_rss_mib"]}
    keys = [tuple(id(r.items) for r in replays) for replays in per_point]  # one memory: one list of items per point
    evaluations: dict[tuple[int, ...], Evaluation] = {}  # points left with the same memory are evaluated once
    for point, replays, key in zip(built, per_point, keys):
        if keys.count(key) > 1 and key not in evaluations:
            evaluations[key] = evaluate_systems(benchmark, replays, point.config, point.systems, progress=False)
    return {i: Replayed(replays, share, evaluations.get(key)) for i, replays, key in zip(group, per_point, keys)}


def _local(point: ExperimentConfig) -> ExperimentConfig:
    """A point runs where its task runs: its own conversations are not spread further."""
    return point.with_values({"engine.name": "local", "engine.address": None, "engine.num_cpus": None})


def _texts(benchmark: Benchmark, todo: list[tuple[int, Point]]) -> list[str]:
    """Every text the points will embed: their memory units and the questions."""
    units = {point.config.memory.unit for _, point in todo}
    return [t for unit in sorted(units) for c in benchmark.conversations for t in unit_texts(c, unit)] + [
        q.text for q in benchmark.questions
    ]


def _written_points(experiment_dir: Path, benchmark: Benchmark) -> dict[str, Path]:
    """Complete point folders of earlier sweeps of this experiment on this dataset, by config fingerprint."""
    found = {}
    for config_file in sorted(experiment_dir.glob("*-sweep/point-*/config.json")):
        folder = config_file.parent
        if any(not (folder / name).exists() for name in REQUIRED):
            continue
        dataset = json.loads((folder / "environment.json").read_text()).get("dataset", {})
        if (dataset.get("sha256"), dataset.get("conversations"), dataset.get("questions")) != (
            benchmark.sha256, len(benchmark.conversations), len(benchmark.questions)
        ):
            continue
        found[ExperimentConfig.from_dict(json.loads(config_file.read_text())).fingerprint()] = folder
    return found


def _write_summary(rows: dict[int, dict[str, Any]], sweep_dir: Path | None) -> None:
    if sweep_dir is None:
        return
    partial = sweep_dir / ".summary.csv.partial"
    pd.DataFrame([rows[n] for n in sorted(rows)]).to_csv(partial, index=False)
    os.replace(partial, sweep_dir / "summary.csv")  # never half a file


def _summary_row(n: int, values: dict[str, Any], point: ExperimentConfig, metrics: dict[str, dict[str, float]],
                 memory: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """Memory figures, then each system's recall@10 in the config's order (a point read back from its
    metrics.json, whose keys are sorted, gives the same columns as one just run)."""
    row = {"point": n, **values} | {key: memory[key] for key in sorted(memory) if isinstance(memory[key], float)}
    for system in (s.name for s in point.systems):
        row |= {f"{system}.{metric}": value for metric, value in sorted(metrics[system].items())
                if metric.endswith("recall@10")}  # fmt: skip
    return row


def _plot(summary: pd.DataFrame, sweep_dir: Path, config: ExperimentConfig) -> None:
    y = next((c for c in summary.columns if c.endswith("session.recall@10")), None)
    if y is None:
        return
    ax = pareto_plot(summary, "footprint", y, label=next(iter(config.sweep)))  # points labelled by the first setting
    ax.figure.tight_layout()
    ax.figure.savefig(sweep_dir / "pareto.png", dpi=110)
