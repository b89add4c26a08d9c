import json
import shutil

import numpy as np
import pytest

from openclaw_lab.errors import ConfigError
from openclaw_lab.harness.check import GateSettings, check_metrics, check_run, write_baseline
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.tolerance import Tolerance


def test_a_tolerance_is_absolute_or_relative_and_a_bad_one_is_named():
    assert Tolerance.parse(0.02).margin(0.9) == 0.02
    assert Tolerance.parse("5%").margin(0.4) == pytest.approx(0.02)
    for bad in ("0.02", "five%", -0.1, True):
        with pytest.raises(ValueError, match="^metrics.gate_tolerance: "):
            Tolerance.parse(bad, "metrics.gate_tolerance")


def test_the_config_refuses_an_unknown_gated_metric_and_a_tolerance_for_an_ungated_one():
    base = {"name": "g", "dataset": {"name": "synthetic"}, "systems": [{"name": "bm25", "strategy": "bm25"}]}
    with pytest.raises(ConfigError, match=r"metrics.gate\[0\]: 'turn.recal@10' is not a metric.*did you mean 'turn.recall@10'"):
        ExperimentConfig.from_dict({**base, "metrics": {"gate": ["turn.recal@10"]}})
    with pytest.raises(ConfigError, match="^metrics.gate_tolerances.turn.mrr: is not a gated metric"):
        ExperimentConfig.from_dict({**base, "metrics": {"gate": ["turn.recall@10"], "gate_tolerances": {"turn.mrr": 0.1}}})
    with pytest.raises(ConfigError, match="^metrics.gate_tolerance: 'lots'"):
        ExperimentConfig.from_dict({**base, "metrics": {"gate_tolerance": "lots"}})
    config = ExperimentConfig.from_dict({**base, "metrics": {"gate": ["turn.recall@10", "turn.mrr"],
                                                             "gate_tolerances": {"turn.mrr": "3%"}}})  # fmt: skip
    settings = GateSettings.of_run(config.to_dict()["metrics"])
    assert settings.tolerance_of("turn.mrr").margin(0.5) == pytest.approx(0.015)
    assert settings.tolerance_of("turn.recall@10").margin(0.5) == 0.01  # the library's default


def test_a_drop_fails_only_beyond_the_tolerance_and_when_the_paired_test_says_so():
    ones = [1.0] * 200
    baseline = {"dense": {"turn.recall@10": ones}}
    one_question = ones[:199] + [0.0]  # a drop of 0.005, within the tolerance: noise
    assert [v.status for v in check_metrics({"dense": {"turn.recall@10": one_question}}, baseline)] == ["noise"]
    two = ones[:197] + [0.0] * 3  # 0.015, beyond the tolerance, but three questions are weak evidence (p = 0.08)
    (verdict,) = check_metrics({"dense": {"turn.recall@10": two}}, baseline)
    assert verdict.status == "not significant" and not verdict.failed and 0.05 < verdict.p_value < 0.1
    ten = ones[:190] + [0.0] * 10  # ten questions lost: a regression
    (verdict,) = check_metrics({"dense": {"turn.recall@10": ten}}, baseline)
    assert verdict.failed and verdict.p_value < 0.01
    assert str(verdict).startswith("dense turn.recall@10: 0.950000 against baseline 1.000000 (drop 0.050000 > tolerance 0.01;")
    assert "paired t-test p = " in str(verdict) and "over 200 questions" in str(verdict)
    tight = GateSettings(tolerances={"turn.recall@10": Tolerance(absolute=0.001)})
    assert check_metrics({"dense": {"turn.recall@10": two}}, baseline, tight)[0].status == "not significant"
    assert check_metrics({"dense": {"turn.recall@10": two}}, baseline, GateSettings(exact=True))[0].failed
    assert check_metrics({}, baseline)[0].status == "missing"


def test_memory_figures_fail_a_change_either_way_beyond_the_tolerance():
    baseline = {"memory": {"memory.compression.all.tokens_share": 0.50}}
    assert not check_metrics({"memory": {"memory.compression.all.tokens_share": 0.505}}, baseline)[0].failed
    for moved in (0.45, 0.55):  # holding more or less than the baseline both fail: neither is better by itself
        assert check_metrics({"memory": {"memory.compression.all.tokens_share": moved}}, baseline)[0].failed


@pytest.fixture(scope="module")
def gated_run(tmp_path_factory, embedder):
    """A real replay of 3,000 synthetic turns, two systems, and the baseline written from it."""
    from openclaw_lab.datasets import generate
    from openclaw_lab.harness.experiment import run_experiment

    tmp = tmp_path_factory.mktemp("gate")
    gate = ["turn.recall@10", "turn.mrr", "session.recall@10", "memory.compression.all.items_share"]
    config = ExperimentConfig.from_dict({"name": "g", "dataset": {"name": "synthetic"}, "consolidation": {"enabled": True},
                                         "systems": [{"name": "bm25", "strategy": "bm25"},
                                                     {"name": "hybrid", "strategy": "hybrid"}],
                                         "metrics": {"k": [1, 10], "gate": gate}})  # fmt: skip
    run = run_experiment(config, results_dir=tmp, embedder=embedder, benchmark=generate(3000, seed=2), progress=False)
    write_baseline(run.path, tmp / "baseline.json")
    return run, tmp / "baseline.json"


def _perturbed(run_dir, dest, change) -> object:
    """A copy of a run folder whose ranked lists went through ``change(level, qid, ranked, relevant)``."""
    shutil.copytree(run_dir, dest)
    for path in (dest / "runs").glob("*.json"):
        if path.stem.startswith("qrels."):
            continue
        level = path.stem.rsplit(".", 1)[1]
        qrels = json.loads((dest / "runs" / f"qrels.{level}.json").read_text())
        run = json.loads(path.read_text())
        path.write_text(json.dumps({qid: change(level, qid, ranked, qrels.get(qid, {})) for qid, ranked in run.items()}))
    return dest


