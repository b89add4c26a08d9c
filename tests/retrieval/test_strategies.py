"""The seed's strategy names through the registry; the one-call ``retrieve``; bad input named."""

from __future__ import annotations

import pytest

from openclaw_lab.model import MemoryFilter
from openclaw_lab.harness.registry import peers, retrievers, systems
from openclaw_lab.retrieval.bm25 import BM25Retriever
from openclaw_lab.retrieval.dense import DenseRetriever
from openclaw_lab.retrieval.fusion import FusedRetriever
from openclaw_lab.retrieval.protocol import Retriever
from openclaw_lab.harness.build import make_retriever, retrieve, strategy_names

SEED_NAMES = ["dense", "sparse", "hybrid", "rerank"]


def test_the_seed_names_are_registered():
    assert set(SEED_NAMES) <= set(strategy_names())
    assert strategy_names() == retrievers.names() + systems.names() + peers.names()


@pytest.mark.parametrize("name", retrievers.names())
def test_every_registered_strategy_builds_a_retriever(name, embedder, clock):
    retriever = make_retriever(name, embedder=embedder, clock=clock)
    assert isinstance(retriever, Retriever)


def test_names_resolve_to_their_classes_with_params(embedder):
    assert type(make_retriever("dense", embedder=embedder)) is DenseRetriever
    sparse = make_retriever("sparse", k1=1.2, b=0.5)
    assert type(sparse) is BM25Retriever and (sparse.k1, sparse.b) == (1.2, 0.5)
    assert type(make_retriever("bm25")) is BM25Retriever
    fused = make_retriever("hybrid", embedder=embedder, method="wsum", norm="z-score")
    assert type(fused) is FusedRetriever and fused.params == {"k": 60, "norm": "z-score"}


@pytest.mark.parametrize("strategy", ["dense", "sparse", "hybrid"])
def test_retrieve_as_in_the_seed(strategy, embedder, clock, chat_corpus):
    hits = retrieve("What is the name of Caroline's dog?", strategy, items=chat_corpus, k=3, embedder=embedder)
    assert len(hits) == 3
    assert "m00" in [hit.item.id for hit in hits]  # "I adopted a golden retriever puppy named Rex"
    food = MemoryFilter(tags_any=("food",))
    only_food = retrieve("cake", strategy, items=chat_corpus, k=2, filter=food, embedder=embedder)
    assert [hit.item.id for hit in only_food][:1] == ["m15"] and all("food" in hit.item.tags for hit in only_food)


def test_the_default_strategy_is_hybrid(embedder, chat_corpus):
    hybrid = retrieve("support group", items=chat_corpus, k=5, embedder=embedder)
    fused = make_retriever("hybrid", embedder=embedder)
    fused.index(chat_corpus)
    assert hybrid == fused.search("support group", 5)


def test_no_items_return_no_hits():
    assert retrieve("anything", "dense") == []
    assert retrieve("anything", "sparse", items=[]) == []


def test_an_unknown_strategy_raises_naming_the_choices():
    choices = "dense, sparse, bm25, hybrid, rerank"
    with pytest.raises(ValueError, match=rf"^strategy: unknown strategy 'semantic'; choose one of {choices}"):
        make_retriever("semantic")
    with pytest.raises(ValueError, match=r"^strategy: unknown strategy 'hybird'; did you mean 'hybrid'\?"):
        retrieve("anything", "hybird")
    with pytest.raises(ValueError, match=r"^params.stemer: unknown parameter of BM25Retriever; did you mean 'stemmer'\?"):
        make_retriever("bm25", stemer=None)


@pytest.mark.parametrize("k", [0, -3, 2.5])
def test_a_bad_k_raises_before_anything_is_built(k):
    with pytest.raises(ValueError, match=r"^k: "):
        retrieve("anything", "dense", k=k)


@pytest.mark.parametrize("query", ["", "  \n", None])
def test_an_empty_query_raises_before_anything_is_built(query):
    with pytest.raises(ValueError, match=r"^query: "):
        retrieve(query, "hybrid")
