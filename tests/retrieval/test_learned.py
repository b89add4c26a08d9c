"""The learned reranker: features by hand, fitting on some conversations and evaluating on others, JSON."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.protocol import Reranker
from openclaw_lab.retrieval.learned import (
    Candidate,
    FeatureExtractor,
    LearnedReranker,
    TrainingQuery,
    conversation_folds,
    mean_reciprocal_rank,
    split_by_conversation,
)

T0 = datetime(2023, 5, 8, 12, 0, tzinfo=timezone.utc)


def item(id, content, *, hours_ago=0.0, speaker=None, **fields):
    when = T0 - timedelta(hours=hours_ago)
    metadata = {"speaker": speaker} if speaker else {}
    return MemoryItem.new(content, now=when, id=id, metadata=metadata, **fields)


# features, by hand
def test_feature_names_and_values_worked_by_hand():
    a = item("a", "Alice went hiking in Denver", hours_ago=1.0, speaker="Alice", importance=5, access_count=3)
    b = item("b", "Bob bought a red bike yesterday", hours_ago=0.0, speaker="Bob")
    candidates = [
        Candidate(a, 0.03, {"dense": 0.8, "bm25": 4.0}, {"dense": 1, "bm25": 2}),
        Candidate(b, 0.02, {"dense": 0.4}, {"dense": 2}),
    ]
    extractor = FeatureExtractor()
    x = extractor.transform("Where did Alice go hiking?", candidates, now=T0)
    col = {name: x[:, j] for j, name in enumerate(extractor.names)}
    assert x.shape == (2, 15)
    np.testing.assert_allclose(col["dense_score_z"], [1.0, -1.0])  # mean 0.6, standard deviation 0.2
    np.testing.assert_allclose(col["dense_score_rel"], [1.0, 0.5])
    np.testing.assert_allclose(col["dense_rr"], [1.0, 0.5])
    # b is absent from BM25: the lowest BM25 score seen, one rank past the last, reciprocal rank 0
    np.testing.assert_allclose(col["bm25_score_z"], [0.0, 0.0])  # 4.0 for both: no spread
    np.testing.assert_allclose(col["bm25_rank"], [2.0, 3.0])
    np.testing.assert_allclose(col["bm25_rr"], [0.5, 0.0])
    np.testing.assert_allclose(col["bm25_present"], [1.0, 0.0])
    np.testing.assert_allclose(col["recency_log_hours"], [math.log(2.0), 0.0])
    np.testing.assert_allclose(col["importance"], [5.0, 3.0])
    np.testing.assert_allclose(col["access_log"], [math.log(4.0), 0.0])
    # content words: query {alic, go, hike}; a {alic, went, hike, denver}: 2 shared of 5
    np.testing.assert_allclose(col["token_jaccard"], [2 / 5, 0.0])
    np.testing.assert_allclose(col["speaker_match"], [1.0, 0.0])
    assert not [name for name in extractor.names if "length" in name]  # by default a memory's size is no feature
    with_length = FeatureExtractor(length=True)
    lengths = with_length.transform("Where did Alice go hiking?", candidates, now=T0)[:, -1]
    # 4 and 5 content words: log 5 and log 6, each half the gap from their median
    np.testing.assert_allclose(lengths, [-math.log(6 / 5) / 2, math.log(6 / 5) / 2])
    assert with_length.names[-1] == "length_rel"


def test_session_features_worked_by_hand():
    scores = [0.9, 0.6, 0.5, 0.2, 0.1]  # one source, so an item's strength is its dense z-score
    sessions = ["s1", "s2", "s1", "s2", "s3"]
    items = [item(f"t{n}", f"turn {n}", session_id=s) for n, s in enumerate(sessions)]
    candidates = [Candidate(it, s, {"dense": s}, {"dense": n}) for n, (it, s) in enumerate(zip(items, scores), 1)]
    extractor = FeatureExtractor(sources=("dense",), session=True)
    x = extractor.transform("turn", candidates, now=T0)
    col = {name: x[:, j] for j, name in enumerate(extractor.names)}
    z = (np.array(scores) - np.mean(scores)) / np.std(scores)
    assert z[2] > 0 > z[3]
    np.testing.assert_allclose(col["dense_score_z"], z)
    np.testing.assert_allclose(col["session_best_dense_z"], [z[0], z[1], z[0], z[1], z[4]])
    np.testing.assert_allclose(col["session_rank_log"], np.log1p([0, 1, 0, 1, 2]))  # by each session's best
    # the sum of each session's three best strengths above 0: s2's second and s3's only one are below
    np.testing.assert_allclose(col["session_top3"], [z[0] + z[2], z[1], z[0] + z[2], z[1], 0.0])
    np.testing.assert_allclose(col["session_share_log"], np.log1p([2, 2, 2, 2, 1]))
    np.testing.assert_allclose(col["in_session_rank_log"], np.log1p([0, 0, 1, 1, 0]))
    assert not FeatureExtractor().session and "session_top3" not in FeatureExtractor().names
    no_sources = FeatureExtractor(sources=(), session=True)  # strength 0 everywhere; still one row per candidate
    assert no_sources.transform("turn", candidates, now=T0).shape == (5, len(no_sources.names))


def test_recency_without_a_time_is_measured_from_the_newest_candidate():
    old, new = item("old", "old news", hours_ago=3.0), item("new", "new news")
    x = FeatureExtractor(sources=()).transform("news", [Candidate(old, 1.0), Candidate(new, 0.5)])
    np.testing.assert_allclose(x[:, 0], [math.log(4.0), 0.0])


# a hand-made benchmark: the first stage's order is noise; the relevant memory is the one that names
# the question's topic AND is spoken by the person the question names
SPEAKERS = ["Alice", "Bruno", "Chiara", "Dmitri"]
TOPICS = ["hiking", "painting", "guitar", "cooking", "chess", "surfing", "pottery", "tennis"]


def make_queries(conversation_ids, per_conversation=6, seed=0):
    rng = np.random.default_rng(seed)
    queries = []
    for conversation in conversation_ids:
        for q in range(per_conversation):
            speaker, other = rng.choice(SPEAKERS, size=2, replace=False)
            topic, other_topic = rng.choice(TOPICS, size=2, replace=False)
            prefix = f"{conversation}-{q}"
            pool = [
                item(f"{prefix}-rel", f"I have been really into {topic} lately", speaker=speaker),
                item(f"{prefix}-topic", f"My cousin tried {topic} once", speaker=other),
                item(f"{prefix}-speaker", f"I have been really into {other_topic} lately", speaker=speaker),
            ] + [item(f"{prefix}-n{j}", f"We talked about {t} and the weather", speaker=str(rng.choice(SPEAKERS)))
                 for j, t in enumerate(rng.choice(TOPICS, size=5))]
            order = rng.permutation(len(pool))
            candidates = tuple(
                Candidate(pool[i], 1.0 / (60 + rank), {"dense": 0.9 - 0.05 * rank}, {"dense": rank})
                for rank, i in enumerate(order, 1)
            )
            text = f"What has {speaker} been doing with {topic}?"
            queries.append(TrainingQuery(text, candidates, frozenset({f"{prefix}-rel"}), conversation, T0))
    return queries


@pytest.fixture(scope="module")
def split():
    conversations = [f"conv-{i}" for i in range(10)]
    train_ids, test_ids = split_by_conversation(conversations, test_fraction=0.3, seed=7)
    return make_queries(sorted(train_ids), seed=1), make_queries(sorted(test_ids), seed=2), train_ids, test_ids


@pytest.fixture(scope="module")
def fitted(split):
    train, _, _, _ = split
    return LearnedReranker().fit(train, provenance={"dataset": "hand-made"})


def test_fit_on_some_conversations_beats_the_first_stage_on_the_others(fitted, split):
    _, test, train_ids, test_ids = split
    assert fitted.trained_on == train_ids and train_ids.isdisjoint(test_ids)
    result = fitted.evaluate(test)
    assert result["queries"] == len(test) == 18
    assert result["first_stage_mrr"] < 0.6  # noise: the relevant memory is anywhere in the list
    assert result["mrr"] > 0.9 > result["first_stage_mrr"] + 0.3


def test_evaluating_on_a_training_conversation_raises(fitted, split):
    train, test, _, _ = split
    with pytest.raises(ValueError, match="conversation_ids: .*used to fit"):
        fitted.evaluate(test + train[:1])
    with pytest.raises(ValueError, match=train[0].conversation_id):
        fitted.check_unseen([train[0].conversation_id])


def test_a_model_with_session_features_round_trips(split, tmp_path):
    train, test, _, _ = split
    model = LearnedReranker(session=True, length=True).fit(train)
    loaded = LearnedReranker.load(model.save(tmp_path / "model.json"))
    assert loaded.features.session and loaded.features.length
    np.testing.assert_array_equal(loaded.scores(test[0].query, test[0].candidates, T0),
                                  model.scores(test[0].query, test[0].candidates, T0))


def test_portable_features_are_each_sources_reciprocal_rank_only():
    a = item("a", "Alice went hiking in Denver", speaker="Alice", importance=5, access_count=3)
    b = item("b", "Bob bought a red bike yesterday", hours_ago=30.0, speaker="Bob")
    candidates = [Candidate(a, 0.03, {"dense": 0.8, "bm25": 4.0}, {"dense": 1, "bm25": 2}),
                  Candidate(b, 0.02, {"dense": 0.4}, {"dense": 2})]  # fmt: skip
    portable, full = FeatureExtractor(portable=True), FeatureExtractor()
    assert portable.names == ["dense_rr", "bm25_rr"]
    x = portable.transform("Where did Alice go hiking?", candidates, now=T0)
    whole = full.transform("Where did Alice go hiking?", candidates, now=T0)
    np.testing.assert_array_equal(x, whole[:, [full.names.index(name) for name in portable.names]])
    with pytest.raises(ValueError, match="length: a portable model"):
        FeatureExtractor(portable=True, length=True)


def test_a_portable_pooled_model_round_trips_and_checks_its_pool(split, tmp_path):
    train, test, _, _ = split
    model = LearnedReranker(portable=True, pool="bm25").fit(train)
    loaded = LearnedReranker.load(model.save(tmp_path / "model.json"))
    assert loaded.features.portable and loaded.pool == "bm25" and not loaded.features.session
    np.testing.assert_array_equal(loaded.scores(test[0].query, test[0].candidates, T0),
                                  model.scores(test[0].query, test[0].candidates, T0))
    with pytest.raises(ValueError, match="pool: 'combsum' is not one of the sources dense, bm25"):
        LearnedReranker(pool="combsum")


def test_json_round_trip_gives_identical_scores(fitted, split, tmp_path):
    _, test, _, _ = split
    path = fitted.save(tmp_path / "model.json")
    loaded = LearnedReranker.load(path)
    data = json.loads(path.read_text())
    assert data["trained_on_conversations"] == sorted(fitted.trained_on)
    assert data["provenance"]["dataset"] == "hand-made" and data["provenance"]["queries"] == 42
    assert loaded.trained_on == fitted.trained_on
    for q in test[:5]:
        assert np.array_equal(loaded.scores(q.query, q.candidates, T0), fitted.scores(q.query, q.candidates, T0))


def test_loading_a_model_of_other_features_raises(fitted, tmp_path):
    data = fitted.to_dict()
    data["feature_names"] = data["feature_names"][:-1]
    (tmp_path / "bad.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="feature_names"):
        LearnedReranker.load(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="no learned-reranker file"):
        LearnedReranker.load(tmp_path / "missing.json")
    (tmp_path / "other.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="format"):
        LearnedReranker.load(tmp_path / "other.json")


def test_rerank_candidates_keeps_k_best_first_and_uses_the_clock(fitted, split, clock):
    _, test, _, _ = split
    q = test[0]
    hits = fitted.rerank_candidates(q.query, q.candidates, k=3)
    assert len(hits) == 3 and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert hits[0].item.id in q.relevant
    with_clock = LearnedReranker.from_dict(fitted.to_dict(), clock=clock)
    assert with_clock.rerank_candidates(q.query, q.candidates, 3) == fitted.rerank_candidates(
        q.query, q.candidates, 3, now=clock.now()
    )


def test_it_reranks_candidates_only_and_plain_ones_say_what_they_lack(fitted):
    assert isinstance(fitted, Reranker)  # the one reranker protocol, honoured
    plain = Candidate(item("a", "Alice likes tea"), 0.5)
    with pytest.raises(ValueError, match="candidates: none carries a score from dense, bm25"):
        fitted.rerank_candidates("Alice tea", [plain], k=1)
    assert fitted.rerank_candidates("Alice tea", [], k=1) == []
    with pytest.raises(ValueError, match="k: 0"):
        fitted.rerank_candidates("Alice tea", [plain], k=0)
    with pytest.raises(ValueError, match="query"):
        fitted.rerank_candidates(" ", [plain], k=1)


def test_fit_needs_relevant_and_irrelevant_candidates(split):
    train, _, _, _ = split
    no_relevant = [TrainingQuery(q.query, q.candidates, frozenset(), q.conversation_id) for q in train[:3]]
    with pytest.raises(ValueError, match="queries: need relevant and irrelevant candidates; got 0 relevant of 24"):
        LearnedReranker().fit(no_relevant)
    with pytest.raises(ValueError, match="C: 0"):
        LearnedReranker(C=0).fit(train)
    with pytest.raises(ValueError, match="not fitted"):
        LearnedReranker().scores("q", train[0].candidates)


def test_hand_set_fallback_orders_by_summed_reciprocal_ranks():
    a, b, c = item("a", "alpha one"), item("b", "beta two"), item("c", "gamma three")
    candidates = [
        Candidate(a, 0.0, {"dense": 0.9, "bm25": 1.0}, {"dense": 1, "bm25": 3}),  # 1 + 1/3
        Candidate(b, 0.0, {"dense": 0.5, "bm25": 3.0}, {"dense": 3, "bm25": 1}),  # 1/3 + 1
        Candidate(c, 0.0, {"dense": 0.7, "bm25": 2.0}, {"dense": 2, "bm25": 2}),  # 1/2 + 1/2
    ]
    hits = LearnedReranker.hand_set().rerank_candidates("nothing shared", candidates, k=3)
    assert [(h.item.id, round(h.score, 6)) for h in hits] == [("a", 1.333333), ("b", 1.333333), ("c", 1.0)]
    assert "hand-set" in LearnedReranker.hand_set().provenance["fitted_by"]


# splits
def test_split_by_conversation_is_disjoint_seeded_and_checked():
    ids = [f"c{i}" for i in range(10)] * 3  # one id per question: repeats are expected
    train, test = split_by_conversation(ids, test_fraction=0.2, seed=3)
    assert len(test) == 2 and len(train) == 8 and train | test == set(ids) and not train & test
    assert split_by_conversation(ids, test_fraction=0.2, seed=3) == (train, test)
    assert split_by_conversation(ids, test_fraction=0.2, seed=4) != (train, test)
    with pytest.raises(ValueError, match="test_fraction: 1.0"):
        split_by_conversation(ids, test_fraction=1.0)
    with pytest.raises(ValueError, match="conversation_ids: 1 distinct"):
        split_by_conversation(["only"] * 5)


def test_conversation_folds_partition_the_conversations():
    ids = [f"c{i}" for i in range(7)]
    folds = conversation_folds(ids, n_folds=3, seed=0)
    tests = [test for _, test in folds]
    assert sorted(len(t) for t in tests) == [2, 2, 3]
    assert frozenset().union(*tests) == set(ids) and sum(len(t) for t in tests) == 7
    assert all(train.isdisjoint(test) and train | test == set(ids) for train, test in folds)
    with pytest.raises(ValueError, match="n_folds: 8 must be an integer from 2 to 7"):
        conversation_folds(ids, n_folds=8)


def test_mean_reciprocal_rank_by_hand():
    rankings = [["a", "b", "c"], ["x", "y"], ["p"]]
    relevant = [frozenset({"c"}), frozenset({"x", "y"}), frozenset({"z"})]
    assert mean_reciprocal_rank(rankings, relevant) == pytest.approx((1 / 3 + 1 + 0) / 3)
    assert mean_reciprocal_rank([], []) == 0.0


# the real first stage on the synthetic benchmark: fit on two conversations, evaluate on the other two
def test_fitted_on_real_candidates_it_matches_or_beats_the_first_stage_elsewhere(embedder):
    from openclaw_lab.datasets.synthetic import generate
    from openclaw_lab.retrieval.bm25 import BM25Retriever
    from openclaw_lab.retrieval.dense import DenseRetriever
    from openclaw_lab.retrieval.rerank import HybridFirstStage

    bench = generate(160, seed=0, n_conversations=4, fact_rate=0.35, update_rate=0.1)
    embedder.encode([q.text for q in bench.questions])  # one batch; each search then reads the cache
    queries = []
    for conversation in bench.conversations:
        first_stage = HybridFirstStage({"dense": DenseRetriever(embedder), "bm25": BM25Retriever()})
        first_stage.index([
            MemoryItem.new(turn.text, now=session.started_at, id=turn.id, source_ids=(turn.id,),
                           metadata={"speaker": turn.speaker})
            for session in conversation.sessions for turn in session.turns
        ])
        queries += [
            TrainingQuery(q.text, tuple(first_stage.search_candidates(q.text, 30)), frozenset(q.evidence_turn_ids),
                          q.conversation_id, q.asked_at)
            for q in bench.questions if q.conversation_id == conversation.id
        ]
    train_ids, test_ids = split_by_conversation([q.conversation_id for q in queries], test_fraction=0.5, seed=0)
    model = LearnedReranker().fit([q for q in queries if q.conversation_id in train_ids])
    result = model.evaluate([q for q in queries if q.conversation_id in test_ids])
    assert result["queries"] >= 10
    assert result["mrr"] >= result["first_stage_mrr"]
    with pytest.raises(ValueError, match="used to fit"):
        model.evaluate([q for q in queries if q.conversation_id in train_ids][:1])


def test_candidate_checks_its_source_scores_and_ranks():
    a = item("a", "x")
    with pytest.raises(ValueError, match="source_ranks: sources \\[\\] differ"):
        Candidate(a, 1.0, {"dense": 0.5}, {})
    with pytest.raises(ValueError, match="source_ranks\\['dense'\\]: 0 for item 'a'"):
        Candidate(a, 1.0, {"dense": 0.5}, {"dense": 0})
    with pytest.raises(ValueError, match="source_scores\\['dense'\\]: nan"):
        Candidate(a, 1.0, {"dense": float("nan")}, {"dense": 1})
