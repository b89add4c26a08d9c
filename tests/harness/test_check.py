
import pytest

from openclaw_lab.harness.check import check_metrics


def test_a_drop_beyond_the_tolerance_fails_and_within_passes():
    baseline = {"dense": {"session.recall@10": 0.80, "turn.recall@10": 0.50}}
    assert check_metrics({"dense": {"session.recall@10": 0.795, "turn.recall@10": 0.6}}, baseline, 0.01) == []
    failures = check_metrics({"dense": {"session.recall@10": 0.78, "turn.recall@10": 0.6}}, baseline, 0.01)
    assert [(f.system, f.metric) for f in failures] == [("dense", "session.recall@10")]
    missing = check_metrics({}, baseline, 0.01)
    assert len(missing) == 2 and "missing" in str(missing[0])
    with pytest.raises(ValueError, match="^tolerance"):
        check_metrics({}, baseline, -0.1)


def test_exact_fails_on_any_difference_up_or_down():
    baseline = {"dense": {"session.recall@10": 0.80}}
    assert check_metrics({"dense": {"session.recall@10": 0.80}}, baseline, 0.0, exact=True) == []
    assert len(check_metrics({"dense": {"session.recall@10": 0.8000001}}, baseline, 0.01, exact=True)) == 1
    assert check_metrics({"dense": {"session.recall@10": 0.8000001}}, baseline, 0.01) == []


def test_memory_figures_fail_a_change_either_way_beyond_the_tolerance():
    baseline = {"memory": {"memory.compression.all.tokens_share": 0.50}}
    assert check_metrics({"memory": {"memory.compression.all.tokens_share": 0.505}}, baseline, 0.01) == []
    for moved in (0.45, 0.55):  # holding more or less than the baseline both fail: neither is better by itself
        assert len(check_metrics({"memory": {"memory.compression.all.tokens_share": moved}}, baseline, 0.01)) == 1


def test_a_gated_memory_figure_goes_into_the_baseline_and_is_checked(tmp_path, embedder):
    from openclaw_lab.datasets import generate
    from openclaw_lab.harness.check import check_run, write_baseline
    from openclaw_lab.harness.config import ExperimentConfig
    from openclaw_lab.harness.experiment import run_experiment

    config = ExperimentConfig.from_dict({"name": "g", "dataset": {"name": "synthetic"}, "consolidation": {"enabled": True},
                                         "systems": [{"name": "bm25", "strategy": "bm25"}],
                                         "metrics": {"gate": ["turn.recall@10", "memory.compression.all.items_share"]}})  # fmt: skip
    run = run_experiment(config, results_dir=tmp_path, embedder=embedder, benchmark=generate(300, seed=2), progress=False)
    baseline = write_baseline(run.path, tmp_path / "baseline.json")
    held = run.memory["compression"]["all"]["items_share"]
    assert baseline["metrics"]["memory"] == {"memory.compression.all.items_share": held} and held > 1  # semantic copies
    assert check_run(run.path, tmp_path / "baseline.json", 0.0, exact=True) == []
    baseline["metrics"]["memory"]["memory.compression.all.items_share"] = held + 0.1
    (tmp_path / "baseline.json").write_text(__import__("json").dumps(baseline))
    assert [f.metric for f in check_run(run.path, tmp_path / "baseline.json", 0.01)] == ["memory.compression.all.items_share"]
