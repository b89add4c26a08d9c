"""Retrieval and consolidation metrics on ranx: turn- and session-level qrels and runs.

Metric names are ranx's (``recall@10``, ``hit_rate@5``, ``ndcg@10``, ``mrr``) plus ``recall_all@k``
(every evidence item in the top k), which ranx lacks. Dataset-specific names are aliases in
``ALIASES``. Every question id appears in every run: a question with no hit gets the placeholder
``NO_HIT`` (never relevant), because ranx refuses a run in which no query has a hit.

>>> qrels = {"q1": {"D1:1": 1}}
>>> scores = evaluate_run(qrels, {"q1": {"D1:1": 0.9, "D1:2": 0.5}}, ks=(1,))
>>> scores.loc["q1", "recall@1"], scores.loc["q1", "recall_all@1"]
(np.float64(1.0), np.float64(1.0))
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd
from ranx import Qrels, Run, evaluate

from openclaw_lab.consolidation.merge import sessions_of
from openclaw_lab.datasets.types import Benchmark, Question
from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.protocol import RunDict

__all__ = [
    "ALIASES", "NO_HIT", "metric_names", "qrels_for", "to_level", "complete_run", "evaluate_run",
    "by_category", "memory_counts", "memory_ratios", "pareto_front", "recall_at_footprint", "STAT_TESTS",
    "question_counts", "question_table", "unscored_note", "mcnemar", "question_scores",
]  # fmt: skip

NO_HIT = "__no_hit__"
# LongMemEval's names for the same measures.
ALIASES = {"recall_any@{k}": "hit_rate@{k}", "ndcg_any@{k}": "ndcg@{k}"}
RANX_FAMILIES = ("recall", "hit_rate", "ndcg")
STAT_TESTS = ("student", "fisher", "tukey")  # ranx.compare's paired tests


SESSION_LABELS = ("answer-sessions", "has-answer")
NDCG_VARIANTS = ("standard", "longmemeval")  # ranx's nDCG; LongMemEval's (ranks 1 and 2 undiscounted): ndcg_lme


def metric_names(ks: Sequence[int], ndcg_variants: Sequence[str] = ("standard",)) -> list[str]:
    families = (*RANX_FAMILIES, "recall_all", *(["ndcg_lme"] if "longmemeval" in ndcg_variants else []))
    return [f"{family}@{k}" for family in families for k in ks] + ["mrr"]


def qrels_for(questions: Iterable[Question], level: str, session_labels: str = "answer-sessions") -> dict[str, dict[str, int]]:
    """Relevant turn or session ids per question; questions without evidence are left out.

    ``session_labels`` names the session label set: ``answer-sessions`` (every session the dataset
    names as evidence) or ``has-answer`` (LongMemEval's evaluation rule: only the answer sessions that
    hold a user turn marked has_answer). A dataset without has_answer marks has no such set.
    """
    if level == "turn":
        qrels = {q.id: {doc: 1 for doc in q.evidence_turn_ids} for q in questions}
    elif session_labels == "answer-sessions":
        qrels = {q.id: {doc: 1 for doc in q.evidence_session_ids} for q in questions}
    else:
        questions = list(questions)
        if any(q.has_answer_session_ids is None for q in questions):
            raise ValueError("metrics.session_labels: 'has-answer' needs has_answer marks, which this dataset lacks")
        qrels = {q.id: {doc: 1 for doc in q.has_answer_session_ids or ()} for q in questions}
    return {qid: docs for qid, docs in qrels.items() if docs}


def to_level(run: RunDict, items: Mapping[str, MemoryItem], level: str) -> RunDict:
    """Map item ids to their turn ids (or sessions: a merged memory's include those of what it absorbed), keeping
    each doc's best score (higher is better)."""
    if level == "turn":
        docs_of = {i: item.source_ids for i, item in items.items()}
    else:
        docs_of = {i: sessions_of(item) for i, item in items.items()}
    out: RunDict = {}
    for qid, hits in run.items():
        docs: dict[str, float] = {}
        for item_id, score in hits.items():
            for doc in docs_of[item_id]:
                best = docs.get(doc)
                if best is None or score > best:
                    docs[doc] = score
        out[qid] = docs
    return out


def complete_run(run: RunDict, qids: Iterable[str]) -> RunDict:
    """Exactly the qrels' question ids, each with at least one (placeholder) entry."""
    return {qid: (run.get(qid) or {NO_HIT: 0.0}) for qid in qids}


def _ranked(run: RunDict, qids: Iterable[str], depth: int) -> dict[str, list[str]]:
    """Each question's first ``depth`` docs, best first (score descending, then doc id)."""
    return {qid: [doc for doc, _ in sorted(run[qid].items(), key=lambda kv: (-kv[1], kv[0]))[:depth]] for qid in qids}


def _recall_all(qrels: Mapping[str, Mapping[str, int]], ranked: Mapping[str, list[str]], k: int) -> dict[str, float]:
    return {qid: float(set(relevant) <= set(ranked[qid][:k])) for qid, relevant in qrels.items()}


def _ndcg_lme(qrels: Mapping[str, Mapping[str, int]], ranked: Mapping[str, list[str]], k: int) -> dict[str, float]:
    """LongMemEval's nDCG@k (``eval_utils.dcg``): the first two ranks are not discounted.

    >>> _ndcg_lme({"q": {"b": 1}}, {"q": ["a", "b"]}, 10)  # rank 2 counts in full there
    {'q': 1.0}
    """
    def dcg(gains: list[float]) -> float:
        return gains[0] + sum(g / math.log2(i) for i, g in enumerate(gains[1:], 2)) if gains else 0.0

    out = {}
    for qid, relevant in qrels.items():
        ideal = dcg(sorted((float(v) for v in relevant.values()), reverse=True)[:k])
        out[qid] = dcg([float(relevant.get(doc, 0)) for doc in ranked[qid][:k]]) / ideal if ideal else 0.0
    return out


OWN_METRICS = {"recall_all": _recall_all, "ndcg_lme": _ndcg_lme}  # the metrics ranx lacks


@lru_cache(maxsize=8)
def _ranx_qrels(qrels: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]) -> Qrels:
    """ranx's Qrels, built once for the labels that every system, and every sweep point, is scored against."""
    return Qrels({qid: dict(docs) for qid, docs in qrels})


