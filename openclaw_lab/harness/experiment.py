"""run_experiment: load a dataset, replay it through a memory stack, evaluate every system.

>>> from openclaw_lab.harness.config import ExperimentConfig
>>> config = ExperimentConfig.from_dict({"name": "doc", "dataset": {"name": "synthetic", "params": {"n_turns": 200}}})
>>> result = run_experiment(config, results_dir=None)  # doctest: +SKIP
>>> result.table().loc["dense", "session.recall@10"]  # doctest: +SKIP
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from openclaw_lab.agent.remember import remember_metrics
from openclaw_lab.datasets.types import Benchmark
from openclaw_lab.embedding import Embedder
from openclaw_lab.engines import Engine, LocalEngine, for_tasks, values
from openclaw_lab.evaluation.answers import answer_in_context_table
from openclaw_lab.evaluation.metrics import (
    by_category, evaluate_run, memory_counts, memory_ratios, qrels_for, question_counts, question_table, to_level,
)  # fmt: skip
from openclaw_lab.evaluation.quality import compression, provenance, quality_figures
from openclaw_lab.harness.build import Built, build, build_dataset, resolve_embedding
from openclaw_lab.harness.config import SESSION_UNITS, DatasetConfig, ExperimentConfig
from openclaw_lab.harness.costs import cost_table, measured
from openclaw_lab.harness.environment import environment, git_commit
from openclaw_lab.harness.qa import ORACLE, evidence_run, run_qa, summarise
from openclaw_lab.harness.report import report_text
from openclaw_lab.harness.results import as_written, metrics_document, new_run_dir, run_folder, write_result
from openclaw_lab.llm import LLMError
from openclaw_lab.model import MemoryItem
from openclaw_lab.replay.conversation import ConversationReplay, ReplayPlan, unit_texts
from openclaw_lab.replay.fork import replay_each
from openclaw_lab.replay.systems import System, handle_superseded
from openclaw_lab.retrieval.protocol import RunDict

__all__ = [
    "ExperimentResult", "Evaluation", "Replayed", "run_experiment", "load_benchmark", "replay_benchmark",
    "replay_plans", "evaluate_systems",
]  # fmt: skip


@dataclass
class ExperimentResult:
    """Metrics and runs of one experiment; ``path`` is its results folder (None when not written)."""

    config: ExperimentConfig
    metrics: dict[str, dict[str, float]]  # system -> "level.metric" -> mean
    memory: dict[str, Any]  # retention, footprint and promotion figures
    per_question: dict[str, pd.DataFrame]  # "system.level" -> per-question scores
    per_category: dict[str, pd.DataFrame]  # "system.level" -> category means
    runs: dict[str, RunDict]  # "system.level" -> run
    qrels: dict[str, dict[str, dict[str, int]]]  # level -> qrels
    footprint: pd.DataFrame
    models: dict[str, Any] = field(default_factory=dict)  # cross-fitted models: folds and provenance
    answer_in_context: pd.DataFrame | None = None  # category x token budget (metrics.answer_budgets)
    answer_kept: pd.DataFrame | None = None  # answer-in-context with consolidation minus without (metrics.answer_kept)
    costs: pd.DataFrame | None = None  # per system: ingest and query time, peak memory (harness.costs)
    consolidations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # conversation -> reports
    questions: dict[str, Any] = field(default_factory=dict)  # loaded, and scored / left out per level
    question_info: pd.DataFrame | None = None  # one row per question: conversation, category, abstention
    qa: dict[str, Any] = field(default_factory=dict)  # the QA stage's summary, models and calls (or why it was skipped)
    qa_table: pd.DataFrame | None = None  # one row per (system, budget, question)
    environment: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    plots: list[str] = field(default_factory=list)  # the plot files written beside it

    def table(self, metrics: Sequence[str] | None = None) -> pd.DataFrame:
        """Systems as rows, ``level.metric`` as columns (higher is better)."""
        frame = pd.DataFrame(self.metrics).T
        return frame[list(metrics)] if metrics else frame

    def record(self) -> dict[str, Any]:
        """The run as its files read back (``results.read_record``): what the report and the CLI show."""
        return {"path": self.path, "metrics": as_written(metrics_document(self)), "config": self.config.to_dict(),
                "environment": as_written(self.environment), "costs": self.costs, "plots": list(self.plots)}


@dataclass(frozen=True)
class Replayed:
    """A config's replay made beforehand (a sweep replays points that differ only in decay together): each
    conversation's memory, the point's share of what the replay cost (``seconds``, ``peak_rss_mib``) and, when
    made, the systems' evaluation of that memory (points left with the same memory share one)."""

    replays: list[ConversationReplay]
    cost: dict[str, float]
    evaluation: Evaluation | None = None


