
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
