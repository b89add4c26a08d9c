"""SPLADE: the packaged SPLADE-tiny's vectors, their disk cache, and the retriever over them."""

from __future__ import annotations

import pickle
import sqlite3
from datetime import datetime

import numpy as np
import pytest

from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.bm25 import BM25Retriever
from openclaw_lab.retrieval.fusion import hybrid
from openclaw_lab.retrieval.splade import SpladeRetriever
from openclaw_lab.splade import MODEL_ID, SpladeEncoder

T0 = datetime(2023, 5, 8)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path))
    return tmp_path


def test_a_vector_weighs_the_texts_words_and_words_they_imply():
    encoder = SpladeEncoder(cache=False)
    vector = encoder.encode(["I adopted a puppy"]).toarray()[0]
    assert vector[encoder.word_id("puppy")] > 0
    assert vector[encoder.word_id("dog")] > 0  # expansion: BM25 has no such weight
    assert vector[encoder.word_id("hiking")] == 0
    assert (vector >= 0).all()


def test_a_word_past_the_first_window_is_kept():
    """A long session is read window by window, not cut at the model's length."""
    text = "We talked about the weather and the news. " * 60 + "Then I saw an elephant."
    elephant = SpladeEncoder(cache=False).word_id("elephant")
    windows = SpladeEncoder(cache=False, max_length=64)
    assert windows.encode([text])[0, elephant] > 0
    first_window = windows.parts[0].decode(windows.parts[0](text, truncation=True, max_length=64)["input_ids"][1:-1])
    assert windows.encode([first_window])[0, elephant] == 0


def test_vectors_are_cached_on_disk_and_read_back(cache_dir):
    texts = ["I adopted a puppy", "We went hiking", "I adopted a puppy"]
    fresh = SpladeEncoder(cache=False).encode(texts).toarray()
    first = SpladeEncoder().encode(texts).toarray()
    with sqlite3.connect(cache_dir / "embeddings.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM embeddings WHERE model = ?", [MODEL_ID]).fetchone()[0] == 2
    reader = SpladeEncoder()  # a new encoder, which must read the file and never run the model
    reader.encode_uncached = lambda new, progress=None: pytest.fail(f"encoded again: {new}")
    again = reader.encode(texts).toarray()
    np.testing.assert_array_equal(again, first)
    np.testing.assert_allclose(first, fresh, atol=1e-5)


@pytest.mark.parametrize(("progress", "threshold", "shown"), [(True, 512, True), (False, 0, False), (None, 512, False)])
def test_encoding_shows_a_bar_only_when_asked_or_long(capsys, progress, threshold, shown):
    SpladeEncoder(cache=False, progress_threshold=threshold).encode(["one text", "two texts"], progress=progress)
    assert ("splade" in capsys.readouterr().err) is shown


def test_a_copied_encoder_opens_its_own_cache(cache_dir):
    encoder = SpladeEncoder()
    encoder.encode(["one text"])
    copy = pickle.loads(pickle.dumps(encoder))  # as a worker process receives it
    assert copy._cache is None
    np.testing.assert_array_equal(copy.encode(["one text"]).toarray(), encoder.encode(["one text"]).toarray())


@pytest.mark.parametrize(("kwargs", "field"), [({"batch_size": 0}, "batch_size"), ({"max_length": 2}, "max_length"),
                                               ({"cache": "here"}, "cache"), ({"batch_size": True}, "batch_size"),
                                               ({"progress_threshold": -1}, "progress_threshold")])
def test_bad_settings_are_named(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field}"):
        SpladeEncoder(**kwargs)


def test_a_word_of_several_pieces_has_no_single_weight():
    with pytest.raises(ValueError, match="^word: 'giraffe'"):
        SpladeEncoder(cache=False).word_id("giraffe")


def test_no_texts_give_no_rows(cache_dir):
    for encoder in (SpladeEncoder(), SpladeEncoder(cache=False)):
        assert encoder.encode([]).shape == (0, encoder.vocab_size)


def test_a_text_that_is_not_a_string_is_refused_by_position():
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        SpladeEncoder(cache=False).encode(["fine", None])


def test_splade_finds_a_memory_that_shares_no_word_with_the_query(cache_dir):
    items = [MemoryItem.new(text, now=T0, id=str(i)) for i, text in
             enumerate(["I adopted a puppy last week", "We went hiking in the Alps", "The quarterly report is due"])]
    splade, bm25 = SpladeRetriever(), BM25Retriever()
    for retriever in (splade, bm25):
        retriever.index(items)
    assert bm25.search("new dog", 3) == []
    assert [hit.item.id for hit in splade.search("new dog", 1)] == ["0"]
    run = splade.search_many({"a": "new dog", "b": "mountain walk"}, 1)
    assert {qid: list(hits) for qid, hits in run.items()} == {"a": ["0"], "b": ["1"]}


def test_hybrid_takes_splade_as_its_lexical_side_and_checks_the_choice():
    assert isinstance(hybrid(lexical="splade").retrievers[1], SpladeRetriever)
    with pytest.raises(ValueError, match="^lexical"):
        hybrid(lexical="tfidf")
    with pytest.raises(ValueError, match="^bm25"):
        hybrid(lexical="splade", bm25={"k1": 1.2})