def load_benchmark(settings: DatasetConfig) -> Benchmark:
    """The configured dataset, or its fallback when it is not on the data path (names checked first)."""
    return build_dataset(settings)()


def replay_benchmark(
    benchmark: Benchmark, plan: ReplayPlan, embedder: Embedder, workdir: Path, progress: bool = True, name: str = "",
    engine: Engine | None = None,
) -> list[ConversationReplay]:
    """Replay every conversation (each an engine task); the memory units are embedded first, once, in a stage
    with its own bar. The replay's files live in ``workdir`` when the plan persists them, else in a temporary
    folder of the task's own."""
    return replay_plans(benchmark, [plan], embedder, workdir, progress, name, engine)[0]


def replay_plans(
    benchmark: Benchmark, plans: Sequence[ReplayPlan], embedder: Embedder, workdir: Path | None, progress: bool = True,
    name: str = "", engine: Engine | None = None,
) -> list[list[ConversationReplay]]:
    """``replay_benchmark`` for plans that differ only in what consolidation prunes, sharing one replay of
    each conversation until their decisions part (``replay.replay_shared``); one list per plan. Only a
    single plan persists its files (in ``workdir``)."""
    engine = engine or LocalEngine()
    unit = plans[0].unit
    if isinstance(engine, LocalEngine):  # the same batches as the replay's, which then reads them from the cache
        if embedder.cache is not None:
            bar = tqdm(benchmark.conversations, desc="embed", unit="conversation", disable=not progress, leave=False)
            for conversation in bar:
                embedder.encode(unit_texts(conversation, unit), progress=False)
    else:  # every text encoded here, shipped once to all tasks
        texts = (t for c in benchmark.conversations for t in unit_texts(c, unit))
        embedder = for_tasks(embedder, texts, engine, progress)
    questions = questions_by_conversation(benchmark)
    conversations = benchmark.conversations
    persist = len(plans) == 1 and plans[0].persist
    outcomes = engine.map(replay_each, [(c, questions.get(c.id, []), plans) for c in conversations],
                          names=[c.id for c in conversations],
                          shared={"embedder": embedder, "workdir": workdir if persist else None})  # fmt: skip
    bar = tqdm(outcomes, total=len(conversations), desc=f"replay {name}".strip(), unit="conversation",
               disable=not progress, leave=False)  # fmt: skip
    by_conversation = values(bar, "conversation")
    return [[replays[n] for replays in by_conversation] for n in range(len(plans))]


def questions_by_conversation(benchmark: Benchmark) -> dict[str, list]:
    out: dict[str, list] = {}
    for question in benchmark.questions:
        out.setdefault(question.conversation_id, []).append(question)
    return out


@dataclass(frozen=True)
class Evaluation:
    """Every system's evaluation on one replay: runs and scores per ``system.level``, and what the later stages
    read (each system's item run, every item ranked, each system's costs)."""

    runs: dict[str, RunDict]  # "system.level" -> run
    per_question: dict[str, pd.DataFrame]
    per_category: dict[str, pd.DataFrame]
    metrics: dict[str, dict[str, float]]  # system -> "level.metric" -> mean
    qrels: dict[str, dict[str, dict[str, int]]]  # level -> qrels
    models: dict[str, Any]  # system -> provenance of what it fitted (only systems that fitted)
    item_runs: dict[str, RunDict]  # system -> its run of items
    items: dict[str, MemoryItem]  # every item a run names
    costs: dict[str, dict[str, float]]  # system -> seconds, peak memory, counts


