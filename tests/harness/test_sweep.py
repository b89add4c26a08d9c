import pandas as pd
import pytest

from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.evaluation.metrics import pareto_front, recall_at_footprint
from openclaw_lab.harness.sweep import grid


def test_grid_is_the_cartesian_product():
    config = ExperimentConfig.from_dict(
        {"name": "s", "sweep": {"consolidation.threshold": [0.1, 0.2], "consolidation.law": ["seed", "none"]}}
    )
    assert len(grid(config)) == 4
    assert {"consolidation.threshold": 0.2, "consolidation.law": "none"} in grid(config)
    with pytest.raises(ValueError, match="^sweep"):
        grid(ExperimentConfig.from_dict({"name": "s"}))


def test_a_sweep_over_the_embedding_is_refused_since_its_points_share_one_embedder():
    config = ExperimentConfig.from_dict({"name": "s", "sweep": {"embedding.long_texts": ["truncate", "windows"]}})
    with pytest.raises(ValueError, match=r"^sweep.embedding.long_texts: the points of a sweep share one embedder"):
        grid(config)


def test_a_sweep_over_the_dataset_is_refused_since_its_points_share_one_loaded_dataset():
    config = ExperimentConfig.from_dict({"name": "s", "sweep": {"dataset.limit": [1, 2]}})
    with pytest.raises(ValueError, match=r"^sweep.dataset.limit: the points of a sweep share one loaded dataset"):
        grid(config)


def test_pareto_front_by_hand():
    points = pd.DataFrame({"footprint": [0.2, 0.4, 0.5, 0.6, 0.9], "recall": [0.5, 0.7, 0.6, 0.8, 0.8]})
    front = pareto_front(points)
    assert front["footprint"].tolist() == [0.2, 0.4, 0.6]  # 0.5 is beaten by 0.4; 0.9 by 0.6
    assert recall_at_footprint(points, 0.45) == 0.7


def test_points_that_differ_only_in_decay_share_a_replay_and_equal_their_own_runs(embedder, monkeypatch):
    from openclaw_lab.harness import sweep as sweep_module
    from openclaw_lab.harness.experiment import run_experiment
    from openclaw_lab.harness.sweep import run_sweep

    config = ExperimentConfig.from_dict({
        "name": "shared", "dataset": {"name": "synthetic", "params": {"n_turns": 300, "seed": 4, "n_conversations": 2}},
        "memory": {"store": "exact"}, "metrics": {"k": [1, 5, 10]},
        "consolidation": {"enabled": True, "law": "seed", "interval_hours": 24, "prune_tiers": ["episodic", "semantic"]},
        "sweep": {"consolidation.law_params.daily": [0.7, 0.95, 1.0], "consolidation.threshold": [0.1, 0.2]},
    })  # fmt: skip
    replays = []
    real = sweep_module.replay_plans
    monkeypatch.setattr(sweep_module, "replay_plans", lambda benchmark, plans, *a, **kw: replays.append(len(plans))
                        or real(benchmark, plans, *a, **kw))  # fmt: skip
    swept = run_sweep(config, results_dir=None, embedder=embedder, progress=False)
    assert replays == [6]  # one replay for the six points
    for n, (values, point, _) in enumerate(sweep_module.points(config)):
        alone = run_experiment(point, results_dir=None, embedder=embedder, progress=False)
        assert swept.points[n].metrics == alone.metrics, values  # every metric of every system, exactly
        assert swept.points[n].memory == alone.memory, values
        assert swept.points[n].consolidations == alone.consolidations, values
    recalls = swept.summary["dense.turn.recall@10"]
    assert recalls.nunique() > 1  # the points differ: the replay forked


def test_a_sweep_builds_each_point_once_for_its_check_its_shared_replay_and_its_run(embedder, monkeypatch):
    from openclaw_lab.harness import experiment as experiment_module
    from openclaw_lab.harness import sweep as sweep_module
    from openclaw_lab.harness.sweep import run_sweep

    config = ExperimentConfig.from_dict({
        "name": "built-once", "dataset": {"name": "synthetic", "params": {"n_turns": 60, "seed": 1}},
        "consolidation": {"enabled": True, "law": "seed", "interval_hours": 24}, "metrics": {"k": [1, 5, 10]},
        "sweep": {"consolidation.threshold": [0.1, 0.2], "memory.store": ["exact", "sqlite"]},
    })  # fmt: skip
    # the two exact-store points differ only in decay, so they replay together; the two sqlite ones replay alone
    built, replays = [], []
    for module in (sweep_module, experiment_module):
        monkeypatch.setattr(module, "build", lambda config, real=module.build, **kw: built.append(config.fingerprint())
                            or real(config, **kw))  # fmt: skip
    real_replay = sweep_module.replay_plans
    monkeypatch.setattr(sweep_module, "replay_plans", lambda benchmark, plans, *a, **kw: replays.append(len(plans))
                        or real_replay(benchmark, plans, *a, **kw))  # fmt: skip
    swept = run_sweep(config, results_dir=None, embedder=embedder, progress=False)
    assert replays == [2]  # one shared replay, for the exact-store points
    assert sorted(built) == sorted(result.config.fingerprint() for result in swept.points.values())  # each once
    assert len(set(built)) == 4


def test_a_run_refuses_the_build_of_another_config(embedder):
    from openclaw_lab.harness.build import build
    from openclaw_lab.harness.experiment import run_experiment

    config = ExperimentConfig.from_dict({"name": "b", "dataset": {"name": "synthetic", "params": {"n_turns": 40}}})
    other = build(config.with_value("memory.access_k", 7), embedder=embedder)
    with pytest.raises(ValueError, match=r"^built: a build of another config than 'b'"):
        run_experiment(config, results_dir=None, embedder=embedder, built=other, progress=False)
    forked = build(config.with_value("engine.name", "processes"), embedder=embedder)  # same fingerprint, other engine
    with pytest.raises(ValueError, match=r"^built: a build of another config"):
        run_experiment(config, results_dir=None, embedder=embedder, built=forked, progress=False)
