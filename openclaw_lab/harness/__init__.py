"""The evaluation harness: replay datasets through a memory stack and measure what it remembers.

>>> from openclaw_lab.harness import ExperimentConfig
>>> ExperimentConfig.from_dict({"name": "x"}).dataset.name
'locomo'
"""

from openclaw_lab.harness.check import GateSettings, Verdict, check_metrics, check_run, write_baseline
from openclaw_lab.harness.compare import compare_dirs, compare_runs
from openclaw_lab.harness.config import (
    ConsolidationConfig, DatasetConfig, ExperimentConfig, MemoryConfig, MetricsConfig, SystemConfig,
)  # fmt: skip
from openclaw_lab.engines import LocalEngine, ProcessEngine, RayEngine
from openclaw_lab.harness.build import Built, build, make_retriever, retrieve, strategy_names
from openclaw_lab.harness.experiment import ExperimentResult, load_benchmark, run_experiment
from openclaw_lab.evaluation.metrics import evaluate_run, qrels_for, to_level
from openclaw_lab.replay.conversation import ConversationReplay, replay_conversation
from openclaw_lab.harness.report import metrics_table, write_report
from openclaw_lab.harness.results import read_run
from openclaw_lab.evaluation.metrics import pareto_front, recall_at_footprint
from openclaw_lab.harness.sweep import SweepResult, run_sweep

__all__ = [
    "GateSettings", "Verdict", "check_metrics", "check_run", "write_baseline", "compare_dirs", "compare_runs",
    "ConsolidationConfig", "DatasetConfig", "ExperimentConfig", "MemoryConfig", "MetricsConfig", "SystemConfig",
    "Built", "build", "make_retriever", "retrieve", "strategy_names", "ExperimentResult", "load_benchmark", "run_experiment", "evaluate_run", "qrels_for", "to_level",
    "ConversationReplay", "replay_conversation", "metrics_table", "write_report", "read_run", "SweepResult",
    "pareto_front", "recall_at_footprint", "run_sweep", "LocalEngine", "ProcessEngine", "RayEngine",
]  # fmt: skip