def evaluate_systems(
    benchmark: Benchmark, replays: list[ConversationReplay], config: ExperimentConfig, systems: Mapping[str, System],
    progress: bool = True,
) -> Evaluation:
    """Runs, per-question scores and category tables of every system; the item runs for answer-in-context."""
    questions = questions_by_conversation(benchmark)
    categories = {q.id: q.category for q in benchmark.questions}
    settings = config.metrics
    qrels = {level: qrels_for(benchmark.questions, level, settings.session_labels) for level in settings.levels}
    runs, per_question, per_category, metrics, item_runs, costs = {}, {}, {}, {}, {}, {}
    items = {item.id: item for replay in replays for item in replay.items}
    fitted_models = {}
    superseded = {s.name: s.superseded for s in config.systems}
    for name, system in tqdm(systems.items(), desc="systems", unit="system", disable=not progress, leave=False):
        with measured() as costs[name]:
            record = system.run(replays, questions, config.metrics.depth)
        costs[name] |= {"queries": len(record.run), **record.costs}
        items |= record.items  # another memory system returns its own memories
        item_runs[name] = handle_superseded(record.run, items, superseded.get(name, "keep"))
        if record.models:
            fitted_models[name] = record.models
        metrics[name] = {}
        for level in config.metrics.levels:
            key = f"{name}.{level}"
            runs[key] = to_level(item_runs[name], items, level)
            per_question[key] = evaluate_run(qrels[level], runs[key], settings.k, settings.ndcg_variants)
            per_category[key] = by_category(per_question[key], categories)
            metrics[name] |= {f"{level}.{m}": float(v) for m, v in per_question[key].mean().items()}
    return Evaluation(runs, per_question, per_category, metrics, qrels, fitted_models, item_runs, items, costs)


def memory_figures(benchmark: Benchmark, replays: list[ConversationReplay], level: str = "turn") -> dict[str, Any]:
    """Retention of evidence (at ``level``: turns, or sessions for session units), footprint, promotion."""
    questions = questions_by_conversation(benchmark)
    totals: dict[str, int] = {}
    for replay in replays:
        session_of = None
        if level == "session":
            conversation = benchmark.conversation(replay.conversation_id)
            session_of = {t.id: s.id for s in conversation.sessions for t in s.turns}
        counts = memory_counts(questions.get(replay.conversation_id, []), replay.items, replay.promoted_turn_ids,
                               session_of)  # fmt: skip
        for key, value in counts.items():
            totals[key] = totals.get(key, 0) + value
    kept = sum(len(r.items) for r in replays)
    seen = sum(r.units_seen for r in replays)
    figures = {**memory_ratios(totals, kept, seen), "items_kept": kept, "units_seen": seen, "counts": totals,
               "retention_level": level}  # fmt: skip
    if any(r.admitted for r in replays):
        figures |= _admission_figures(replays, questions)
    return figures


def consolidation_figures(
    benchmark: Benchmark, replays: list[ConversationReplay], config: ExperimentConfig,
    count_tokens: Callable[[str], int], runs: Mapping[str, RunDict],
) -> dict[str, Any]:
    """Compression and provenance of the memory held (every dataset), and the ground-truth figures where the
    dataset has fact labels (``quality``: stale facts, duplicates; for turn units)."""
    items = [item for replay in replays for item in replay.items]
    count_tokens = lru_cache(maxsize=None)(count_tokens)  # held items repeat the texts seen
    tokens_seen = sum(count_tokens(text) for c in benchmark.conversations for text in unit_texts(c, config.memory.unit))
    turn_ids = {t.id for c in benchmark.conversations for s in c.sessions for t in s.turns}
    figures: dict[str, Any] = {
        "compression": compression(items, sum(r.units_seen for r in replays), tokens_seen, count_tokens),
        "provenance": provenance(items, turn_ids),
    }
    if config.memory.unit == "turn":
        turn_runs = {key.rsplit(".", 1)[0]: run for key, run in runs.items() if key.endswith(".turn")}
        k = max([k for k in config.metrics.k if k <= 10] or [min(config.metrics.k)])
        labels = benchmark.labels.validated(turn_ids, benchmark.report) if benchmark.labels is not None else None
        asked = {replay.conversation_id: replay.asked_at for replay in replays}
        question_time = {t.id: asked[c.id] for c in benchmark.conversations for s in c.sessions for t in s.turns}
        if quality := quality_figures(labels, benchmark.questions, items, turn_runs, k, question_time):
            figures["quality"] = quality
    return figures


def _admission_figures(replays: list[ConversationReplay], questions: dict[str, list]) -> dict[str, float]:
    """Precision and recall of what the admission policy kept, against evidence turns, over all conversations."""
    totals = {"true_positives": 0, "remembered": 0, "evidence": 0}
    for replay in replays:
        evidence = [t for q in questions.get(replay.conversation_id, []) for t in q.evidence_turn_ids]
        found = remember_metrics(replay.admitted, evidence)
        totals = {key: totals[key] + found[key] for key in totals}
    return {
        "admission.precision": totals["true_positives"] / totals["remembered"] if totals["remembered"] else 0.0,
        "admission.recall": totals["true_positives"] / totals["evidence"] if totals["evidence"] else 0.0,
        "admission.kept": float(totals["remembered"]),
    }


