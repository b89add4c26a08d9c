"""Plots of a run, saved as PNG beside its metrics (matplotlib, no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt  # without a display matplotlib picks Agg itself; notebooks keep inline plots
import pandas as pd

from openclaw_lab.evaluation.metrics import pareto_front

__all__ = [
    "plot_result", "recall_curves", "category_bars", "footprint_plot", "pareto_plot", "answer_curve", "qa_curve",
    "stale_bars", "compression_bars",
]  # fmt: skip


def recall_curves(metrics: dict[str, dict[str, float]], level: str, family: str = "recall", ax=None):
    """``family@k`` against k for each system."""
    ax = ax or plt.subplots(figsize=(6, 4))[1]
    for system, values in metrics.items():
        points = sorted((int(k.split("@")[1]), v) for k, v in values.items() if k.startswith(f"{level}.{family}@"))
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=system)
    ax.set(xscale="log", xlabel="k", ylabel=f"{family}@k", title=f"{level}-level {family}@k", ylim=(0, 1))
    ax.legend()
    return ax


def category_bars(per_category: dict[str, pd.DataFrame], level: str, metric: str = "recall@10", ax=None):
    """``metric`` per question category, one bar group per category, one bar per system."""
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    frame = pd.DataFrame({key.rsplit(".", 1)[0]: table[metric] for key, table in per_category.items()
                          if key.endswith(f".{level}")})  # fmt: skip
    frame.plot.bar(ax=ax, rot=0)
    ax.set(ylabel=metric, title=f"{level}-level {metric} by category", ylim=(0, 1))
    return ax


def footprint_plot(footprint: pd.DataFrame, ax=None):
    """Items held per tier after each session: one thin line per conversation, the mean in bold."""
    ax = ax or plt.subplots(figsize=(6, 4))[1]
    frame = footprint[footprint["session"] != "questions"]
    frame = frame.assign(step=frame.groupby("conversation").cumcount() + 1)
    for n, tier in enumerate(("episodic", "semantic")):
        for _, rows in frame.groupby("conversation"):
            ax.plot(rows["step"], rows[tier], color=f"C{n}", alpha=0.25, linewidth=0.8)
        mean = frame.groupby("step")[tier].mean()
        ax.plot(mean.index, mean.values, color=f"C{n}", linewidth=2.5, label=f"{tier} (mean over conversations)")
    ax.set(xlabel="sessions replayed", ylabel="items held", title="memory footprint per tier")
    ax.legend()
    return ax


def pareto_plot(points: pd.DataFrame, x: str, y: str, label: str | None = None, ax=None):
    """Recall against footprint for sweep points, with the Pareto front drawn as a line."""
    ax = ax or plt.subplots(figsize=(6, 4))[1]
    ax.scatter(points[x], points[y], alpha=0.7)
    front = pareto_front(points, x, y)
    ax.plot(front[x], front[y], color="C3", marker="o", label="Pareto front")
    if label:
        for _, row in points.iterrows():
            ax.annotate(f"{row[label]:g}" if isinstance(row[label], float) else str(row[label]),
                        (row[x], row[y]), fontsize=7, alpha=0.7, xytext=(3, -8), textcoords="offset points")  # fmt: skip
    ax.set(xlabel=f"{x} (items held / turns seen)" if x == "footprint" else x, ylabel=y, title=f"{y} against {x}")
    ax.legend()
    return ax


def answer_curve(table: pd.DataFrame, ax=None, kept: bool = False):
    """Answer-in-context against the token budget, one line per category and one for all (``kept``: the
    change consolidation causes, with consolidation minus without)."""
    ax = ax or plt.subplots(figsize=(6, 4))[1]
    budgets = [c for c in table.columns if c != "questions"]
    for category, row in table.iterrows():
        ax.plot(budgets, row[budgets].astype(float), marker="o", label=str(category),
                linewidth=3 if category == "all" else 1.5)  # fmt: skip
    if kept:
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set(ylabel="answer in context: consolidated − not", title="answers kept through consolidation")
    else:
        ax.set(ylabel="answer in context", ylim=(0, 1), title="gold answer found in the assembled context")
    ax.set(xscale="log", xlabel="context budget (tokens)")
    ax.legend(fontsize=8)
    return ax


def stale_bars(stale: dict[str, dict[str, float]], ax=None):
    """Per system: the share of updated-fact questions with a stale statement above the current one, and
    with the current one missing from the top k (lower is better)."""
    ax = ax or plt.subplots(figsize=(7, 4))[1]
    frame = pd.DataFrame(stale).T
    frame[[c for c in frame.columns if c != "questions" and not c.startswith("p(")]].plot.bar(ax=ax, rot=20)
    ax.set(ylabel="share of updated-fact questions", ylim=(0, 1), title="stale facts against current ones (lower is better)")
    return ax


def compression_bars(compression: dict[str, dict[str, float]], ax=None):
    """Per tier: items and tokens held as shares of the units and tokens seen."""
    ax = ax or plt.subplots(figsize=(6, 4))[1]
    frame = pd.DataFrame(compression).T[["items_share", "tokens_share"]]
    frame.plot.bar(ax=ax, rot=0)
    ax.set(ylabel="held / seen", title="compression at question time, per tier")
    return ax


def qa_curve(summary: pd.DataFrame, judge: str, ax=None):
    """Judged accuracy against the context budget, one line per system (all categories)."""
    ax = ax or plt.subplots(figsize=(6, 4))[1]
    for system, rows in summary[summary["category"] == "all"].groupby("system", sort=False):
        ax.plot(rows["budget"], rows["accuracy"], marker="o", label=system)
    ax.set(xscale="log", xlabel="context budget (tokens)", ylabel="judged accuracy", ylim=(0, 1),
           title=f"end-to-end QA (judge: {judge})")  # fmt: skip
    ax.legend(fontsize=8)
    return ax


def plot_result(result: Any, run_dir: Path) -> list[Path]:
    """Every plot the run's figures allow, as PNGs in ``run_dir``."""
    drawers = []
    if result.qa.get("summary"):
        drawers.append(("qa_accuracy.png", lambda: qa_curve(pd.DataFrame(result.qa["summary"]), result.qa["models"]["judge"])))
    if result.answer_in_context is not None:
        drawers.append(("answer_in_context.png", lambda: answer_curve(result.answer_in_context)))
    if result.answer_kept is not None:
        drawers.append(("answer_kept.png", lambda: answer_curve(result.answer_kept, kept=True)))
    for level in result.config.metrics.levels:
        drawers += [(f"recall_at_k.{level}.png", lambda level=level: recall_curves(result.metrics, level)),
                    (f"by_category.{level}.png", lambda level=level: category_bars(result.per_category, level, _metric(result)))]  # fmt: skip
    if "compression" in result.memory:
        drawers.append(("compression.png", lambda: compression_bars(result.memory["compression"])))
    if "stale_above_current" in result.memory.get("quality", {}):
        drawers.append(("stale_above_current.png", lambda: stale_bars(result.memory["quality"]["stale_above_current"])))
    drawers.append(("footprint.png", lambda: footprint_plot(result.footprint)))
    saved = []
    for name, draw in drawers:
        ax = draw()
        ax.figure.tight_layout()
        ax.figure.savefig(run_dir / name, dpi=110)
        plt.close(ax.figure)
        saved.append(run_dir / name)
    return saved


def _metric(result: Any) -> str:
    k = 10 if 10 in result.config.metrics.k else max(result.config.metrics.k)
    return f"recall@{k}"
