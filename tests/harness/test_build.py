"""The composition root: every name and parameter is checked, with its dotted path, before any data loads."""

from __future__ import annotations

import pytest

from openclaw_lab.errors import ConfigError
from openclaw_lab.harness.build import build
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.experiment import run_experiment
from openclaw_lab.replay.systems import RetrieverSystem

# A dataset that cannot load: if any of these errors came after loading, it would be a FileNotFoundError.
MISSING = {"name": "longmemeval", "params": {"path": "/nonexistent/longmemeval_s.json"}}


def config(**sections):
    return ExperimentConfig.from_dict({"name": "t", "dataset": MISSING, **sections})


TYPOS = [
    ({"dataset": {"name": "locomoo"}}, r"^dataset.name: unknown dataset 'locomoo'; did you mean 'locomo'\?"),
    ({"dataset": {"name": "synthetic", "params": {"n_turn": 10}}},
     r"^dataset.params.n_turn: unknown parameter of generate; did you mean 'n_turns'\?"),
    ({"dataset": {**MISSING, "fallback": "synthetc"}}, r"^dataset.fallback: unknown dataset 'synthetc'; did you mean"),
    ({"memory": {"store": "chromma"}}, r"^memory.store: unknown store 'chromma'; did you mean 'chroma'\?"),
    ({"memory": {"store_params": {"colection": "x"}, "store": "chroma"}},
     r"^memory.store_params.colection: unknown parameter of ChromaStore; did you mean 'collection'\?"),
    ({"memory": {"admission": "rule"}}, r"^memory.admission: unknown remember policy 'rule'; did you mean 'rules'\?"),
    ({"consolidation": {"enabled": True, "law": "sead"}},
     r"^consolidation.law: unknown decay law 'sead'; did you mean 'seed'\?"),
    ({"consolidation": {"enabled": True, "law": "exponential", "law_params": {"half_lif": 3}}},
     r"^consolidation.law_params.half_lif: unknown parameter of ExponentialDecay; did you mean"),
    ({"consolidation": {"enabled": True, "law": "seed", "law_params": {"daily": 1.5}}},
     r"^consolidation.law_params: daily"),
    ({"consolidation": {"enabled": True, "policy": {"acces_threshold": 2}}},
     r"^consolidation.policy.acces_threshold: unknown parameter of ConsolidationPolicy; did you mean 'access_threshold'\?"),
    ({"systems": [{"name": "a", "strategy": "dnese"}]}, r"^systems\[0\].strategy: unknown strategy 'dnese'; did you mean 'dense'\?"),
    ({"systems": [{"name": "a", "strategy": "dense"}, {"name": "b", "strategy": "learned-crosfit"}]},
     r"^systems\[1\].strategy: unknown strategy 'learned-crosfit'; did you mean 'learned-crossfit'\?"),
    ({"systems": [{"name": "a", "strategy": "bm25", "params": {"k_1": 1.2}}]},
     r"^systems\[0\].params.k_1: unknown parameter of BM25Retriever; did you mean 'k1'\?"),
    ({"systems": [{"name": "a", "strategy": "hybrid", "params": {"method": "rff"}}]},
     r"^systems\[0\].params: method: unknown fusion 'rff'"),
    ({"systems": [{"name": "a", "strategy": "learned-crossfit", "params": {"fold": 2}}]},
     r"^systems\[0\].params.fold: unknown parameter of CrossFittedReranker; did you mean 'folds'\?"),
    ({"embedding": {"backend": "onx"}}, r"^embedding: backend: 'onx' is not one of torch, onnx, onnx-int8"),
    ({"embedding": {"long_texts": "split"}}, r"^embedding: long_texts: 'split' is not one of truncate, windows"),
]


@pytest.mark.parametrize("sections, message", TYPOS, ids=[m.split(":")[0].strip("^\\") for _, m in TYPOS])
def test_a_typo_in_any_name_fails_before_any_data_loads(sections, message, embedder):
    with pytest.raises(ConfigError, match=message):
        build(config(**sections), embedder=embedder)


