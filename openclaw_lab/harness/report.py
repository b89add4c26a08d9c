"""A markdown report of a run: the metrics table, memory figures and the plots.

Every function reads a run's record: the plain data of its files (``results.read_record`` of a folder, or
``ExperimentResult.record()`` of a run just made, which is the same data before it is written).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from openclaw_lab.evaluation.metrics import unscored_note
from openclaw_lab.harness.results import read_record

__all__ = ["metrics_table", "report_text", "write_report", "stale_table", "consolidation_lines"]

HEADLINE = ("session.recall@10", "session.hit_rate@5", "turn.recall@10", "turn.ndcg@10", "turn.mrr")


def metrics_table(run: str | Path | Mapping[str, Any], columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Systems as rows; columns: the experiment's gated metrics, then the headline ones (higher is better).
    ``run``: a run's record, or its folder."""
    data = run if isinstance(run, Mapping) else read_record(run)
    frame = pd.DataFrame(data["metrics"]["systems"]).T
    if columns is None:
        columns = tuple(dict.fromkeys([*data["config"]["metrics"].get("gate", ()), *HEADLINE]))
    return frame[[c for c in columns if c in frame.columns]].round(4)


def qa_table(qa: dict) -> str:
    """The QA stage as text: judged accuracy, F1 and BLEU-1 per system and budget (or why it was skipped)."""
    if "skipped" in qa:
        return f"qa: skipped: {qa['skipped']}"
    summary = pd.DataFrame(qa["summary"])
    overall = summary[summary["category"] == "all"].drop(columns="category").set_index(["system", "budget"])
    title = f"qa ({qa['protocol']} protocol; answers: {qa['models']['answer']}; judge: {qa['models']['judge']})"
    return f"{title}\n{overall.round(4).to_markdown()}"


def questions_line(data: dict) -> str:
    """How many questions were loaded and scored, from a run's metrics.json (older runs: from the environment)."""
    counts = data["metrics"].get("questions")
    if not counts:
        return f"questions: {data['environment']['dataset']['questions']} loaded"
    return unscored_note(counts)


def _qa_by_category(qa: dict) -> str:
    if "summary" not in qa:
        return ""
    summary = pd.DataFrame(qa["summary"])
    table = summary.pivot_table(index=["system", "budget"], columns="category", values="accuracy").round(4)
    return f"Judged accuracy by category (judge: {qa['models']['judge']}):\n\n{table.to_markdown()}"


def _short(value: object) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def stale_table(quality: dict) -> pd.DataFrame:
    """Systems as rows: questions, the stale-fact shares, then McNemar's p of each against the first system."""
    stale = pd.DataFrame(quality["stale_above_current"]).T
    shares = sorted(c for c in stale.columns if c != "questions" and not c.startswith("p("))
    return stale[["questions", *shares, *sorted(c for c in stale.columns if c.startswith("p("))]]


def consolidation_lines(memory: dict) -> list[str]:
    """Markdown for the consolidation figures of a run's metrics.json (those it has)."""
    lines = []
    if quality := memory.get("quality"):
        if "stale_above_current" in quality:
            lines += ["Stale facts (updated-fact questions; lower is better; p: McNemar against the first system):", "",
                      stale_table(quality).round(4).to_markdown(), ""]  # fmt: skip
        for name, figures in quality.items():
            if name != "stale_above_current":
                lines += [f"{name}: " + ", ".join(f"{k} {_short(v)}" for k, v in figures.items()), ""]
    if "compression" in memory:
        lines += ["Compression (held at question time against seen):", "",
                  pd.DataFrame(memory["compression"]).T.round(4).to_markdown(), ""]  # fmt: skip
    if "provenance" in memory:
        lines += ["Provenance: " + ", ".join(f"{k} {v}" for k, v in memory["provenance"].items()), ""]
    if "answer_kept" in memory:
        kept = pd.Series(memory["answer_kept"]).rename(lambda budget: f"{budget} tokens" if budget.isdigit() else budget)
        kept = kept[sorted(kept.index, key=lambda b: (not b[0].isdigit(), int(b.split()[0]) if b[0].isdigit() else 0))]
        lines += ["Answer kept (answer-in-context with consolidation minus without, all questions):", "",
                  kept.round(4).to_frame("change").T.to_markdown(), ""]  # fmt: skip
    return ["## Consolidation", "", *lines] if lines else []


def _costs_lines(costs: pd.DataFrame | None) -> list[str]:
    """The costs of each system, measured in this run (runs older than ``costs.csv`` have none)."""
    if costs is None:
        return []
    return ["## Costs (this run, this machine)", "",
            "Ingest: seconds per 1,000 turns (ours: the shared replay plus the system's own indexing), of which "
            "consolidation: the replay's consolidation runs. Query: milliseconds per question. Peak: resident "
            "memory added while the system ran (MiB).", "",
            costs.round(2).to_markdown(), ""]  # fmt: skip


def write_report(run_dir: str | Path) -> Path:
    """Write ``report.md`` in an existing run folder, from its files, and return its path."""
    data = read_record(run_dir)
    path = data["path"] / "report.md"
    path.write_text(report_text(data))
    return path


def report_text(data: Mapping[str, Any]) -> str:
    """The markdown report of a run's record."""
    memory = {k: v for k, v in data["metrics"]["memory"].items() if isinstance(v, (int, float))}
    dataset = data["environment"]["dataset"]
    lines = [
        f"# {data['config']['name']}",
        "",
        f"Dataset **{dataset['name']}** ({dataset['conversations']} conversations, {dataset['questions']} questions, "
        f"sha256 `{dataset['sha256']}`); commit `{data['environment']['git_commit']}`.",
        "",
        f"{questions_line(data)}. Load report: {dataset.get('load_report', 'none')}.",
        "",
        "## Retrieval",
        "",
        metrics_table(data).to_markdown(),
        "",
        *(["## End-to-end QA", "", qa_table(data["metrics"]["qa"]), "", _qa_by_category(data["metrics"]["qa"]), ""]
          if data["metrics"].get("qa") else []),
        *_costs_lines(data["costs"]),
        "## Memory",
        "",
        pd.Series(memory).round(4).to_frame("value").to_markdown(),
        "",
        *consolidation_lines(data["metrics"]["memory"]),
        *[f"![{Path(name).stem}]({name})" for name in data["plots"]],
        "",
    ]
    return "\n".join(lines)