def _answer_table(
    benchmark: Benchmark, items: Mapping[str, MemoryItem], config: ExperimentConfig, embedder: Embedder,
    item_runs: Mapping[str, RunDict],
) -> pd.DataFrame | None:
    """Answer-in-context of the answer system's own run (the first system by default)."""
    settings = config.metrics
    if not settings.answer_budgets:
        return None
    run = item_runs[settings.answer_system or config.systems[0].name]
    return answer_in_context_table(run, items, benchmark.questions, embedder.count_tokens, settings.answer_budgets)


def _answer_kept(
    config: ExperimentConfig, built: Built, benchmark: Benchmark, workdir: Path, progress: bool,
    answers: pd.DataFrame | None,
) -> pd.DataFrame | None:
    """What consolidation costs the answer: answer-in-context minus the same replay's without consolidation
    (same system, budgets and question time; negative: answers lost)."""
    if not config.metrics.answer_kept or answers is None or built.replay.consolidation is None:
        return None
    plain = replace(built.replay, consolidation=None)
    (workdir / "unconsolidated").mkdir(parents=True, exist_ok=True)
    replays = replay_benchmark(benchmark, plain, built.embedder, workdir / "unconsolidated", progress, "unconsolidated",
                               built.engine)  # fmt: skip
    name = config.metrics.answer_system or config.systems[0].name
    system = built.systems[name]
    record = system.run(replays, questions_by_conversation(benchmark), config.metrics.depth)
    items = {item.id: item for replay in replays for item in replay.items} | dict(record.items)
    without = answer_in_context_table(record.run, items, benchmark.questions, built.embedder.count_tokens,
                                      config.metrics.answer_budgets)  # fmt: skip
    return (answers - without).assign(questions=answers["questions"])


def run_experiment(
    config: ExperimentConfig,
    *,
    results_dir: str | Path | None = "results",
    embedder: Embedder | None = None,
    benchmark: Benchmark | None = None,
    progress: bool = True,
    run_dir: str | Path | None = None,
    replayed: Replayed | None = None,
    built: Built | None = None,
) -> ExperimentResult:
    """Replay the dataset, evaluate every system, and write the run folder under ``results_dir``.

    ``run_dir`` names the run folder itself (a new folder), as a sweep does for its points; ``replayed``
    is this config's replay when it was made beforehand (the replay is then skipped); ``built`` is this
    config already built (``build(config, embedder=embedder)``), used instead of building it again. The
    folder appears only when complete (see ``results.run_folder``); the replay's scratch files live inside
    it while the run lasts and are removed, unless ``memory.persist`` keeps them in ``memory/``.
    """
    if built is None:
        built = build(config, embedder=embedder)  # every name checked before any data loads
    else:
        _check_built(built, config, embedder)
    benchmark = benchmark or built.load_dataset()
    say = tqdm.write if progress else None
    if embedder is None and (resolved := resolve_embedding(config, benchmark, say)) != config:
        config, built = resolved, build(resolved)  # the model that fits the history, recorded in the config
    final = Path(run_dir) if run_dir is not None else (new_run_dir(results_dir, config) if results_dir is not None else None)
    writing = run_folder(final) if final is not None else tempfile.TemporaryDirectory(prefix="openclaw-run-")
    with writing as folder:
        folder = Path(folder)
        workdir = folder / ("memory" if final is not None and config.memory.persist else "scratch")
        result = _evaluate(config, built, benchmark, workdir, progress, replayed)
        if final is not None:
            shutil.rmtree(folder / "scratch", ignore_errors=True)
            result.plots = [plot.name for plot in write_result(result, folder)]
            (folder / "report.md").write_text(report_text(result.record()))
    result.path = final
    return result


def _check_built(built: Built, config: ExperimentConfig, embedder: Embedder | None) -> None:
    """A build handed to ``run_experiment`` must be that of its config and embedder: a run is recorded under its
    config, so a build of another would run one experiment and write another's name on it."""
    if built.config != config:
        raise ValueError(f"built: a build of another config than {config.name!r} "
                         f"(fingerprints {built.config.fingerprint()} and {config.fingerprint()}, engine "
                         f"{built.config.engine} and {config.engine}); pass this config's build, or none")  # fmt: skip
    if embedder is not None and built.embedder is not embedder:
        raise ValueError("built: built with another embedder than the one given; pass this embedder's build, or none")