@pytest.mark.parametrize(
    "data, message",
    [
        ({"memory": {"access_k": "3"}}, r"^memory.access_k: '3' is a str; expected an integer"),
        ({"memory": {"unit": "sesion"}}, r"^memory.unit: 'sesion' is not one of .*; did you mean 'session'\?"),
        ({"consolidation": {"interval_hours": "24"}}, r"^consolidation.interval_hours: '24' is a str; expected a number"),
        ({"consolidation": {"prune_tiers": ["semantc"]}}, r"^consolidation.prune_tiers\[0\]: 'semantc' is not one of"),
        ({"metrics": {"k": [10, "5"]}}, r"^metrics.k\[1\]: '5' is a str; expected an integer"),
        ({"metrics": {"gate": ["session.recal@10"]}},
         r"^metrics.gate\[0\]: 'session.recal@10' is not a metric this run computes; did you mean 'session.recall@10'\?"),
        ({"metrics": {"significance": "studnet"}}, r"^metrics.significance: 'studnet' is not one of .*did you mean 'student'\?"),
        ({"metrics": {"answer_system": "nope"}}, r"^metrics.answer_system: 'nope' is not one of dense"),
        ({"memry": {}}, r"^memry: unknown key; did you mean 'memory'\?"),
        ({"systems": {"name": "a"}}, r"^systems: .* must be a list of tables"),
    ],
)
def test_every_value_is_type_checked_at_parse_time_with_its_dotted_path(data, message):
    with pytest.raises(ConfigError, match=message):
        ExperimentConfig.from_dict({"name": "t", **data})


def test_run_experiment_checks_names_before_loading_the_dataset(embedder):
    with pytest.raises(ConfigError, match=r"^systems\[0\].strategy"):
        run_experiment(config(systems=[{"name": "a", "strategy": "dnese"}]), results_dir=None, embedder=embedder)


def test_a_valid_config_builds_every_component_without_loading_data(embedder):
    built = build(config(systems=[{"name": "a", "strategy": "rerank"}, {"name": "b", "strategy": "learned-crossfit"}],
                         consolidation={"enabled": True, "law": "power"}), embedder=embedder)  # fmt: skip
    assert isinstance(built.systems["a"], RetrieverSystem)
    assert type(built.systems["b"]).__name__ == "CrossFittedReranker"
    assert type(built.replay.consolidation.steps[-1].prune.law).__name__ == "PowerLawDecay"  # promotion and decay last
    assert built.replay.interval is None  # left out: the scheduler's own default
    with pytest.raises(FileNotFoundError):  # only now is the data read
        built.load_dataset()


def test_left_out_settings_are_the_librarys_defaults(embedder):
    from openclaw_lab.consolidation import ConsolidationScheduler, PrunePolicy

    plan = build(ExperimentConfig.from_dict({"name": "t", "consolidation": {"enabled": True}}), embedder=embedder)
    decay = plan.replay.consolidation.steps[-1]  # promotion and decay, the pipeline's last step
    assert type(decay.prune.law) is type(PrunePolicy().law)
    assert decay.prune.threshold == PrunePolicy().threshold
    import inspect

    assert inspect.signature(ConsolidationScheduler).parameters["interval"].default.total_seconds() == 3600


def test_the_embedding_model_is_a_setting_and_changes_the_fingerprint():
    base = ExperimentConfig.from_dict({"name": "t"})
    other = ExperimentConfig.from_dict({"name": "t", "embedding": {"model": "/models/e5", "model_id": "e5-small"}})
    assert other.fingerprint() != base.fingerprint()
    assert build(other).embedder.model_id == "e5-small+windows"  # built, not loaded: the folder is read on first use
    truncating = ExperimentConfig.from_dict({"name": "t", "embedding": {"long_texts": "truncate"}})
    assert truncating.fingerprint() != base.fingerprint()
    assert build(truncating).embedder.model_id == "sentence-transformers/all-MiniLM-L6-v2"
