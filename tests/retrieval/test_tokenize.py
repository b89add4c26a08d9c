"""The BM25 tokenizer: the same tokens as bm25s.tokenize, stopwords before stemming, clear errors."""

from __future__ import annotations

import bm25s
import pytest
import Stemmer

from openclaw_lab.retrieval.tokenize import resolve_stopwords, tokenize, tokenize_many

from .conftest import TURNS

TEXTS = [f"{speaker}: {text}" for _, speaker, text in TURNS] + ["", "a the of", "Running RUNS runner's 2023-05-08"]


@pytest.mark.parametrize("stopwords", ["en", "en_plus", None])
@pytest.mark.parametrize("stemmer", ["english", None])
def test_tokens_equal_bm25s_tokenize(stopwords, stemmer):
    theirs = bm25s.tokenize(
        TEXTS,
        stopwords=stopwords,
        stemmer=Stemmer.Stemmer(stemmer) if stemmer else None,
        return_ids=False,
        show_progress=False,
    )
    assert tokenize_many(TEXTS, stopwords=stopwords, stemmer=stemmer) == theirs


def test_lower_cases_drops_stopwords_and_one_letter_words_then_stems():
    assert tokenize("I am Running to THE Parks") == ["am", "run", "park"]
    assert tokenize("I am Running to THE Parks", stemmer=None) == ["am", "running", "parks"]
    unfiltered = tokenize("I am Running to THE Parks", stopwords=None, stemmer=None)
    assert unfiltered == ["am", "running", "to", "the", "parks"]


def test_stopwords_come_out_before_stemming():
    # "this" is a stopword; its stem "thi" would not be
    assert tokenize("this", stopwords=["this"]) == []
    assert tokenize("This Dog", stopwords=["THIS"]) == ["dog"]


def test_repeats_are_kept_for_term_frequency():
    assert tokenize("dog dog cat dogs") == ["dog", "dog", "cat", "dog"]


def test_an_empty_or_all_stopword_text_has_no_tokens():
    assert tokenize("") == []
    assert tokenize("to the and of") == []


def test_named_stopword_lists():
    assert "the" in resolve_stopwords("en")
    assert "what" in resolve_stopwords("en_plus") and "what" not in resolve_stopwords("en")
    assert resolve_stopwords(None) == frozenset()


def test_bad_arguments_raise_naming_the_field():
    with pytest.raises(ValueError, match=r"^stopwords: unknown list 'klingon'; choose one of en, english, en_plus"):
        tokenize("hello", stopwords="klingon")
    with pytest.raises(ValueError, match=r"^stemmer: unknown language 'klingon'; choose one of .*english"):
        tokenize("hello", stemmer="klingon")
    with pytest.raises(ValueError, match=r"^texts\[1\]: 3 is not a string"):
        tokenize_many(["ok", 3])
    with pytest.raises(ValueError, match=r"^stopwords: 3 is not a string"):
        tokenize("hello", stopwords=["a", 3])