def _evaluate(config: ExperimentConfig, built: Built, benchmark: Benchmark, workdir: Path, progress: bool,
              replayed: Replayed | None) -> ExperimentResult:  # fmt: skip
    commit = git_commit()  # read first: the commit whose code runs, even if the checkout changes meanwhile
    built.embedder.st_model  # loaded before costs are measured: every system shares it, none is charged for it
    if replayed is not None:
        replays, replay_cost = replayed.replays, dict(replayed.cost)
    else:
        with measured() as replay_cost:
            replays = replay_benchmark(benchmark, built.replay, built.embedder, workdir, progress, config.name,
                                       built.engine)  # fmt: skip
    evaluation = replayed.evaluation if replayed is not None else None  # its tables are read, never changed
    if evaluation is None:
        evaluation = evaluate_systems(benchmark, replays, config, built.systems, progress)
    item_runs, items = evaluation.item_runs, evaluation.items
    turns = sum(len(s.turns) for c in benchmark.conversations for s in c.sessions)
    consolidation = sum(replay.consolidation_seconds for replay in replays)
    costs = cost_table(evaluation.costs, {**replay_cost, "turns": turns, "consolidation_seconds": consolidation})
    answers = _answer_table(benchmark, items, config, built.embedder, item_runs)
    kept = _answer_kept(config, built, benchmark, workdir, progress, answers)
    qa, qa_table = _qa(built, benchmark, items, item_runs, progress)
    memory = memory_figures(benchmark, replays, "session" if config.memory.unit in SESSION_UNITS else "turn")
    memory |= consolidation_figures(benchmark, replays, config, built.embedder.count_tokens, evaluation.runs)
    if kept is not None:
        memory["answer_kept"] = {str(budget): float(value) for budget, value in kept.loc["all"].items()}
    footprint = pd.DataFrame([{"conversation": r.conversation_id, **row} for r in replays for row in r.footprint])
    dataset = {"name": benchmark.name, "sha256": benchmark.sha256, "source": benchmark.source,
               "conversations": len(benchmark.conversations), "questions": len(benchmark.questions),
               "load_report": benchmark.report.summary()}  # fmt: skip
    setting = environment(dataset, built.embedder.model_id) | {"git_commit": commit}  # the load report is final now
    return ExperimentResult(
        config=config, footprint=footprint, memory=memory,
        questions=question_counts(benchmark, evaluation.qrels), question_info=question_table(benchmark),
        environment=setting, answer_in_context=answers, answer_kept=kept,
        consolidations={r.conversation_id: r.consolidations for r in replays}, qa=qa, qa_table=qa_table,
        metrics=evaluation.metrics, per_question=evaluation.per_question, per_category=evaluation.per_category,
        runs=evaluation.runs, qrels=evaluation.qrels, models=evaluation.models, costs=costs,
    )  # fmt: skip


def _qa(
    built: Built, benchmark: Benchmark, items: Mapping[str, MemoryItem], item_runs: Mapping[str, RunDict], progress: bool
) -> tuple[dict[str, Any], pd.DataFrame | None]:
    """The QA stage, when enabled; an endpoint that does not answer skips it with the reason, keeping the rest."""
    plan = built.qa
    if plan is None:
        return {}, None
    bar = lambda total: tqdm(total=total, desc="qa", unit="call", disable=not progress, leave=False)  # noqa: E731
    if plan.oracle:
        oracle_run, oracle_items = evidence_run(benchmark.conversations, plan.asked(benchmark.questions))
        item_runs, items = {**item_runs, ORACLE: oracle_run}, {**items, **oracle_items}
    try:
        table = run_qa(plan, benchmark.questions, item_runs, items, built.embedder.count_tokens, bar)
    except LLMError as error:
        return {"skipped": str(error)}, None
    models = {"answer": plan.answerer.endpoint.model, "judge": plan.judge.endpoint.model}
    calls = {"answer": plan.answerer.stats.as_dict(), "judge": plan.judge.stats.as_dict()}
    return {"protocol": plan.protocol, "models": models, "calls": calls, "prompts": plan.prompts,
            "summary": summarise(table).to_dict("records")}, table  # fmt: skip
