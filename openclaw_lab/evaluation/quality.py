"""Consolidation quality: stale facts, duplicates, compression, provenance. Plain functions.

The first three need a dataset's fact labels (``Benchmark.labels``: the synthetic generator writes them);
where a dataset has none they are absent from the results, never 0. ``compression`` and ``provenance``
need no labels and are reported for every dataset.

- ``stale_above_current``: among questions about an updated fact, the share whose run ranks a superseded
  statement above the current one (lower is better), and the share whose current statement is not in
  the top k.
- ``stale_retention``: the share of superseded statements still held at question time by some item not
  marked superseded (``metadata["superseded_by"]``) (lower is better).
- ``duplicate_handling``: precision and recall of the turn pairs that consolidation merged into one item,
  against the labelled duplicates (statements of one fact and version; higher is better; one-turn units;
  session summaries, which join statements on purpose, are not merges).
- ``expired_retention``: the share of plans whose date had passed by question time still held by some
  item not marked ``valid_until`` (lower is better).
- ``compression``: per tier, the items and tokens held at question time against the units and tokens the
  replay saw (lower holds less; read it beside retention and answer kept).
- ``provenance``: source ids that resolve to no dataset turn, and items marked superseded by an item that
  is no longer held, so that what replaced them cannot be found (both should be 0).

>>> from openclaw_lab.datasets.types import Question
>>> from datetime import datetime
>>> q = Question("q", "c", "Where does Ana live?", "Lyon", "updated-fact", datetime(2023, 5, 8),
...              evidence_turn_ids=("t9",), superseded_turn_ids=("t1",))
>>> stale_above_current([q], {"q": {"t1": 0.9, "t9": 0.8}}, k=1)
{'questions': 1, 'stale_above_current': 1.0, 'current_missing@1': 1.0}
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import datetime
from itertools import combinations
from typing import Any

from openclaw_lab.consolidation import SUMMARY_OF, SUPERSEDED_BY, VALID_UNTIL, semantic_id
from openclaw_lab.datasets.types import FactLabels, Question, Statement
from openclaw_lab.evaluation.metrics import mcnemar
from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.protocol import RunDict

__all__ = [
    "stale_above_current", "stale_per_question", "stale_retention", "expired_retention", "duplicate_handling",
    "compression", "provenance", "quality_figures", "SUPERSEDED_BY",
]  # fmt: skip


def stale_per_question(questions: Iterable[Question], turn_run: RunDict, k: int) -> dict[str, dict[str, bool]]:
    """Per updated-fact question: is a stale statement ranked above the current one, is the current one
    missing from the top ``k`` (a turn-level run; ties broken by id). The paired tests read these."""
    out = {}
    for q in questions:
        if not (q.superseded_turn_ids and q.evidence_turn_ids):
            continue
        ranking = sorted(turn_run.get(q.id, {}).items(), key=lambda kv: (-kv[1], kv[0]))
        position = {doc: rank for rank, (doc, _) in enumerate(ranking)}
        stale_ids = set(q.superseded_turn_ids)  # LongMemEval keeps the old statement among the evidence
        current = min((position[t] for t in q.evidence_turn_ids if t in position and t not in stale_ids), default=None)
        stale = min((position[t] for t in q.superseded_turn_ids if t in position), default=None)
        out[q.id] = {"stale_above_current": stale is not None and (current is None or stale < current),
                     f"current_missing@{k}": current is None or current >= k}  # fmt: skip
    return out


def stale_above_current(questions: Iterable[Question], turn_run: RunDict, k: int) -> dict[str, Any] | None:
    """Shares of updated-fact questions with a stale statement ranked above the current one, and with the
    current one missing from the top ``k``. None: no such question."""
    flags = stale_per_question(questions, turn_run, k)
    if not flags:
        return None
    return _shares(flags)


def stale_retention(labels: FactLabels, items: Iterable[MemoryItem]) -> dict[str, Any] | None:
    """The share of superseded statements held by some item that is not marked superseded. None: no update."""
    superseded = labels.superseded
    if not superseded:
        return None
    stale = _held_unmarked(superseded, items, SUPERSEDED_BY)
    return {"stale_retention": len(stale) / len(superseded), "superseded": len(superseded)}


def _held_unmarked(turns: Collection[str], items: Iterable[MemoryItem], mark: str) -> set[str]:
    """The ``turns`` that some item holding them does not carry ``mark`` on."""
    return {turn for item in items if mark not in item.metadata for turn in item.source_ids if turn in turns}


def expired_retention(
    labels: FactLabels, items: Iterable[MemoryItem], question_time: Mapping[str, datetime]
) -> dict[str, Any] | None:
    """The share of plans expired at their conversation's question time (``question_time``: turn id -> time)
    that some item still holds unmarked. None: no plan had expired.

    >>> from datetime import datetime, timezone
    >>> at = lambda day: datetime(2023, 5, day, tzinfo=timezone.utc)
    >>> labels = FactLabels(expires={"p1": at(3), "p2": at(20)})  # p2 still ahead at question time
    >>> expired_retention(labels, [MemoryItem.new("Ana flies on 2 May", now=at(1), source_ids=["p1"])], {"p1": at(8), "p2": at(8)})
    {'expired_retention': 1.0, 'expired': 1}
    """
    expired = {turn for turn, end in labels.expires.items() if turn in question_time and end <= question_time[turn]}
    if not expired:
        return None
    stale = _held_unmarked(expired, items, VALID_UNTIL)
    return {"expired_retention": len(stale) / len(expired), "expired": len(expired)}


def duplicate_handling(labels: FactLabels, items: Iterable[MemoryItem]) -> dict[str, Any] | None:
    """Precision and recall of merged turn pairs against the duplicates: statements of the same fact and
    version (a statement and its restatements, and restatements among themselves). None: none labelled.

    Precision judges the merged pairs that involve a labelled statement (merging a fact into another
    fact, or into chatter, is wrong); merging chatter with chatter is not judged.

    >>> from datetime import datetime
    >>> labels = FactLabels(statements={t: Statement(t, f, 1) for t, f in [("t1", "a"), ("t5", "a"), ("t2", "b"), ("t7", "b")]})
    >>> merged = MemoryItem.new("x", now=datetime(2023, 5, 8), source_ids=["t1", "t5", "t6"])
    >>> duplicate_handling(labels, [merged])  # pairs t1-t5 (right), t1-t6 and t5-t6 (wrong); t2-t7 missed
    {'merge_precision': 0.3333333333333333, 'merge_recall': 0.5, 'merged_pairs': 3, 'duplicate_pairs': 2}
    """
    versions: dict[tuple[str, int], list[str]] = {}
    for statement in labels.statements.values():
        versions.setdefault((statement.fact, statement.version), []).append(statement.turn_id)
    wanted = {frozenset(pair) for turns in versions.values() for pair in combinations(sorted(turns), 2)}
    if not wanted:
        return None
    merged = {frozenset(pair) for item in items if SUMMARY_OF not in item.metadata  # a summary joins facts on purpose
              for pair in combinations(sorted(set(item.source_ids)), 2)}  # fmt: skip
    judged = {pair for pair in merged if any(turn in labels.statements for turn in pair)}
    right = len(judged & wanted)
    return {"merge_precision": right / len(judged) if judged else None, "merge_recall": right / len(wanted),
            "merged_pairs": len(judged), "duplicate_pairs": len(wanted)}  # fmt: skip


def compression(
    items: Iterable[MemoryItem], units_seen: int, tokens_seen: int, count_tokens: Callable[[str], int]
) -> dict[str, dict[str, float]]:
    """Per tier: items and tokens held, and their shares of the units and tokens the replay saw.

    >>> from datetime import datetime
    >>> held = [MemoryItem.new("a b", now=datetime(2023, 5, 8)), MemoryItem.new("c", now=datetime(2023, 5, 8), tier="semantic")]
    >>> compression(held, units_seen=4, tokens_seen=10, count_tokens=lambda text: len(text.split()))["episodic"]
    {'items': 1, 'tokens': 2, 'items_share': 0.25, 'tokens_share': 0.2}
    """
    if units_seen < 1 or tokens_seen < 1:
        raise ValueError(f"units_seen/tokens_seen: {units_seen}, {tokens_seen} must be positive")
    out: dict[str, dict[str, float]] = {}
    for item in items:
        tier = out.setdefault(item.tier.value, {"items": 0, "tokens": 0})
        tier["items"] += 1
        tier["tokens"] += count_tokens(item.content)
    out["all"] = {key: sum(tier[key] for tier in out.values()) for key in ("items", "tokens")}
    for tier in out.values():
        tier |= {"items_share": tier["items"] / units_seen, "tokens_share": tier["tokens"] / tokens_seen}
    return out


def provenance(items: Sequence[MemoryItem], turn_ids: Collection[str]) -> dict[str, int]:
    """Broken links in the memory held: source ids naming no dataset turn, and superseded items whose
    replacement is no longer held (the current fact is then reachable only through a deleted item).

    >>> from datetime import datetime
    >>> old = MemoryItem.new("Ana lives in Porto", now=datetime(2023, 5, 8), source_ids=["t1"], metadata={SUPERSEDED_BY: "gone"})
    >>> provenance([old], {"t1"})
    {'items': 1, 'unknown_sources': 0, 'orphaned_superseded': 1}
    """
    held = {item.id for item in items}
    unknown = sum(1 for item in items for turn in item.source_ids if turn not in turn_ids)
    replaced_by = [str(item.metadata[SUPERSEDED_BY]) for item in items if SUPERSEDED_BY in item.metadata]
    orphaned = sum(1 for r in replaced_by if r not in held and semantic_id(r) not in held)  # its copy keeps it reachable
    return {"items": len(items), "unknown_sources": unknown, "orphaned_superseded": orphaned}


def quality_figures(
    labels: FactLabels | None, questions: Sequence[Question], items: Sequence[MemoryItem],
    turn_runs: Mapping[str, RunDict], k: int, question_time: Mapping[str, datetime] | None = None,
) -> dict[str, Any]:
    """Every figure the labels allow: per system for the ranking one (with McNemar's p against the first
    system on the same questions; it needs only questions that name superseded statements, as LongMemEval's
    knowledge-update questions do), for the memory for the others (they need fact labels)."""
    figures: dict[str, Any] = {}
    for name, value in () if labels is None else (("stale_retention", stale_retention(labels, items)),
                        ("expired_retention", expired_retention(labels, items, question_time or {})),
                        ("duplicates", duplicate_handling(labels, items))):  # fmt: skip
        if value is not None:
            figures[name] = value
    flags = {system: stale_per_question(questions, run, k) for system, run in turn_runs.items()}
    if any(flags.values()):
        figures["stale_above_current"] = {system: _shares(per_question, flags[next(iter(flags))])
                                          for system, per_question in flags.items()}  # fmt: skip
    return figures


def _shares(
    flags: Mapping[str, Mapping[str, bool]], baseline: Mapping[str, Mapping[str, bool]] | None = None
) -> dict[str, Any]:
    """The share of questions with each flag, and McNemar's p of each against the baseline's flags (if any)."""
    ids = sorted(flags)
    out: dict[str, Any] = {"questions": len(ids)}
    for name in next(iter(flags.values())):
        mine = [flags[q][name] for q in ids]
        out[name] = sum(mine) / len(ids)
        if baseline is not None:
            out[f"p({name})"] = mcnemar([baseline[q][name] for q in ids], mine)
    return out