def test_the_baseline_holds_per_question_values_whose_mean_is_the_reported_figure(gated_run):
    run, baseline_path = gated_run
    baseline = json.loads(baseline_path.read_text())
    values = baseline["per_question"]["bm25"]["turn.recall@10"]
    assert len(values) == len(run.qrels["turn"]) and np.mean(list(values.values())) == run.metrics["bm25"]["turn.recall@10"]
    assert {v.status for v in check_run(run.path, baseline_path)} == {"equal"}


def test_float_noise_and_swapped_ties_pass_the_gate(gated_run, tmp_path):
    run, baseline_path = gated_run
    rng = np.random.default_rng(0)

    def noise(level, qid, ranked, relevant):
        by_score: dict[float, list[str]] = {}
        for doc, score in ranked.items():
            by_score.setdefault(score, []).append(doc)
        swapped = {doc: score for score, docs in by_score.items() for doc in reversed(docs)}  # ties in the other order
        return {doc: score + rng.uniform(-1e-6, 1e-6) for doc, score in swapped.items()}

    verdicts = check_run(_perturbed(run.path, tmp_path / "noisy", noise), baseline_path)
    assert not [v for v in verdicts if v.failed]
    assert {v.status for v in verdicts} - {"equal"}  # the noise did move some figures: the gate saw it and passed
    exact = check_run(tmp_path / "noisy", baseline_path, GateSettings(exact=True))
    assert [v for v in exact if v.failed]  # to the last digit, the same run fails


def test_evidence_removed_from_the_top_10_of_5_percent_of_questions_fails(gated_run, tmp_path):
    run, baseline_path = gated_run
    found = sorted(qid for qid, ranked in run.runs["hybrid.turn"].items()
                   if set(list(ranked)[:10]) & set(run.qrels["turn"].get(qid, {})))  # fmt: skip
    hurt = set(found[:: 20])  # every 20th question that finds its evidence

    def remove(level, qid, ranked, relevant):
        if qid not in hurt:
            return ranked
        kept = {doc: score for doc, score in ranked.items() if doc not in relevant}
        floor = min(kept.values(), default=0.0)
        return kept | {doc: floor - 1 for doc in ranked if doc in relevant}  # the evidence, below everything

    verdicts = check_run(_perturbed(run.path, tmp_path / "hurt", remove), baseline_path)
    failed = {(v.system, v.metric): v for v in verdicts if v.failed}
    assert ("hybrid", "turn.recall@10") in failed and ("bm25", "turn.recall@10") in failed
    message = str(failed["hybrid", "turn.recall@10"])
    assert "drop 0.0" in message and "> tolerance 0.01" in message and "paired t-test p = " in message
    assert failed["hybrid", "turn.recall@10"].p_value < 0.05


def test_a_weaker_strategy_under_the_baselines_name_fails(gated_run, tmp_path):
    run, baseline_path = gated_run
    config = json.loads((run.path / "config.json").read_text())
    weaker = {"hybrid": "bm25"}  # the hybrid's run replaced by plain BM25's, under the hybrid's name
    dest = _perturbed(run.path, tmp_path / "weaker", lambda level, qid, ranked, relevant: ranked)
    for level in ("turn", "session"):
        shutil.copy(run.path / "runs" / f"bm25.{level}.json", dest / "runs" / f"hybrid.{level}.json")
    assert config["systems"][1]["name"] in weaker
    failed = [v for v in check_run(dest, baseline_path) if v.failed]
    assert failed and all(v.system == "hybrid" and v.p_value < 0.05 for v in failed)


def test_an_old_baseline_and_an_unknown_metric_are_refused_with_what_to_do(gated_run, tmp_path):
    run, baseline_path = gated_run
    baseline = json.loads(baseline_path.read_text())
    old = {key: value for key, value in baseline.items() if key not in ("format", "per_question")}
    (tmp_path / "old.json").write_text(json.dumps(old))
    with pytest.raises(ValueError, match="has means only, no per-question values.*--update"):
        check_run(run.path, tmp_path / "old.json")
    baseline["metrics"]["bm25"]["turn.recal@10"] = 0.5
    (tmp_path / "typo.json").write_text(json.dumps(baseline))
    with pytest.raises(ValueError, match="gates 'turn.recal@10', which this run does not compute; did you mean 'turn.recall@10'"):
        check_run(run.path, tmp_path / "typo.json")


def test_the_cli_prints_noise_and_fails_a_regression(gated_run, tmp_path, capsys):
    from openclaw_lab.cli import main

    run, baseline_path = gated_run
    assert main(["check", str(run.path), "--baseline", str(baseline_path)]) == 0
    assert "check passed" in capsys.readouterr().out
    baseline = json.loads(baseline_path.read_text())
    for qid in list(baseline["per_question"]["bm25"]["turn.mrr"])[:200]:
        baseline["per_question"]["bm25"]["turn.mrr"][qid] = 1.0  # a baseline far above this run
    (tmp_path / "high.json").write_text(json.dumps(baseline))
    assert main(["check", str(run.path), "--baseline", str(tmp_path / "high.json")]) == 1
    out = capsys.readouterr().out
    assert "REGRESSION      bm25 turn.mrr: " in out and "check failed" in out
    assert main(["check", str(run.path), "--baseline", str(tmp_path / "high.json"), "--tolerance", "100%"]) == 0
