"""BM25 on bm25s: hand-computed scores, bm25s's own scores, rank_bm25's order, filters before the top k."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import bm25s
import numpy as np
import pytest
import Stemmer
from rank_bm25 import BM25Okapi

from openclaw_lab.model import MemoryFilter, MemoryItem
from openclaw_lab.retrieval.bm25 import BM25_METHODS, BM25Retriever
from openclaw_lab.retrieval.tokenize import tokenize_many

from .conftest import TURNS

T = datetime(2023, 5, 8, tzinfo=timezone.utc)
TEXTS = [text for _, _, text in TURNS]
QUERIES = ["puppy Rex chewed shoes", "Lisbon trip by the river", "bake bread and a cake", "running every morning"]


def items_of(texts, **fields):
    return [MemoryItem.new(text, now=T, id=f"d{i}", **fields) for i, text in enumerate(texts)]


def indexed(texts, **params):
    retriever = BM25Retriever(**params)
    retriever.index(items_of(texts))
    return retriever


def test_lucene_scores_worked_by_hand():
    # N = 3 documents of 3, 2 and 4 tokens: average length 3; k1 = 1.5, b = 0.75
    bm25 = indexed(["apple banana apple", "banana cherry", "cherry date elderberry fig"], stemmer=None)
    apple = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5)) * 2 / (2 + 1.5 * (0.25 + 0.75 * 3 / 3))
    np.testing.assert_allclose(bm25.scores("apple"), [apple, 0.0, 0.0], rtol=1e-6)
    idf_banana = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    expected = [idf_banana / (1 + 1.5), idf_banana / (1 + 1.5 * (0.25 + 0.75 * 2 / 3)), 0.0]
    np.testing.assert_allclose(bm25.scores("banana"), expected, rtol=1e-6)
    hits = bm25.search("banana", k=5)
    assert [hit.item.id for hit in hits] == ["d1", "d0"]
    assert [hit.score for hit in hits] == pytest.approx([expected[1], expected[0]], rel=1e-6)


def test_idf_and_average_length_come_from_the_whole_corpus():
    # the seed had no IDF and used each document's own length as the average: adding an unrelated,
    # long document must change the score of "apple" in d0 through both N and the average length
    bm25 = indexed(["apple banana apple", "banana cherry", "cherry date elderberry fig"], stemmer=None)
    bm25.index([MemoryItem.new("grape grape grape grape grape grape", now=T, id="d3")])
    idf = math.log(1 + (4 - 1 + 0.5) / (1 + 0.5))
    tfc = 2 / (2 + 1.5 * (0.25 + 0.75 * 3 / (15 / 4)))
    assert bm25.search("apple", k=1)[0].score == pytest.approx(idf * tfc, rel=1e-6)


@pytest.mark.parametrize("method", BM25_METHODS)
@pytest.mark.parametrize(("k1", "b"), [(1.5, 0.75), (1.2, 0.3), (0.9, 1.0)])
def test_scores_equal_bm25s_own_scores(method, k1, b):
    stemmer = Stemmer.Stemmer("english")
    reference = bm25s.BM25(k1=k1, b=b, method=method)
    reference.index(bm25s.tokenize(TEXTS, stemmer=stemmer, return_ids=False, show_progress=False), show_progress=False)
    ours = indexed(TEXTS, k1=k1, b=b, method=method)
    assert ours.ids == [f"d{i}" for i in range(len(TEXTS))]
    for query in QUERIES:
        tokens = bm25s.tokenize([query], stemmer=stemmer, return_ids=False, show_progress=False)[0]
        np.testing.assert_allclose(ours.scores(query), reference.get_scores(tokens), rtol=1e-6)


def test_top_10_order_and_scores_equal_rank_bm25_where_every_idf_is_positive():
    tokens = tokenize_many(TEXTS, stopwords="en_plus")
    doc_freq = {word: sum(word in doc for doc in tokens) for doc in tokens for word in doc}
    assert max(doc_freq.values()) < len(TEXTS) / 2  # the precondition: every IDF is positive
    okapi = BM25Okapi(tokens, k1=1.5, b=0.75)
    # BM25Okapi is bm25s's ATIRE term frequency with Robertson's IDF
    ours = indexed(TEXTS, method="atire", idf_method="robertson", stopwords="en_plus")
    for query in QUERIES + ["work start weekend new", "Luna the cat at the vet"]:
        theirs = okapi.get_scores(tokenize_many([query], stopwords="en_plus")[0])
        np.testing.assert_allclose(ours.scores(query), theirs, rtol=1e-5)
        ranked = sorted((-score, f"d{i}") for i, score in enumerate(theirs) if score > 0)[:10]
        assert [hit.item.id for hit in ours.search(query, k=10)] == [doc for _, doc in ranked]


def test_only_items_with_a_query_term_are_hits():
    bm25 = indexed(["the puppy sleeps", "a red car", "my puppy barks", "blue sky"])
    assert [hit.item.id for hit in bm25.search("puppy", k=10)] == ["d0", "d2"]
    assert bm25.search("zebra", k=10) == []
    assert bm25.search("the and of", k=10) == []  # nothing left after stopwords


@pytest.mark.parametrize("method", ["bm25l", "bm25+"])
def test_variants_with_a_score_floor_still_return_only_items_with_a_query_term(method):
    bm25 = indexed(["the puppy sleeps", "a red car", "my puppy barks", "blue sky"], method=method)
    assert bm25.scores("puppy")[1] > 0  # the floor
    assert sorted(hit.item.id for hit in bm25.search("puppy", k=10)) == ["d0", "d2"]


def test_a_filter_is_applied_before_the_top_k():
    texts = ["dog dog dog", "dog dog", "dog and cat", "a dog in the park", "dog"]
    items = [item.replace(importance=5 if i >= 3 else 1) for i, item in enumerate(items_of(texts))]
    bm25 = BM25Retriever()
    bm25.index(items)
    assert [hit.item.id for hit in bm25.search("dog", k=2)] == ["d0", "d1"]
    # the best two are unimportant: a filter after the cut would return nothing
    hits = bm25.search("dog", k=2, filter=MemoryFilter(min_importance=4))
    assert sorted(hit.item.id for hit in hits) == ["d3", "d4"]


def test_time_and_metadata_filters():
    items = [
        MemoryItem.new("dog walk", now=T - timedelta(days=i), id=f"d{i}", metadata={"speaker": "A" if i % 2 else "B"})
        for i in range(6)
    ]
    bm25 = BM25Retriever()
    bm25.index(items)
    window = MemoryFilter(since=T - timedelta(days=3), until=T - timedelta(days=1))
    assert sorted(hit.item.id for hit in bm25.search("dog", k=10, filter=window)) == ["d2", "d3"]
    speaker = MemoryFilter(where={"speaker": "A"})
    assert sorted(hit.item.id for hit in bm25.search("dog", k=10, filter=speaker)) == ["d1", "d3", "d5"]


def test_ties_break_by_id_even_at_the_cut():
    items = [item.replace(tags=("odd",) if i % 2 else ("even",)) for i, item in enumerate(items_of(["cat"] * 12))]
    bm25 = BM25Retriever()
    bm25.index(items)
    assert [hit.item.id for hit in bm25.search("cat", k=3)] == ["d0", "d1", "d10"]  # string order, as sorted_hits
    odd = MemoryFilter(tags_any=("odd",))  # checked item by item, walking the ranking
    assert [hit.item.id for hit in bm25.search("cat", k=3, filter=odd)] == ["d1", "d11", "d3"]
    assert [hit.item.id for hit in bm25.search("cat", k=2, filter=MemoryFilter(min_importance=3))] == ["d0", "d1"]


def test_incremental_adds_rebuild_lazily_and_replace_by_id():
    bm25 = indexed(["red apple", "green pear"])
    assert [hit.item.id for hit in bm25.search("apple", k=5)] == ["d0"]
    bm25.index([MemoryItem.new("apple pie", now=T, id="d9"), MemoryItem.new("plum jam", now=T, id="d0")])
    assert bm25.count() == 3
    hits = bm25.search("apple", k=5)
    assert [hit.item.id for hit in hits] == ["d9"]
    assert bm25.search("plum", k=5)[0].item.content == "plum jam"


def test_a_corpus_of_stopwords_only_finds_nothing():
    assert indexed(["the and", "of a"]).search("the", k=3) == []


def test_bad_settings_raise_when_the_retriever_is_made():
    with pytest.raises(ValueError, match=r"^method: unknown BM25 variant 'okapi'; choose one of lucene, robertson"):
        BM25Retriever(method="okapi")
    with pytest.raises(ValueError, match=r"^b: 2 must be between 0 and 1"):
        BM25Retriever(b=2)
    with pytest.raises(ValueError, match=r"^k1: -1 must be a number >= 0"):
        BM25Retriever(k1=-1)
    with pytest.raises(ValueError, match=r"^stopwords: unknown list 'xx'"):
        BM25Retriever(stopwords="xx")
    with pytest.raises(ValueError, match=r"^cjk: 'words' is not one of jieba, bigram"):
        BM25Retriever(cjk="words")
    with pytest.raises(ValueError, match=r"^items\[0\]: 'text' is not a MemoryItem"):
        BM25Retriever().index(["text"])
