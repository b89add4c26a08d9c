from datetime import timedelta

import pytest

from openclaw_lab.datasets.synthetic import generate
from openclaw_lab.harness.build import build
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.replay.fork import replay_shared
from openclaw_lab.replay.conversation import memory_units, render_turn, replay_conversation
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


DECAY = {"enabled": True, "law": "seed", "interval_hours": 24, "threshold": 0.1, "prune_tiers": ["episodic", "semantic"]}


def decay_plans(embedder, dailies, **memory):
    return [config(embedder, memory={"store": "exact", **memory}, consolidation={**DECAY, "law_params": {"daily": d}})
            for d in dailies]  # fmt: skip


def held(replay):
    """Everything a replay leaves that a later stage reads, embeddings included."""
    items = [(i.id, i.tier, i.access_count, i.last_accessed, i.importance, dict(i.metadata), i.tags, i.source_ids,
              i.embedding.tobytes()) for i in replay.items]  # fmt: skip
    return (items, replay.units_seen, replay.footprint, replay.consolidations, replay.promoted_turn_ids,
            replay.asked_at)  # fmt: skip


def test_a_shared_replay_equals_a_replay_per_plan_where_decisions_part_and_where_they_agree(embedder, tmp_path):
    benchmark = generate(400, seed=5, n_conversations=2)
    plans = decay_plans(embedder, [0.5, 0.8, 0.9, 0.97, 0.999, 1.0])
    for conversation in benchmark.conversations:
        shared = replay_shared(conversation, benchmark.questions, plans, embedder, tmp_path / f"{conversation.id}-shared")
        alone = [replay_conversation(conversation, benchmark.questions, plan, embedder, tmp_path / f"{conversation.id}-{n}")
                 for n, plan in enumerate(plans)]  # fmt: skip
        assert [held(r) for r in shared] == [held(r) for r in alone]
        memories = [tuple(i.id for i in r.items) for r in alone]
        assert len(set(memories)) > 2, "the grid should prune differently, so that the memory forks"
        assert memories[-1] == memories[-2], "1.0 and 0.999 never prune here: they share one memory to the end"
        logs = [r.consolidations for r in shared]
        assert logs[-1][-1]["config"]["prune"] != logs[-2][-1]["config"]["prune"]  # each plan logs its own law


def test_a_shared_replay_refuses_plans_that_differ_in_more_than_pruning(embedder, benchmark):
    conversation = benchmark.conversations[0]
    with pytest.raises(ValueError, match=r"^plans\[1\]\.unit"):
        replay_shared(conversation, [], [*decay_plans(embedder, [0.9]), *decay_plans(embedder, [0.8], unit="round")],
                      embedder)  # fmt: skip
    with pytest.raises(ValueError, match=r"^plans\[0\]\.persist"):
        replay_shared(conversation, [], decay_plans(embedder, [0.9, 0.8], persist=True), embedder)
    summaries = {**DECAY, "summaries": {}}
    plans = [config(embedder, consolidation=summaries)] * 2
    with pytest.raises(ValueError, match=r"^plans\[0\]\.consolidation: Summarise"):
        replay_shared(conversation, [], plans, embedder)
