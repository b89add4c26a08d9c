"""Dense retrieval: batch embedding, own embeddings kept, filters inside the store, any store handed in."""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from openclaw_lab.model import MemoryFilter, MemoryItem
from openclaw_lab.retrieval.dense import DenseRetriever
from openclaw_lab.retrieval.protocol import search_batch
from openclaw_lab.stores.exact import ExactStore

T = datetime(2023, 5, 8, tzinfo=timezone.utc)


class CountingEmbedder:
    """Wraps an embedder and records every encode call's texts."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []

    def encode(self, texts):
        self.calls.append(list(texts))
        return self.inner.encode(texts)


class RefusingEmbedder:
    def encode(self, texts):
        raise AssertionError(f"encode was called with {texts!r}")


def test_items_without_embeddings_are_encoded_in_one_call_and_own_embeddings_kept(embedder):
    counting = CountingEmbedder(embedder)
    own = np.zeros(384, dtype=np.float32)
    own[0] = 1.0
    items = [
        MemoryItem.new("I adopted a puppy named Rex", now=T, id="pup"),
        MemoryItem.new("The quarterly report is due on Friday", now=T, id="work"),
        MemoryItem.new("kept vector", now=T, id="own", embedding=own),
    ]
    dense = DenseRetriever(counting)
    dense.index(items)
    assert counting.calls == [["I adopted a puppy named Rex", "The quarterly report is due on Friday"]]
    np.testing.assert_array_equal(dense.vector_store.get(["own"])[0].embedding, own)
    hits = dense.search("my new dog", k=2)
    assert hits[0].item.id == "pup"
    cosine = float(embedder.encode_one("my new dog") @ embedder.encode_one(items[0].content))
    assert hits[0].score == pytest.approx(cosine, abs=1e-5)


def test_scores_are_cosine_similarities_best_first(embedder, chat_corpus):
    dense = DenseRetriever(embedder)
    dense.index(chat_corpus)
    query = embedder.encode_one("What is the name of Caroline's dog?")
    hits = dense.search("What is the name of Caroline's dog?", k=40)
    expected = sorted(((float(item.embedding @ query), item.id) for item in chat_corpus), key=lambda p: (-p[0], p[1]))
    assert [hit.item.id for hit in hits] == [doc for _, doc in expected]
    np.testing.assert_allclose([hit.score for hit in hits], [score for score, _ in expected], atol=1e-5)


def test_the_filter_is_applied_in_the_store_before_the_top_k(embedder, chat_corpus):
    dense = DenseRetriever(embedder)
    dense.index(chat_corpus)
    best = dense.search("puppy dog Rex", k=3)
    unwanted = MemoryFilter(tags_any=("work",))
    hits = dense.search("puppy dog Rex", k=3, filter=unwanted)
    assert len(hits) == 3 and all("work" in hit.item.tags for hit in hits)
    assert not {hit.item.id for hit in hits} & {hit.item.id for hit in best}


def test_search_many_encodes_all_queries_at_once_and_equals_search(embedder, chat_corpus):
    counting = CountingEmbedder(embedder)
    dense = DenseRetriever(counting)
    dense.index(chat_corpus)
    queries = {"q1": "Where is Melanie travelling?", "q2": "support group", "q3": "cake"}
    filters = {"q2": MemoryFilter(min_importance=3)}
    counting.calls.clear()
    run = search_batch(dense, queries, k=4, filters=filters)
    assert counting.calls == [list(queries.values())]
    for qid, text in queries.items():
        hits = dense.search(text, 4, filters.get(qid))
        assert list(run[qid]) == [hit.item.id for hit in hits]
        assert list(run[qid].values()) == pytest.approx([hit.score for hit in hits], abs=1e-6)


def test_an_empty_index_returns_nothing_without_loading_a_model():
    dense = DenseRetriever(RefusingEmbedder())
    assert dense.search("anything", k=3) == []
    assert dense.search_many({"a": "anything", "b": "else"}, k=3) == {"a": {}, "b": {}}


def test_the_constructor_only_stores_its_arguments():
    dense = DenseRetriever()
    assert dense.embedder is None and dense.store is None  # the model and the store come on first use
    with pytest.raises(ValueError, match=r"^query: "):
        dense.search_many({"a": " "}, k=3)
    with pytest.raises(ValueError, match=r"^items\[0\]: 'text' is not a MemoryItem"):
        dense.index(["text"])


def test_searches_through_a_handed_in_store_such_as_chroma(embedder, chat_corpus, tmp_path):
    chroma = pytest.importorskip("openclaw_lab.stores.chroma")
    through_chroma = DenseRetriever(embedder, store=chroma.ChromaStore(tmp_path / "chroma"))
    exact = DenseRetriever(embedder, store=ExactStore())
    for dense in (through_chroma, exact):
        dense.index(chat_corpus)
    memory_filter = MemoryFilter(where={"speaker": "Melanie"})
    for query in ("Where is Melanie travelling in June?", "running by the river"):
        theirs, ours = through_chroma.search(query, 5, memory_filter), exact.search(query, 5, memory_filter)
        assert [hit.item.id for hit in theirs] == [hit.item.id for hit in ours]
        np.testing.assert_allclose([h.score for h in theirs], [h.score for h in ours], atol=1e-4)


def test_an_embedder_returning_the_wrong_shape_is_named():
    class Flat:
        def encode(self, texts):
            return np.ones(3)

    with pytest.raises(ValueError, match=r"^embedder: returned shape \(3,\) for 1 texts"):
        DenseRetriever(Flat()).index([MemoryItem.new("x", now=T)])
