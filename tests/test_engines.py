"""Engines: a sweep and a replay in forked worker processes, and on a real local Ray, give every metric the
local engine gives; failures (an error, a worker killed) are named and keep what finished; a re-run skips
the points already written."""

from __future__ import annotations

import math
import os
import pickle
import signal

import pytest

from openclaw_lab.errors import ConfigError
from openclaw_lab.harness import sweep as sweep_module
from openclaw_lab.harness.build import build
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.engines import LocalEngine, ProcessEngine, TaskError, portable, values
from openclaw_lab.harness.experiment import run_experiment
from openclaw_lab.harness.sweep import run_sweep

SWEEP = {
    "name": "engine", "dataset": {"name": "synthetic", "params": {"n_turns": 240, "seed": 3, "n_conversations": 3}},
    "memory": {"store": "exact"},
    "consolidation": {"enabled": True, "law": "seed", "interval_hours": 24, "threshold": 0.1,
                      "prune_tiers": ["episodic", "semantic"]},
    "systems": [{"name": "dense", "strategy": "dense"}, {"name": "bm25", "strategy": "bm25"}],
    "metrics": {"k": [1, 5, 10]},
    "sweep": {"consolidation.law_params.daily": [0.6, 0.9, 0.99]},
}  # fmt: skip
RUN = {**SWEEP, "sweep": {}, "metrics": {"answer_budgets": [64]}}  # one run of its settings, with answer-in-context


@pytest.fixture(scope="module")
def local_sweep(embedder, tmp_path_factory):
    """The sweep on the local engine: what the sweeps in worker processes and on Ray must equal, point by point."""
    config = ExperimentConfig.from_dict(SWEEP)
    return run_sweep(config, results_dir=tmp_path_factory.mktemp("local"), embedder=embedder, progress=False,
                     engine=LocalEngine())  # fmt: skip


@pytest.fixture(scope="module")
def local_run(embedder):
    """One run of the sweep's settings (no sweep) on the local engine, with answer-in-context: what a run with its
    conversations in worker processes and on Ray must equal."""
    return run_experiment(ExperimentConfig.from_dict(RUN), results_dir=None, embedder=embedder, progress=False)


@pytest.fixture(scope="module")
def ray_engine():
    ray = pytest.importorskip("ray", reason='the ray extra is not installed (pip install "openclaw-lab[ray]")')
    from openclaw_lab.engines import RayEngine

    engine = RayEngine(num_cpus=2)
    engine.start()  # a real local Ray on 127.0.0.1, stopped when the module is done
    yield engine
    ray.shutdown()


def test_a_sweep_on_ray_equals_the_local_sweep_point_by_point(ray_engine, local_sweep, embedder, tmp_path):
    config, local = ExperimentConfig.from_dict(SWEEP), local_sweep
    on_ray = run_sweep(config, results_dir=tmp_path / "ray", embedder=embedder, progress=False, engine=ray_engine)
    assert sorted(on_ray.points) == [0, 1, 2]
    for n, result in local.points.items():
        assert on_ray.points[n].metrics == result.metrics, n  # every metric of every system, exactly
        assert on_ray.points[n].memory == result.memory, n
        assert (on_ray.path / f"point-{n:02d}" / "metrics.json").exists()
    assert on_ray.summary.equals(local.summary)
    recalls = local.summary["dense.turn.recall@10"]
    assert recalls.iloc[0] < recalls.iloc[-1]  # the swept setting matters: the points are not all one run


def test_a_run_with_its_conversations_on_ray_equals_the_local_run(ray_engine, local_run, embedder):
    config, local = ExperimentConfig.from_dict(RUN), local_run
    on_ray = run_experiment(config.with_values({"engine.name": "ray"}), results_dir=None, embedder=embedder,
                            progress=False)  # fmt: skip
    assert on_ray.metrics == local.metrics
    assert on_ray.memory == local.memory
    assert on_ray.footprint.equals(local.footprint)
    assert on_ray.answer_in_context.equals(local.answer_in_context)


