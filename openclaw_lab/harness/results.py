"""Run folders: ``results/<experiment>/<run-id>/`` with config, environment, runs, metrics, tables, plots.

Nothing is overwritten: a run id is the UTC start time plus the config's fingerprint, and a
clash gets a numeric suffix. A run is written into a hidden ``.<run-id>.partial`` folder and renamed
when every file is in place, so a results folder is complete or absent: a failed run removes its
partial folder, a killed one leaves only the hidden partial, which every reader refuses.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from openclaw_lab.clock import SystemClock
from openclaw_lab.errors import IncompleteRunError
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.plots import plot_result

__all__ = ["new_run_dir", "run_folder", "write_result", "read_run", "latest_run", "REQUIRED"]

REQUIRED = ("config.json", "environment.json", "metrics.json", "runs")  # what a complete run folder holds


def new_run_dir(results_dir: str | Path, config: ExperimentConfig, suffix: str = "") -> Path:
    """A free run folder name under ``results_dir/<experiment>/`` (not created)."""
    base = Path(results_dir) / config.name
    stem = f"{SystemClock().now():%Y%m%dT%H%M%SZ}-{config.fingerprint()}{suffix}"
    candidate, n = base / stem, 1
    while candidate.exists() or partial_of(candidate).exists():
        n += 1
        candidate = base / f"{stem}-{n}"
    return candidate


def partial_of(final: Path) -> Path:
    return final.parent / f".{final.name}.partial"


@contextmanager
def run_folder(final: Path) -> Iterator[Path]:
    """A hidden partial folder to write a run into, renamed to ``final`` on success and removed on failure."""
    if final.exists():
        raise FileExistsError(f"run_dir: {final} exists; a run never writes into an existing folder")
    partial = partial_of(final)
    partial.mkdir(parents=True)
    try:
        yield partial
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    os.rename(partial, final)


def _write_json(path: Path, data: Any, sort_keys: bool = True) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=sort_keys, default=str) + "\n")


def metrics_document(result: Any) -> dict[str, Any]:
    """What ``metrics.json`` holds: every system's metrics, the memory figures, the question counts, QA."""
    qa = {key: value for key, value in result.qa.items() if key != "prompts"}
    return {"systems": result.metrics, "memory": result.memory, "questions": result.questions,
            **({"qa": qa} if qa else {})}


def as_written(data: Any) -> Any:
    """``data`` as its JSON file reads back (keys sorted, plain types): a record made in memory equals one read."""
    return json.loads(json.dumps(data, sort_keys=True, default=str))


def write_result(result: Any, run_dir: Path) -> list[Path]:
    """Write every file of a run; plots last, so a plotting failure leaves the data in place. Returns the plots."""
    _write_json(run_dir / "config.json", result.config.to_dict())
    _write_json(run_dir / "environment.json", result.environment)
    _write_json(run_dir / "metrics.json", metrics_document(result))
    if result.qa.get("prompts"):  # the exact prompts of this run, beside its answers
        (run_dir / "prompts").mkdir()
        for name, text in result.qa["prompts"].items():
            (run_dir / "prompts" / f"{name}.txt").write_text(text)
    if result.qa_table is not None:
        result.qa_table.to_csv(run_dir / "qa.csv", index=False)
        if importlib.util.find_spec("pyarrow") is not None:
            result.qa_table.to_parquet(run_dir / "qa.parquet", index=False)
    runs = run_dir / "runs"
    runs.mkdir(exist_ok=True)
    for key, run in result.runs.items():
        _write_json(runs / f"{key}.json", run, sort_keys=False)  # rank order: ranx breaks score ties by it
    for level, qrels in result.qrels.items():
        _write_json(runs / f"qrels.{level}.json", qrels)
    rows = []
    for key, table in result.per_category.items():
        system, level = key.rsplit(".", 1)
        rows.append(table.assign(system=system, level=level).reset_index())
    if rows:
        pd.concat(rows).to_csv(run_dir / "per_category.csv", index=False)
    if result.question_info is not None:
        result.question_info.to_csv(run_dir / "questions.csv", index=False)
    result.footprint.to_csv(run_dir / "footprint.csv", index=False)
    _write_json(run_dir / "consolidation_log.json", result.consolidations)
    if result.answer_in_context is not None:
        result.answer_in_context.to_csv(run_dir / "answer_in_context.csv")
    if result.answer_kept is not None:
        result.answer_kept.to_csv(run_dir / "answer_kept.csv")
    if result.models:
        _write_json(run_dir / "models.json", result.models)
    if result.costs is not None:
        result.costs.to_csv(run_dir / "costs.csv", index_label="system")
    return plot_result(result, run_dir)


def latest_run(folder: str | Path) -> Path:
    """``folder`` itself if it is a run folder, else its newest complete run (run ids sort by start time)."""
    root = Path(folder)
    if root.name.endswith(".partial"):
        raise IncompleteRunError(f"run_dir: {root} is a run that did not finish (killed while writing); rerun it")
    if (root / "config.json").exists() or (root / "metrics.json").exists():
        if missing := [name for name in REQUIRED if not (root / name).exists()]:
            raise IncompleteRunError(f"run_dir: {root} is incomplete, it lacks {', '.join(missing)}; rerun it")
        return root
    runs = sorted(p.parent for p in root.glob("*/metrics.json") if not p.parent.name.startswith("."))
    if not runs:
        raise ValueError(f"run_dir: {root} is neither a run folder nor a folder of runs")
    return latest_run(runs[-1])


def read_record(run_dir: str | Path) -> dict[str, Any]:
    """What a report reads of a run folder: ``read_run``'s data, its costs (None before costs.csv) and its plots."""
    data = read_run(run_dir)
    root = data["path"]
    costs = pd.read_csv(root / "costs.csv", index_col="system") if (root / "costs.csv").exists() else None
    return {**data, "costs": costs, "plots": [p.name for p in sorted(root.glob("*.png"))]}


def read_run(run_dir: str | Path) -> dict[str, Any]:
    """A run folder's metrics, config, runs and qrels, as plain data (a folder of runs: its newest).

    ``questions`` is the table of question categories and conversations, None for runs written before it.
    """
    root = latest_run(run_dir)
    runs = {p.stem: json.loads(p.read_text()) for p in sorted((root / "runs").glob("*.json")) if not p.stem.startswith("qrels.")}
    qrels = {p.stem.split(".", 1)[1]: json.loads(p.read_text()) for p in (root / "runs").glob("qrels.*.json")}
    return {
        "path": root,
        "metrics": json.loads((root / "metrics.json").read_text()),
        "config": json.loads((root / "config.json").read_text()),
        "environment": json.loads((root / "environment.json").read_text()),
        "runs": runs,
        "qrels": qrels,
        "questions": pd.read_csv(questions, dtype={"question": str, "conversation": str, "category": str})
        if (questions := root / "questions.csv").exists() else None,
    }