def evaluate_run(
    qrels: Mapping[str, Mapping[str, int]], run: RunDict, ks: Sequence[int], ndcg_variants: Sequence[str] = ("standard",)
) -> pd.DataFrame:
    """Per-question scores (rows: question ids; columns: metric names)."""
    if not qrels:
        raise ValueError("qrels: no question has evidence; nothing to evaluate")
    return question_scores(qrels, run, metric_names(ks, ndcg_variants))


def question_scores(qrels: Mapping[str, Mapping[str, int]], run: RunDict, metrics: Sequence[str]) -> pd.DataFrame:
    """Per-question scores of ``metrics``: any of ranx's names, and ours (``recall_all@k``, ``ndcg_lme@k``)."""
    run = complete_run(run, qrels)
    own = {name: _own_metric(name) for name in metrics if name.split("@")[0] in OWN_METRICS}
    table = pd.DataFrame(index=list(qrels))
    if ranx_names := [name for name in metrics if name not in own]:
        ranx_run = Run(run)
        try:
            evaluate(_ranx_qrels(tuple((qid, tuple(docs.items())) for qid, docs in qrels.items())), ranx_run,
                     ranx_names, save_results_in_run=True)  # fmt: skip
        except ValueError as error:
            raise ValueError(f"metrics: {error} Ours: {', '.join(f'{f}@k' for f in OWN_METRICS)}.") from None
        for name in ranx_names:
            table[name] = pd.Series(ranx_run.scores[name])
    if own:
        ranked = _ranked(run, qrels, max(k for _, k in own.values()))  # one sort per question for ours
        for name, (family, k) in own.items():
            table[name] = pd.Series(OWN_METRICS[family](qrels, ranked, k))
    return table[list(metrics)].astype(float)


def _own_metric(name: str) -> tuple[str, int]:
    family, _, cut = name.partition("@")
    if not cut.isdigit() or int(cut) < 1:
        raise ValueError(f"metrics: {name!r} needs a cut-off k >= 1, as in {family}@10")
    return family, int(cut)


def by_category(scores: pd.DataFrame, categories: Mapping[str, str]) -> pd.DataFrame:
    """Mean of each metric per question category, with an ``all`` row and question counts."""
    frame = scores.assign(category=[categories[qid] for qid in scores.index])
    table = frame.groupby("category").mean(numeric_only=True)
    table.loc["all"] = scores.mean(numeric_only=True)
    table["questions"] = frame.groupby("category").size().reindex(table.index).fillna(len(scores)).astype(int)
    return table


