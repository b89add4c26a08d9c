import pytest

from openclaw_lab.errors import ConfigError
from openclaw_lab.harness.config import ExperimentConfig

BASE = {"name": "t", "dataset": {"name": "synthetic", "params": {"n_turns": 100}}}


def test_unknown_keys_are_refused_with_the_valid_ones():
    with pytest.raises(ConfigError, match=r"^memory.stor: unknown key; did you mean 'store'\?"):
        ExperimentConfig.from_dict({**BASE, "memory": {"stor": "exact"}})
    with pytest.raises(ValueError, match="^name"):
        ExperimentConfig.from_dict({"dataset": {}})
    with pytest.raises(ValueError, match="^memory.unit"):
        ExperimentConfig.from_dict({**BASE, "memory": {"unit": "paragraph"}})


def test_with_value_changes_one_setting_and_the_fingerprint():
    config = ExperimentConfig.from_dict(BASE)
    changed = config.with_value("consolidation.law_params.daily", 0.95)
    assert changed.consolidation.law_params == {"daily": 0.95}
    assert changed.fingerprint() != config.fingerprint()
    assert ExperimentConfig.from_dict(BASE).fingerprint() == config.fingerprint()
    with pytest.raises(ConfigError, match="^memory.nonexistent: does not name a setting"):
        config.with_value("memory.nonexistent", 1)


def test_the_committed_experiments_parse():
    from pathlib import Path

    for path in sorted(Path(__file__).resolve().parents[2].glob("experiments/*.toml")):
        ExperimentConfig.from_toml(path)


def test_several_settings_change_together_and_are_checked_together():
    config = ExperimentConfig.from_dict(BASE)
    endpoint = {"base_url": "http://127.0.0.1:8080/v1", "model": "m"}
    changed = config.with_values({"qa.enabled": True, "qa.answer": endpoint})  # neither alone would be valid
    assert changed.qa.enabled and changed.qa.answer == endpoint
    with pytest.raises(ConfigError, match="^qa.answer: an enabled QA stage needs an endpoint"):
        config.with_value("qa.enabled", True)


def test_session_units_report_session_level_only():
    config = ExperimentConfig.from_dict({**BASE, "memory": {"unit": "user-session"}})
    assert config.metrics.levels == ("session",)
    assert ExperimentConfig.from_dict(BASE).metrics.levels == ("turn", "session")
    with pytest.raises(ConfigError, match=r"^metrics.levels: turn-level metrics need turn units"):
        ExperimentConfig.from_dict({**BASE, "memory": {"unit": "session"}, "metrics": {"levels": ["turn", "session"]}})
    with pytest.raises(ConfigError, match=r"^metrics.session_labels: 'has_answer' is not one of .*did you mean 'has-answer'"):
        ExperimentConfig.from_dict({**BASE, "metrics": {"session_labels": "has_answer"}})


def test_answer_kept_and_memory_gates_are_checked_before_anything_runs():
    with pytest.raises(ConfigError, match=r"^metrics.answer_kept: needs metrics.answer_budgets"):
        ExperimentConfig.from_dict({**BASE, "metrics": {"answer_kept": True}})
    with pytest.raises(ConfigError, match=r"^metrics.answer_kept: compares with and without consolidation"):
        ExperimentConfig.from_dict({**BASE, "metrics": {"answer_kept": True, "answer_budgets": [64]}})
    with pytest.raises(ConfigError, match=r"^metrics.gate\[0\]: .*did you mean 'memory.compression.all.tokens_share'"):
        ExperimentConfig.from_dict({**BASE, "metrics": {"gate": ["memory.compression.all.token_share"]}})
    gated = ExperimentConfig.from_dict({**BASE, "metrics": {"gate": ["memory.provenance.unknown_sources"]}})
    assert gated.metrics.gate == ("memory.provenance.unknown_sources",)


def test_the_default_gate_follows_k_and_levels():
    def gate(**metrics):
        return ExperimentConfig.from_dict({"name": "g", "metrics": metrics}).metrics.gate

    assert gate() == ("session.recall@10", "turn.recall@10")
    assert gate(k=[1, 3, 5]) == ("session.recall@5", "turn.recall@5")  # no 10 in k: the largest cut
    assert gate(k=[1, 10, 50], levels=["turn"]) == ("turn.recall@10",)
    session_units = ExperimentConfig.from_dict({"name": "g", "memory": {"unit": "user-session"}, "metrics": {"k": [3]}})
    assert session_units.metrics.gate == ("session.recall@3",)
    with pytest.raises(ConfigError, match=r"metrics\.k\[0\]: '5' is a str"):
        gate(k=["5"])


def test_the_reference_describes_every_setting():
    from openclaw_lab.harness.schema import sections, settings

    found = {s.path: s for s in settings()}
    assert {"name", "dataset.name", "consolidation.merge", "systems.superseded", "engine.num_cpus"} <= set(found)
    assert [path for path, s in found.items() if not s.description] == []  # a new field needs its comment
    assert found["metrics.depth"].description.startswith("Items each system returns per question")  # comment above
    assert found["name"].default == "" and found["metrics.k"].default == "[1, 3, 5, 10, 25, 50]"
    assert sections()["engine"].startswith("Where the work runs")
