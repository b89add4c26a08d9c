"""Fusion: RRF and weighted CombSUM against ranx.fuse, the seed's blend by hand, the fused retriever."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from ranx import Run
from ranx import fuse as ranx_fuse

from openclaw_lab.model import MemoryFilter, MemoryItem
from openclaw_lab.retrieval.bm25 import BM25Retriever
from openclaw_lab.retrieval.dense import DenseRetriever
from openclaw_lab.retrieval.fusion import FusedRetriever, fuse, hybrid, normalise
from openclaw_lab.retrieval.protocol import search_batch

from .conftest import FixedRetriever

T = datetime(2023, 5, 8, tzinfo=timezone.utc)

# three runs with overlapping and missing items, no tied scores
DENSE = {
    "q1": {"a": 0.91, "b": 0.83, "c": 0.40, "d": 0.12},
    "q2": {"x": 0.70, "y": 0.65, "z": 0.30},
    "q3": {"a": 0.5, "e": 0.2},
}
SPARSE = {
    "q1": {"c": 12.5, "e": 7.25, "a": 3.0},
    "q2": {"z": 4.0, "w": 3.5},
    "q3": {"e": 9.0, "f": 1.5, "g": 0.5},
}
THIRD = {
    "q1": {"d": 0.3, "b": 0.2, "f": 0.1},
    "q2": {"y": 2.0, "x": -1.0},
    "q3": {"g": 5.0, "a": 4.0},
}


def ranx_scores(runs, **kwargs) -> dict[str, dict[str, float]]:
    fused = ranx_fuse(runs=[Run(run) for run in runs], **kwargs)
    return {qid: dict(docs) for qid, docs in fused.to_dict().items()}


def assert_same_run(ours, theirs):
    assert ours.keys() == theirs.keys()
    for qid in ours:
        assert ours[qid].keys() == theirs[qid].keys()
        for doc in ours[qid]:
            assert ours[qid][doc] == pytest.approx(theirs[qid][doc], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("k", [60, 10, 1])
def test_rrf_equals_ranx(k):
    runs = [DENSE, SPARSE, THIRD]
    assert_same_run(fuse(runs, method="rrf", k=k), ranx_scores(runs, method="rrf", params={"k": k}))


@pytest.mark.parametrize(("norm", "ranx_norm"), [("min-max", "min-max"), ("z-score", "zmuv")])
@pytest.mark.parametrize("weights", [(1.0, 1.0, 1.0), (0.6, 0.3, 0.1)])
def test_weighted_combsum_equals_ranx_wsum(norm, ranx_norm, weights):
    runs = [DENSE, SPARSE, THIRD]
    ours = fuse(runs, method="wsum", weights=weights, norm=norm)
    assert_same_run(ours, ranx_scores(runs, method="wsum", norm=ranx_norm, params={"weights": list(weights)}))


def test_rrf_by_hand():
    fused = fuse([DENSE, SPARSE], method="rrf", k=60)["q1"]
    assert fused == pytest.approx(
        {"a": 1 / 61 + 1 / 63, "c": 1 / 63 + 1 / 61, "b": 1 / 62, "e": 1 / 62, "d": 1 / 64}
    )
    assert list(fused) == ["a", "c", "b", "e", "d"]  # best first; exact ties by id


def test_weighted_rrf_scales_each_runs_share():
    fused = fuse([DENSE, SPARSE], method="rrf", weights=[2.0, 0.5], k=60)["q2"]
    assert fused["x"] == pytest.approx(2 / 61)
    assert fused["z"] == pytest.approx(2 / 63 + 0.5 / 61)


def test_min_max_and_z_score_normalisation_by_hand():
    assert normalise({"a": 3.0, "b": 1.0, "c": 2.0}, "min-max") == {"a": 1.0, "b": 0.0, "c": 0.5}
    assert normalise({"only": 5.0}, "min-max") == {"only": 0.0}  # ranx's 1e-9 floor on the spread
    z = normalise({"a": 3.0, "b": 1.0}, "z-score")
    assert z == pytest.approx({"a": 1.0, "b": -1.0})  # mean 2, population std 1
    assert normalise({"a": 3.0}, None) == {"a": 3.0}


def test_the_seed_blend_counts_membership_only():
    fused = fuse([DENSE, SPARSE], method="seed-blend")["q1"]
    assert fused == pytest.approx({"a": 1.0, "c": 1.0, "b": 0.7, "d": 0.7, "e": 0.3})
    with pytest.raises(ValueError, match=r"^weights: seed-blend weighs 2 runs \(0.7, 0.3\); give weights for 3 runs"):
        fuse([DENSE, SPARSE, THIRD], method="seed-blend")


def test_every_query_id_of_any_run_is_present():
    fused = fuse([{"q1": {"a": 1.0}}, {"q2": {"b": 1.0}, "q3": {}}])
    assert fused == {"q1": {"a": pytest.approx(1 / 61)}, "q2": {"b": pytest.approx(1 / 61)}, "q3": {}}


def test_bad_arguments_raise_naming_the_field():
    with pytest.raises(ValueError, match=r"^method: unknown fusion 'max'; choose one of rrf, wsum, seed-blend"):
        fuse([DENSE], method="max")
    with pytest.raises(ValueError, match=r"^norm: unknown normalisation 'l2'; choose one of min-max, z-score, None"):
        fuse([DENSE], method="wsum", norm="l2")
    with pytest.raises(ValueError, match=r"^weights: 1 weights for 2 runs"):
        fuse([DENSE, SPARSE], weights=[1.0])
    with pytest.raises(ValueError, match=r"^k: RRF's constant 0 must be a number > 0"):
        fuse([DENSE], k=0)
    with pytest.raises(ValueError, match=r"^runs: expected a non-empty list of runs"):
        fuse([])
    with pytest.raises(ValueError, match=r"^runs: expected a non-empty list of runs, got dict"):
        fuse(DENSE)


def fixed_pair():
    items = [MemoryItem.new(f"text {doc}", now=T, id=doc, importance=5 if doc in "ce" else 3) for doc in "abcdeg"]
    first, second = FixedRetriever(DENSE["q1"]), FixedRetriever(SPARSE["q1"])
    return first, second, items


def test_the_fused_retriever_fuses_its_retrievers_candidates():
    first, second, items = fixed_pair()
    fused = FusedRetriever([first, second], candidates=7)
    fused.index(items)
    hits = fused.search("anything", k=3)
    assert [hit.item.id for hit in hits] == ["a", "c", "b"]
    assert [hit.score for hit in hits] == pytest.approx([1 / 61 + 1 / 63, 1 / 63 + 1 / 61, 1 / 62])
    assert first.depths == [7] and second.depths == [7]
    fused.search("anything", k=20)
    assert first.depths[-1] == 20  # never fewer candidates than k


def test_the_fused_retriever_passes_the_filter_to_every_retriever():
    first, second, items = fixed_pair()
    fused = FusedRetriever([first, second], method="wsum", norm="min-max")
    fused.index(items)
    hits = fused.search("anything", k=5, filter=MemoryFilter(min_importance=5))
    # within the filter the dense run holds c alone (a single score normalises to 0) and the sparse
    # run holds c (1 after min-max) and e (0)
    assert [(hit.item.id, hit.score) for hit in hits] == [("c", pytest.approx(1.0)), ("e", pytest.approx(0.0))]


def test_search_many_equals_search(embedder, chat_corpus):
    fused = hybrid(embedder)
    fused.index(chat_corpus)
    queries = {"q1": "Where is Melanie travelling in June?", "q2": "support group", "q3": "birthday cake"}
    run = search_batch(fused, queries, k=5, filters=MemoryFilter(min_importance=2))
    for qid, text in queries.items():
        hits = fused.search(text, 5, MemoryFilter(min_importance=2))
        assert list(run[qid]) == [hit.item.id for hit in hits]
        assert list(run[qid].values()) == pytest.approx([hit.score for hit in hits])


def test_hybrid_is_dense_plus_bm25_fused_by_rrf(embedder):
    fused = hybrid(embedder, bm25={"k1": 1.2}, candidates=30, k=10)
    assert [type(r) for r in fused.retrievers] == [DenseRetriever, BM25Retriever]
    assert fused.retrievers[0].embedder is embedder and fused.retrievers[1].k1 == 1.2
    assert (fused.method, fused.candidates, fused.params) == ("rrf", 30, {"k": 10, "norm": "min-max"})


def test_unknown_fusion_parameters_raise_when_built():
    first, second, _ = fixed_pair()
    with pytest.raises(ValueError, match=r"^params: unknown fusion parameters \['alpha'\]; choose from k, norm"):
        FusedRetriever([first, second], alpha=0.5)
    with pytest.raises(ValueError, match=r"^method: unknown fusion 'rff'"):
        FusedRetriever([first, second], method="rff")
