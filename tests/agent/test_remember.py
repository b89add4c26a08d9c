import json

import pytest

from openclaw_lab.agent.remember import (
    ImportanceScorer,
    RememberPolicy,
    RuleBasedScorer,
    ScorerPolicy,
    SeedRememberPolicy,
    importance_from_score,
    named_entities,
    remember_metrics,
)
from openclaw_lab.agent.remember_learned import LearnedRememberPolicy
from openclaw_lab.model import Importance


@pytest.mark.parametrize(("score", "level"), [(0.0, 1), (0.19, 1), (0.2, 2), (0.45, 3), (0.79, 4), (0.8, 5), (1.0, 5)])
def test_importance_bands(score, level):
    assert importance_from_score(score) == level


@pytest.mark.parametrize("score", [-0.1, 1.5, float("nan"), "high"])
def test_scores_outside_the_unit_interval_are_refused(score):
    with pytest.raises(ValueError, match="^score: "):
        importance_from_score(score)


BOTH = ("keyword:important", "keyword:birthday", "long_reply")


@pytest.mark.parametrize(
    ("message", "reply", "importance", "reasons"),
    [
        ("Please remember my appointment", "Sure.", Importance.HIGH, ("keyword:remember", "keyword:appointment")),
        ("Tell me a story", "x" * 250, Importance.HIGH, ("long_reply",)),
        ("My birthday is important", "y" * 250, Importance.CRITICAL, BOTH),
        ("What should I cook tonight?", "Maybe pasta.", Importance.MEDIUM, ()),
        ("I remembered it", "Good.", Importance.MEDIUM, ()),  # whole words: "remembered" is not "remember"
        ("hi", "hello", Importance.LOW, ()),
    ],
)
def test_seed_policy(message, reply, importance, reasons):
    decision = SeedRememberPolicy().decide(message, reply)
    assert (decision.importance, decision.reasons) == (importance, reasons)
    assert decision.remember is (importance >= Importance.HIGH)
    assert decision.score == (importance - 1) / 4


def test_named_entities_skip_sentence_starts_and_i():
    assert named_entities("Yesterday I met Ana in Porto. She said I'm late! Then Ana left") == ["Ana", "Porto"]


@pytest.mark.parametrize(
    ("message", "score", "cues"),
    [
        ("I love hiking with Ana", 0.45, ("entity", "preference")),
        ("My daughter turns 7 on Friday", 0.7, ("entity", "number", "date", "first_person")),
        ("Don't forget: the code is 4411", 1.0, ("explicit",)),
        ("ok, cool", 0.0, ()),
    ],
)
def test_rule_based_scores_are_hand_computed(message, score, cues):
    assert RuleBasedScorer().explain(message) == (pytest.approx(score), cues)


def test_rule_weights_can_be_changed_but_not_invented():
    assert RuleBasedScorer({"preference": 0.9}).score("I hate mornings") == pytest.approx(0.9)
    with pytest.raises(ValueError, match=r"^weights: unknown cues \['colour'\]"):
        RuleBasedScorer({"colour": 0.1})


def test_scorer_policy_thresholds_and_grades():
    policy = ScorerPolicy(RuleBasedScorer(), threshold=0.5)
    assert not policy.decide("I love hiking with Ana").remember
    kept = policy.decide("My daughter turns 7 on Friday")
    assert kept.remember and kept.importance == Importance.HIGH
    assert isinstance(policy, RememberPolicy) and isinstance(RuleBasedScorer(), ImportanceScorer)
    with pytest.raises(ValueError, match="^threshold: "):
        ScorerPolicy(RuleBasedScorer(), threshold=2)


def test_remember_metrics_are_hand_computed():
    metrics = remember_metrics({"a": True, "b": True, "c": False, "d": False}, ["a", "c", "z"])
    assert metrics["precision"] == metrics["recall"] == metrics["f1"] == 0.5
    assert (metrics["true_positives"], metrics["evidence"], metrics["evidence_not_decided"]) == (1, 2, 1)
    assert metrics["remember_rate"] == 0.5
    assert remember_metrics({}, [])["precision"] == 0.0


TEXTS = ["I adopted a dog named Rex", "ok", "My sister lives in Porto", "haha nice", "I moved to Lisbon", "cool"]


def test_learned_policy_round_trips_through_json(tmp_path):
    policy = LearnedRememberPolicy(min_df=1, threshold=0.6).fit(TEXTS, [1, 0, 1, 0, 1, 0])
    path = policy.save(tmp_path / "policy.json")
    saved = json.loads(path.read_text())  # plain JSON, never a pickle
    assert saved["format"] == "openclaw_lab.LearnedRememberPolicy/1" and saved["params"]["threshold"] == 0.6
    loaded = LearnedRememberPolicy.load(path)
    probe = ["My brother lives in Madrid", "haha ok", "a new word entirely"]
    assert loaded.score_many(probe).tolist() == pytest.approx(policy.score_many(probe).tolist(), abs=1e-12)
    assert loaded.decide(probe[0]) == policy.decide(probe[0])


def test_learned_policy_refuses_bad_training_and_use():
    with pytest.raises(ValueError, match="^policy: LearnedRememberPolicy is not fitted"):
        LearnedRememberPolicy().decide("hi")
    with pytest.raises(ValueError, match=r"^labels: need both classes .* got \[1\]"):
        LearnedRememberPolicy().fit(["a", "b"], [1, 1])
    with pytest.raises(ValueError, match="^labels: 1 labels for 2 texts"):
        LearnedRememberPolicy().fit(["a", "b"], [1])
    with pytest.raises(ValueError, match="^format: "):
        LearnedRememberPolicy.from_dict({"format": "pickle"})


def _locomo_turns(conversations, evidence):
    for conversation in conversations:
        for session in conversation.sessions:
            for turn in session.turns:
                text = f"{turn.text} [shares {turn.caption}]" if turn.caption else turn.text
                yield f"{conversation.id}/{turn.id}", text, turn.id in evidence[conversation.id]


def test_learned_policy_on_locomo_beats_the_rules_on_held_out_conversations(locomo_path):
    from openclaw_lab.datasets.locomo import load_locomo

    bench = load_locomo(locomo_path)
    evidence: dict[str, set[str]] = {}
    for question in bench.questions:
        evidence.setdefault(question.conversation_id, set()).update(question.evidence_turn_ids)
    train = list(_locomo_turns(bench.conversations[:7], evidence))
    test = list(_locomo_turns(bench.conversations[7:], evidence))
    learned = LearnedRememberPolicy().fit([text for _, text, _ in train], [label for *_, label in train])
    gold = [turn_id for turn_id, _, label in test if label]
    results = {}
    policies = {"seed": SeedRememberPolicy(), "rules": ScorerPolicy(RuleBasedScorer()), "learned": learned}
    for name, policy in policies.items():
        results[name] = remember_metrics({turn_id: policy.decide(text).remember for turn_id, text, _ in test}, gold)
        print(name, {key: round(value, 3) for key, value in results[name].items()})
    base_rate = len(gold) / len(test)
    assert results["learned"]["precision"] > base_rate + 0.2 and results["learned"]["recall"] > 0.5
    assert results["learned"]["f1"] > results["rules"]["f1"] > results["seed"]["f1"]