def memory_counts(
    questions: Iterable[Question], items: Iterable[MemoryItem], promoted: set[str], session_of: Mapping[str, str] | None = None
) -> dict[str, int]:
    """Counts for one conversation: evidence turns, those held per tier at question time, promoted.

    With ``session_of`` (turn id -> session id) the counts are of evidence sessions instead: what
    session units hold (a session keyed by its user turns never holds its assistant turns, yet it
    is the session that retrieval finds). Turn ids are unique only within a conversation, so counts
    are summed across conversations and turned into ratios by ``memory_ratios``.
    """
    questions = list(questions)
    evidence = {t for q in questions for t in q.evidence_turn_ids}
    held: dict[str, set[str]] = {"episodic": set(), "semantic": set()}
    for item in items:
        held.setdefault(item.tier.value, set()).update(item.source_ids)
    if session_of is not None:
        evidence = {s for q in questions for s in q.evidence_session_ids}
        promoted = {session_of[t] for t in promoted if t in session_of}
        held = {tier: {session_of[t] for t in turns if t in session_of} for tier, turns in held.items()}
    counts = {"evidence": len(evidence), "promoted": len(promoted), "promoted_evidence": len(evidence & promoted)}
    counts |= {f"held_{tier}": len(evidence & turns) for tier, turns in held.items()}
    counts["held_any"] = len(evidence & set().union(*held.values()))
    return counts


def memory_ratios(counts: Mapping[str, int], items_kept: int, units_seen: int) -> dict[str, float]:
    """Evidence retention per tier, footprint, and promotion precision/recall against evidence."""
    evidence = counts["evidence"] or 1
    ratios = {f"retention.{key[5:]}": counts[key] / evidence for key in counts if key.startswith("held_")}
    ratios["footprint"] = items_kept / units_seen if units_seen else 0.0
    ratios["promotion.precision"] = counts["promoted_evidence"] / counts["promoted"] if counts["promoted"] else 0.0
    ratios["promotion.recall"] = counts["promoted_evidence"] / evidence
    return ratios


def pareto_front(points: pd.DataFrame, x: str = "footprint", y: str = "recall") -> pd.DataFrame:
    """Points not dominated on (lower ``x``, higher ``y``), sorted by ``x``.

    >>> front = pareto_front(pd.DataFrame({"footprint": [0.2, 0.5, 0.4], "recall": [0.6, 0.9, 0.5]}))
    >>> front["footprint"].tolist()
    [0.2, 0.5]
    """
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


def question_counts(benchmark: Benchmark, qrels: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Questions loaded, and per level how many were scored and how many left out (no evidence at that level)."""
    loaded = len(benchmark.questions)
    return {"loaded": loaded, "scored": {level: len(q) for level, q in qrels.items()},
            "unscored": {level: loaded - len(q) for level, q in qrels.items()}}  # fmt: skip


def question_table(benchmark: Benchmark) -> pd.DataFrame:
    """One row per loaded question: its conversation, category and abstention flag (what ``compare`` filters by)."""
    return pd.DataFrame([{"question": q.id, "conversation": q.conversation_id, "category": q.category,
                          "abstention": q.abstention} for q in benchmark.questions],
                        columns=["question", "conversation", "category", "abstention"])  # fmt: skip


def unscored_note(counts: Mapping[str, Any]) -> str:
    """One line saying how many questions were scored, and how many were not and why."""
    parts = [f"{counts['scored'][level]} scored at {level} level" + (
             f" ({counts['unscored'][level]} left out: no evidence at that level)" if counts["unscored"][level] else "")
             for level in counts["scored"]]  # fmt: skip
    return f"questions: {counts['loaded']} loaded; " + "; ".join(parts)


def mcnemar(a: Sequence[bool], b: Sequence[bool]) -> float:
    """McNemar's exact two-sided p-value for paired verdicts (1.0 when they never disagree).

    >>> round(mcnemar([True] * 10 + [False] * 2, [False] * 10 + [True] * 2), 4)  # 10 against 2 disagreements
    0.0386
    """
    from scipy.stats import binomtest

    only_a = sum(x and not y for x, y in zip(a, b))
    only_b = sum(y and not x for x, y in zip(a, b))
    return 1.0 if only_a + only_b == 0 else float(binomtest(only_a, only_a + only_b, 0.5).pvalue)