def test_a_failed_ray_task_is_named_and_the_others_kept(ray_engine):
    outcomes = list(ray_engine.map(math.sqrt, [(4.0,), (-1.0,), (9.0,)], names=["four", "minus one", "nine"]))
    assert sorted(o.value for o in outcomes if o.error is None) == [2.0, 3.0]
    with pytest.raises(TaskError, match=r"conversation minus one: ValueError: math domain error") as failed:
        values(outcomes, "conversation")
    assert isinstance(failed.value.__cause__, ValueError)


def test_a_sweep_in_worker_processes_equals_the_local_sweep_point_by_point(local_sweep, embedder, tmp_path):
    config, local = ExperimentConfig.from_dict(SWEEP), local_sweep
    forked = run_sweep(config, results_dir=tmp_path / "forked", embedder=embedder, progress=False,
                       engine=ProcessEngine(num_cpus=2))  # fmt: skip
    assert sorted(forked.points) == [0, 1, 2]
    for n, result in local.points.items():
        assert forked.points[n].metrics == result.metrics, n
        assert forked.points[n].memory == result.memory, n
        assert forked.points[n].consolidations == result.consolidations, n
        assert (forked.path / f"point-{n:02d}" / "metrics.json").exists()
    assert forked.summary.equals(local.summary)
    assert local.summary["dense.turn.recall@10"].nunique() > 1  # the points differ: a mix-up would show


def test_a_run_with_its_conversations_in_worker_processes_equals_the_local_run(local_run, embedder):
    config, local = ExperimentConfig.from_dict(RUN), local_run
    forked = run_experiment(config.with_values({"engine.name": "processes", "engine.num_cpus": 2}), results_dir=None,
                            embedder=embedder, progress=False)  # fmt: skip
    assert forked.metrics == local.metrics
    assert forked.memory == local.memory
    assert forked.footprint.equals(local.footprint)
    assert forked.answer_in_context.equals(local.answer_in_context)


def _pid_or_die(n: int) -> int:
    if n == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # a worker lost mid-task, as to the OOM killer
    return os.getpid()


def test_worker_processes_name_a_failed_task_and_a_killed_worker_and_keep_what_finished():
    engine = ProcessEngine(num_cpus=2)
    outcomes = list(engine.map(math.sqrt, [(4.0,), (-1.0,), (9.0,)], names=["four", "minus one", "nine"]))
    assert sorted(o.value for o in outcomes if o.error is None) == [2.0, 3.0]
    with pytest.raises(TaskError, match=r"conversation minus one: ValueError: math domain error") as failed:
        values(outcomes, "conversation")
    assert isinstance(failed.value.__cause__, ValueError)
    assert "in _forked" in failed.value.__notes__[0]  # the traceback from the worker that ran it

    add = lambda n, offset: n + offset  # noqa: E731 - pickle cannot carry a lambda; the fork inherits it
    added = engine.map(add, [(1,), (2,)], names=["a", "b"], shared={"offset": 10})
    assert sorted(o.value for o in added) == [11, 12]
    ran = sorted(ProcessEngine(num_cpus=1).map(_pid_or_die, [(1,), (2,), (3,)], names=["one", "two", "three"]),
                 key=lambda o: o.index)  # fmt: skip
    assert ran[0].error is None and ran[0].value != os.getpid()  # finished in a worker, and kept
    assert ran[1].name == "two" and "terminated abruptly" in str(ran[1].error)


