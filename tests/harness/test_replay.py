from datetime import timedelta

import pytest

from openclaw_lab.datasets.synthetic import generate
from openclaw_lab.harness.build import build
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.replay import memory_units, render_turn, replay_conversation
from openclaw_lab.model import MemoryTier


@pytest.fixture(scope="module")
def benchmark():
    return generate(120, seed=3)


def config(embedder, **sections):
    """The replay plan that the composition root builds from these config sections."""
    return build(ExperimentConfig.from_dict({"name": "replay", **sections}), embedder=embedder).replay


def test_items_are_stamped_in_the_dataset_time(benchmark, embedder, tmp_path):
    conversation = benchmark.conversations[0]
    replay = replay_conversation(conversation, benchmark.questions, config(embedder, memory={"turn_seconds": 60}), embedder, tmp_path)
    by_turn = {item.source_ids[0]: item for item in replay.items}
    for session in conversation.sessions:
        for n, turn in enumerate(session.turns):
            assert by_turn[turn.id].created_at == session.started_at + timedelta(minutes=n)
            assert by_turn[turn.id].session_id == session.id
    assert replay.units_seen == sum(len(s.turns) for s in conversation.sessions)
    assert len(replay.footprint) == len(conversation.sessions) + 1
    assert replay.footprint[-1]["episodic"] == replay.units_seen


def test_simulated_access_feeds_consolidation(benchmark, embedder, tmp_path):
    conversation = benchmark.conversations[0]
    settings = config(embedder, consolidation={"enabled": True, "law": "seed", "interval_hours": 24})
    replay = replay_conversation(conversation, benchmark.questions, settings, embedder, tmp_path)
    episodic = [i for i in replay.items if i.tier is MemoryTier.EPISODIC]
    semantic = [i for i in replay.items if i.tier is MemoryTier.SEMANTIC]
    assert sum(i.access_count for i in episodic) > 0
    assert replay.consolidations and semantic
    assert all(i.metadata["consolidated_from"] for i in semantic)
    # every promoted turn is a turn that some semantic item came from, or one that was pruned since
    assert {t for i in semantic for t in i.source_ids} <= replay.promoted_turn_ids


def test_no_access_simulation_means_nothing_is_promoted_by_access(benchmark, embedder, tmp_path):
    settings = config(embedder, memory={"simulate_access": False}, consolidation={"enabled": True, "law": "seed"})
    replay = replay_conversation(benchmark.conversations[0], benchmark.questions, settings, embedder, tmp_path)
    assert all(i.access_count == 0 for i in replay.items)
    assert not [i for i in replay.items if i.tier is MemoryTier.SEMANTIC]


def test_round_units_pair_turns_with_speakers_and_captions(benchmark):
    session = benchmark.conversations[0].sessions[0]
    rounds = memory_units(session, "round", "c")
    assert len(rounds) == (len(session.turns) + 1) // 2
    assert rounds[0]["source_ids"] == [session.turns[0].id, session.turns[1].id]
    assert rounds[0]["content"].splitlines()[0] == render_turn(session.turns[0].speaker, session.turns[0].text)
    assert render_turn("Ana", "look", "a dog on a beach") == "Ana: look [image: a dog on a beach]"


def test_user_session_units_follow_the_longmemeval_protocol():
    from pathlib import Path

    from openclaw_lab.datasets import load_longmemeval, session_documents

    fixture = Path(__file__).resolve().parents[1] / "datasets" / "fixtures" / "lme_format_tiny.json"
    conversation = load_longmemeval(fixture, drop_abstention=True).conversations[0]
    units = [u for s in conversation.sessions for u in memory_units(s, "user-session", conversation.id)]
    assert {u["session_id"]: u["content"] for u in units} == {
        k: v for k, v in session_documents(conversation).items() if v
    }
    assert all(len(memory_units(s, "session", "c")) == 1 for s in conversation.sessions)
