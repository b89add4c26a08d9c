"""One contract for every retriever: at most k hits, best first, finite scores, filters before the top k.

To add a retriever, append a ``Case`` to ``CASES``: a name, a function ``(embedder, clock) -> fresh
retriever``, and whether a filtered search must equal the unfiltered ranking restricted to the
matching items (true of retrievers whose scores do not depend on the candidate set; fusion and
rescoring normalise over the candidates, so for them only the count and membership are checked).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

from openclaw_lab.retrieval.bm25 import BM25Retriever
from openclaw_lab.retrieval.context import NeighbourContext
from openclaw_lab.retrieval.dense import DenseRetriever
from openclaw_lab.retrieval.fusion import FusedRetriever
from openclaw_lab.retrieval.learned import LearnedReranker
from openclaw_lab.retrieval.rerank import HybridFirstStage, MMRReranker, TwoStageRetriever
from openclaw_lab.retrieval.scoring import MemoryAwareRetriever
from openclaw_lab.retrieval.splade import SpladeRetriever
from openclaw_lab.harness.build import make_retriever
from openclaw_lab.retrieval.temporal import TimeAwareRetriever
from openclaw_lab.stores.exact import ExactStore

from .conftest import FILTERS, QUERIES


class Case(NamedTuple):
    name: str
    build: Callable[[Any, Any], Any]
    restricts_exactly: bool = False


def _dense(embedder, clock):
    return DenseRetriever(embedder, store=ExactStore())


def _pair(embedder):
    return [DenseRetriever(embedder, store=ExactStore()), BM25Retriever()]


CASES: list[Case] = [
    Case("dense-exact", _dense, restricts_exactly=True),
    Case("bm25", lambda embedder, clock: BM25Retriever(), restricts_exactly=True),
    Case("bm25-atire-nostem", lambda e, c: BM25Retriever(method="atire", stemmer=None), True),
    Case("fused-rrf", lambda embedder, clock: FusedRetriever(_pair(embedder), method="rrf", k=60)),
    Case("fused-wsum-minmax", lambda embedder, clock: FusedRetriever(_pair(embedder), method="wsum", norm="min-max")),
    Case("fused-wsum-zscore", lambda embedder, clock: FusedRetriever(_pair(embedder), method="wsum", norm="z-score")),
    Case("fused-seed-blend", lambda embedder, clock: FusedRetriever(_pair(embedder), method="seed-blend")),
    Case("hybrid-strategy", lambda embedder, clock: make_retriever("hybrid", embedder=embedder, clock=clock)),
    Case("memory-aware", lambda embedder, clock: MemoryAwareRetriever(_dense(embedder, clock), clock)),
    Case("time-aware-filter", lambda e, c: TimeAwareRetriever(_dense(e, c), c, mode="filter"), True),
    Case("time-aware-boost", lambda e, c: TimeAwareRetriever(BM25Retriever(), c, mode="boost")),
    Case("two-stage-mmr", lambda e, c: TwoStageRetriever(_dense(e, c), MMRReranker(lambda_=0.5), candidates=20)),
    Case("two-stage-learned", lambda e, c: TwoStageRetriever(
        HybridFirstStage({"dense": _dense(e, c), "bm25": BM25Retriever()}), LearnedReranker.hand_set(c), candidates=20)),
    Case("rerank-strategy", lambda embedder, clock: make_retriever("rerank", embedder=embedder, clock=clock)),
    Case("neighbour-context", lambda embedder, clock: NeighbourContext(BM25Retriever(), weight=0.5)),
    Case("hybrid-context-strategy", lambda e, c: make_retriever("hybrid-context", embedder=e, clock=c)),
    Case("splade", lambda embedder, clock: SpladeRetriever(), restricts_exactly=True),
    Case("hybrid-splade", lambda e, c: make_retriever("hybrid", embedder=e, clock=c, lexical="splade")),
    Case("splade-strategy", lambda e, c: make_retriever("splade", embedder=e, clock=c), restricts_exactly=True),
]


@pytest.fixture(params=CASES, ids=[case.name for case in CASES])
def case(request) -> Case:
    return request.param


@pytest.fixture
def indexed(case, embedder, clock, chat_corpus):
    retriever = case.build(embedder, clock)
    retriever.index(chat_corpus)
    return retriever


def ids(hits):
    return [hit.item.id for hit in hits]


@pytest.mark.parametrize("k", [1, 5, 100])
def test_at_most_k_hits_best_first_with_finite_scores(indexed, k):
    for query in QUERIES:
        hits = indexed.search(query, k)
        assert len(hits) <= k
        scores = [hit.score for hit in hits]
        assert all(isinstance(score, float) and math.isfinite(score) for score in scores)
        assert scores == sorted(scores, reverse=True)
        assert len(set(ids(hits))) == len(hits)
    assert len(indexed.search(QUERIES[0], 3)) == 3  # every retriever finds something for this one


@pytest.mark.parametrize("filter_name", list(FILTERS))
def test_filters_are_applied_before_the_top_k(case, indexed, chat_corpus, filter_name):
    memory_filter = FILTERS[filter_name]
    for query in QUERIES:
        everything = indexed.search(query, len(chat_corpus))
        allowed = [hit for hit in everything if memory_filter.matches(hit.item)]
        for k in (2, 5):
            hits = indexed.search(query, k, memory_filter)
            assert all(memory_filter.matches(hit.item) for hit in hits)
            assert len(hits) == min(k, len(allowed)), "hits were lost: filtered after the top k was cut?"
            assert set(ids(hits)) <= set(ids(allowed))
            if case.restricts_exactly:
                assert ids(hits) == ids(allowed)[:k]
                assert [hit.score for hit in hits] == pytest.approx([hit.score for hit in allowed[:k]], abs=1e-6)


def test_an_empty_index_returns_no_hits(case, embedder, clock):
    retriever = case.build(embedder, clock)
    assert retriever.search(QUERIES[0], 5) == []
    retriever.index([])
    assert retriever.search(QUERIES[0], 5, FILTERS["semantic tier"]) == []


@pytest.mark.parametrize("bad_k", [0, -1, 1.5, True, "3"])
def test_a_bad_k_raises_naming_it(case, indexed, embedder, clock, bad_k):
    with pytest.raises(ValueError, match=r"^k: "):
        indexed.search(QUERIES[0], bad_k)
    with pytest.raises(ValueError, match=r"^k: "):
        case.build(embedder, clock).search(QUERIES[0], bad_k)


@pytest.mark.parametrize("bad_query", ["", "   ", None])
def test_an_empty_query_raises_naming_it(case, indexed, embedder, clock, bad_query):
    with pytest.raises(ValueError, match=r"^query: "):
        indexed.search(bad_query, 5)
    with pytest.raises(ValueError, match=r"^query: "):
        case.build(embedder, clock).search(bad_query, 5)


def test_indexing_in_batches_equals_indexing_at_once(case, indexed, embedder, clock, chat_corpus):
    batched = case.build(embedder, clock)
    batched.index(chat_corpus[:15])
    batched.search(QUERIES[0], 3)  # a search between the batches (BM25 rebuilds after it)
    batched.index(chat_corpus[15:])
    for query in QUERIES:
        once, twice = indexed.search(query, 10), batched.search(query, 10)
        assert ids(twice) == ids(once)
        assert [hit.score for hit in twice] == pytest.approx([hit.score for hit in once], abs=1e-6)


def test_an_id_indexed_again_replaces_the_old_item(indexed, embedder, chat_corpus):
    old = chat_corpus[0]
    text = "Caroline: my puppy Rex ran away and came back with a stick"
    indexed.index([old.replace(content=text, embedding=embedder.encode_one(text))])
    hits = indexed.search("Rex the puppy ran away with a stick", 40)
    assert ids(hits).count(old.id) == 1
    assert next(hit.item for hit in hits if hit.item.id == old.id).content == text
