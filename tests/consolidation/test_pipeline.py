"""Consolidation as steps: one contract, the config's order, promotion and decay last."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import pytest

from openclaw_lab.consolidation.pipeline import (
    ConsolidationPipeline, MarkExpired, MarkSuperseded, MergeRestatements, PromoteAndDecay, Summarise,
)  # fmt: skip
from openclaw_lab.errors import ConfigError
from openclaw_lab.harness import registry
from openclaw_lab.harness.build import build
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.model import MemoryItem
from openclaw_lab.stores.exact import ExactStore

NOW = datetime(2023, 5, 8)


class Recording:
    """A step that notes when it ran, and returns a report only when asked to."""

    def __init__(self, log: list[str], name: str, report: object = None) -> None:
        self.log, self.name, self.report = log, name, report

    def apply(self, memory, now):
        self.log.append(self.name)
        return self.report


def test_steps_run_in_order_and_the_last_report_is_the_runs():
    log: list[str] = []
    pipeline = ConsolidationPipeline([Recording(log, "a", "first"), Recording(log, "b", "second"), Recording(log, "c")])
    assert pipeline.run(SimpleNamespace(), NOW) == "second"
    assert log == ["a", "b", "c"]


def test_a_step_without_apply_is_refused_by_its_position():
    with pytest.raises(ValueError, match=r"^steps\[1\]: .* has no apply\(memory, now\) method"):
        ConsolidationPipeline([PromoteAndDecay(), object()])


def test_a_step_with_state_is_fresh_for_each_memory():
    summarise = Summarise(statements=2)
    summarise.done.add("summary_s1")
    fresh = ConsolidationPipeline([summarise, PromoteAndDecay()]).fresh()
    assert fresh.steps[0] is not summarise and fresh.steps[0].done == set()
    assert fresh.steps[0].summaries == summarise.summaries and fresh.steps[1] is not None


def test_expiry_marks_semantic_items_and_the_copies_of_episodic_ones():
    said = lambda item_id, text: MemoryItem.new(text, now=datetime(2023, 5, 1), id=item_id, embedding=[1.0, 0.0])  # noqa: E731
    memory = SimpleNamespace(episodic=ExactStore(), semantic=ExactStore(), embedder=None)
    memory.episodic.upsert([said("e1", "The dentist is on 2023-05-03"), said("e2", "I like tea")])
    memory.semantic.upsert([said("sem_e1", "The dentist is on 2023-05-03"), said("s9", "Party on 2023-05-04")])
    MarkExpired().apply(memory, NOW)
    marked = lambda store: sorted(i.id for i in store.items() if "valid_until" in i.metadata)  # noqa: E731
    assert marked(memory.episodic) == ["e1"] and marked(memory.semantic) == ["s9", "sem_e1"]


def config(consolidation: dict) -> ExperimentConfig:
    return ExperimentConfig.from_dict({"name": "t", "dataset": {"name": "synthetic"},
                                       "consolidation": {"enabled": True, **consolidation}})  # fmt: skip


def test_the_config_gives_the_order_tables_first_then_steps_then_promotion_and_decay(embedder, monkeypatch):
    monkeypatch.setattr(registry.consolidation_steps, "_own", dict(registry.consolidation_steps._own))
    registry.consolidation_steps.register("recording", lambda tag="x": Recording([], tag))
    pipeline = build(config({"expiry": {}, "supersession": {}, "merge": {}, "summaries": {},
                             "steps": [{"step": "recording", "tag": "one"}, {"step": "recording"}]}),
                     embedder=embedder).replay.consolidation  # fmt: skip
    kinds = [type(step) for step in pipeline.steps]
    assert kinds == [Summarise, MergeRestatements, MarkSuperseded, MarkExpired, Recording, Recording, PromoteAndDecay]
    assert [pipeline.steps[4].name, pipeline.steps[5].name] == ["one", "x"]


@pytest.mark.parametrize("steps, message", [
    ([{"step": "expirey"}], r"^consolidation\.steps\[0\]\.step: unknown consolidation step 'expirey'; did you mean"),
    ([{"step": "expiry", "grace": 1}], r"^consolidation\.steps\[0\]\.grace: unknown parameter of MarkExpired"),
    ([{"step": "supersession", "strategy": "pairz"}], r"^consolidation\.supersession\.strategy: unknown supersession"),
])  # fmt: skip
def test_a_bad_step_fails_at_build_naming_its_field(steps, message, embedder):
    with pytest.raises(ConfigError, match=message):
        build(config({"steps": steps}), embedder=embedder)


def test_configs_without_steps_keep_their_fingerprint():
    """``steps`` is left out of the config's data when empty, so every run written before it keeps its id."""
    plain = config({"supersession": {}})
    assert "steps" not in plain.to_dict()["consolidation"]
    assert plain.with_value("consolidation.steps", [{"step": "expiry"}]).fingerprint() != plain.fingerprint()