def test_a_failed_point_keeps_the_finished_ones_and_a_rerun_runs_only_what_is_missing(embedder, tmp_path, monkeypatch):
    config = ExperimentConfig.from_dict({**SWEEP, "systems": [{"name": "bm25", "strategy": "bm25"}]})
    real = sweep_module.run_experiment
    ran = []

    def failing_at_point_one(point, **kwargs):
        ran.append(point.consolidation.law_params["daily"])
        if point.consolidation.law_params["daily"] == 0.9:
            raise RuntimeError("the node went away")
        return real(point, **kwargs)

    monkeypatch.setattr(sweep_module, "run_experiment", failing_at_point_one)
    with pytest.raises(TaskError, match=r"sweep point 1 \(consolidation.law_params.daily=0.9\): RuntimeError"):
        run_sweep(config, results_dir=tmp_path, embedder=embedder, progress=False, engine=LocalEngine())
    [first] = list((tmp_path / "engine").glob("*-sweep"))
    assert sorted(p.name for p in first.iterdir() if not p.name.startswith(".")) == ["pareto.png", "point-00", "point-02", "summary.csv"]
    assert ran == [0.6, 0.9, 0.99]

    ran.clear()
    monkeypatch.setattr(sweep_module, "run_experiment", lambda point, **kw: ran.append(point) or real(point, **kw))
    again = run_sweep(config, results_dir=tmp_path, embedder=embedder, progress=False, engine=LocalEngine())
    assert [p.consolidation.law_params["daily"] for p in ran] == [0.9]  # the two written points are reused
    assert sorted(again.points) == [1]
    assert again.summary["point"].tolist() == [0, 1, 2]
    fresh = run_sweep(config, results_dir=None, embedder=embedder, progress=False, engine=LocalEngine())
    assert again.summary.equals(fresh.summary)  # a reused point reads as it ran


def test_a_point_of_another_dataset_is_not_reused(embedder, tmp_path):
    config = ExperimentConfig.from_dict({**SWEEP, "systems": [{"name": "bm25", "strategy": "bm25"}],
                                         "sweep": {"consolidation.law_params.daily": [0.9]}})  # fmt: skip
    run_sweep(config, results_dir=tmp_path, embedder=embedder, progress=False)
    benchmark = build(config, embedder=embedder).load_dataset()
    smaller = run_sweep(config, results_dir=tmp_path, embedder=embedder, progress=False,
                        benchmark=benchmark.subset(limit=1))  # fmt: skip
    assert sorted(smaller.points) == [0]  # run again: the folder written holds another dataset's figures


def test_a_portable_embedder_carries_its_vectors_and_no_model(embedder):
    texts = ["I adopted a puppy named Rex", "We went hiking in the Alps"]
    shipped = pickle.loads(pickle.dumps(portable(embedder, texts)))
    assert shipped._model is None
    assert (shipped.encode(texts[::-1]) == embedder.encode(texts[::-1])).all()
    assert shipped._model is None  # read from the table it carries: no model loaded, nothing encoded
    assert shipped.model_id == embedder.model_id
    assert portable(shipped, texts[:1]) is shipped  # it carries them already: nothing is encoded or copied again
    assert portable(shipped, ["a text it lacks"]) is not shipped


def test_engine_settings_are_checked_and_leave_the_fingerprint_alone():
    base = ExperimentConfig.from_dict({"name": "e"})
    assert base.with_values({"engine.name": "ray", "engine.num_cpus": 2}).fingerprint() == base.fingerprint()
    with pytest.raises(ConfigError, match=r"^engine.name: 'rya' is not one of local, processes, ray; did you mean 'ray'"):
        ExperimentConfig.from_dict({"name": "e", "engine": {"name": "rya"}})
    with pytest.raises(ConfigError, match=r"^engine: address is a Ray setting"):
        ExperimentConfig.from_dict({"name": "e", "engine": {"name": "processes", "address": "auto"}})
    with pytest.raises(ConfigError, match=r"^engine: num_cpus is a setting of the processes and ray engines"):
        ExperimentConfig.from_dict({"name": "e", "engine": {"num_cpus": 2}})
    assert repr(build(base.with_values({"engine.name": "processes", "engine.num_cpus": 3})).engine) == (
        "ProcessEngine(num_cpus=3)")  # fmt: skip
    with pytest.raises(ConfigError, match=r"^engine.num_cpus: 0 must be >= 1"):
        ExperimentConfig.from_dict({"name": "e", "engine": {"name": "ray", "num_cpus": 0}})
