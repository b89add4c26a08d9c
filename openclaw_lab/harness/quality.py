"""Consolidation quality against ground truth: stale facts, duplicates. Plain functions, higher is not always better.

They need a dataset's fact labels (``Benchmark.labels``: the synthetic generator writes them); where a
dataset has none they are absent from the results, never 0.

- ``stale_above_current``: among questions about an updated fact, the share whose run ranks a superseded
  statement above the current one (lower is better), and the share whose current statement is not in
  the top k.
- ``stale_retention``: the share of superseded statements still held at question time by some item not
  marked superseded (``metadata["superseded_by"]``) (lower is better).
- ``duplicate_handling``: precision and recall of the turn pairs that consolidation merged into one item,
  against the labelled duplicate pairs (higher is better; only meaningful for one-turn units).

>>> from openclaw_lab.datasets.types import Question
>>> from datetime import datetime
>>> q = Question("q", "c", "Where does Ana live?", "Lyon", "updated-fact", datetime(2023, 5, 8),
...              evidence_turn_ids=("t9",), superseded_turn_ids=("t1",))
>>> stale_above_current([q], {"q": {"t1": 0.9, "t9": 0.8}}, k=1)
{'stale_above_current': 1.0, 'current_missing@1': 1.0, 'questions': 1}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations
from typing import Any

from openclaw_lab.consolidation.supersession import SUPERSEDED_BY
from openclaw_lab.datasets.types import FactLabels, Question
from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.protocol import RunDict

__all__ = ["stale_above_current", "stale_retention", "duplicate_handling", "quality_figures", "SUPERSEDED_BY"]



def stale_above_current(questions: Iterable[Question], turn_run: RunDict, k: int) -> dict[str, Any] | None:
    """Shares of updated-fact questions with a stale statement ranked above the current one, and with the
    current one missing from the top ``k`` (a turn-level run; ties broken by id). None: no such question."""
    asked = [q for q in questions if q.superseded_turn_ids and q.evidence_turn_ids]
    if not asked:
        return None
    above = missing = 0
    for q in asked:
        ranking = sorted(turn_run.get(q.id, {}).items(), key=lambda kv: (-kv[1], kv[0]))
        position = {doc: rank for rank, (doc, _) in enumerate(ranking)}
        current = min((position[t] for t in q.evidence_turn_ids if t in position), default=None)
        stale = min((position[t] for t in q.superseded_turn_ids if t in position), default=None)
        above += stale is not None and (current is None or stale < current)
        missing += current is None or current >= k
    return {"stale_above_current": above / len(asked), f"current_missing@{k}": missing / len(asked),
            "questions": len(asked)}  # fmt: skip


def stale_retention(labels: FactLabels, items: Iterable[MemoryItem]) -> dict[str, Any] | None:
    """The share of superseded statements held by some item that is not marked superseded. None: no update."""
    superseded = labels.superseded
    if not superseded:
        return None
    holders: dict[str, list[MemoryItem]] = {}
    for item in items:
        for turn in item.source_ids:
            if turn in superseded:
                holders.setdefault(turn, []).append(item)
    stale = [t for t, held in holders.items() if not all(SUPERSEDED_BY in item.metadata for item in held)]
    return {"stale_retention": len(stale) / len(superseded), "superseded": len(superseded)}


def duplicate_handling(labels: FactLabels, items: Iterable[MemoryItem]) -> dict[str, Any] | None:
    """Precision and recall of merged turn pairs against the labelled duplicates. None: none labelled.

    >>> from datetime import datetime
    >>> labels = FactLabels(duplicates=[("t1", "t5"), ("t2", "t7")])
    >>> merged = MemoryItem.new("x", now=datetime(2023, 5, 8), source_ids=["t1", "t5", "t6"])
    >>> duplicate_handling(labels, [merged])  # pairs t1-t5 (right), t1-t6 and t5-t6 (wrong); t2-t7 missed
    {'merge_precision': 0.3333333333333333, 'merge_recall': 0.5, 'merged_pairs': 3, 'duplicate_pairs': 2}
    """
    wanted = {frozenset(pair) for pair in labels.duplicates}
    if not wanted:
        return None
    merged = {frozenset(pair) for item in items for pair in combinations(sorted(set(item.source_ids)), 2)}
    right = len(merged & wanted)
    return {"merge_precision": right / len(merged) if merged else None, "merge_recall": right / len(wanted),
            "merged_pairs": len(merged), "duplicate_pairs": len(wanted)}  # fmt: skip


def quality_figures(
    labels: FactLabels | None, questions: Sequence[Question], items: Sequence[MemoryItem],
    turn_runs: Mapping[str, RunDict], k: int,
) -> dict[str, Any]:
    """Every figure the labels allow: per system for the ranking one, for the memory for the others."""
    if labels is None:
        return {}
    figures: dict[str, Any] = {}
    for name, value in (("stale_retention", stale_retention(labels, items)),
                        ("duplicates", duplicate_handling(labels, items))):  # fmt: skip
        if value is not None:
            figures[name] = value
    ranking = {system: stale_above_current(questions, run, k) for system, run in turn_runs.items()}
    if any(value is not None for value in ranking.values()):
        figures["stale_above_current"] = ranking
    return figures
