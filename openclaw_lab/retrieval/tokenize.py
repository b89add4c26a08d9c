"""The BM25 tokenizer: lower-case words of two or more characters, stopwords out, optional stemming.

It splits like bm25s (scikit-learn's ``\\b\\w\\w+\\b``), drops stopwords before stemming, and stems
with PyStemmer's Snowball stemmers, so its tokens are exactly those of ``bm25s.tokenize`` with the
same stopwords and stemmer.

>>> tokenize("The cats were running to the parks")
['cat', 'were', 'run', 'park']
>>> tokenize("The cats were running", stemmer=None, stopwords=None)
['the', 'cats', 'were', 'running']
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from functools import lru_cache
from typing import Any

from bm25s.stopwords import STOPWORDS_EN, STOPWORDS_EN_PLUS

__all__ = ["tokenize", "tokenize_many", "resolve_stopwords", "STOPWORD_LISTS"]

TOKEN_PATTERN = re.compile(r"(?u)\b\w\w+\b")

# "en" is Lucene's 33-word English list (bm25s's default); "en_plus" is NLTK's longer list.
STOPWORD_LISTS: dict[str, frozenset[str]] = {
    "en": frozenset(STOPWORDS_EN),
    "english": frozenset(STOPWORDS_EN),
    "en_plus": frozenset(STOPWORDS_EN_PLUS),
}

Stopwords = str | Collection[str] | None


def resolve_stopwords(stopwords: Stopwords) -> frozenset[str]:
    """A stopword set from a list name (``en``, ``english``, ``en_plus``), a collection of words, or None.

    >>> sorted(resolve_stopwords(["The", "a"]))
    ['a', 'the']
    """
    if stopwords is None or stopwords is False:
        return frozenset()
    if isinstance(stopwords, str):
        if stopwords not in STOPWORD_LISTS:
            raise ValueError(f"stopwords: unknown list {stopwords!r}; choose one of {', '.join(STOPWORD_LISTS)}, None")
        return STOPWORD_LISTS[stopwords]
    words = list(stopwords)
    for word in words:
        if not isinstance(word, str):
            raise ValueError(f"stopwords: {word!r} is not a string")
    return frozenset(word.lower() for word in words)


@lru_cache(maxsize=8)
def _stemmer(language: str) -> Any:
    import Stemmer  # PyStemmer

    if language not in Stemmer.algorithms():
        choices = ", ".join(sorted(Stemmer.algorithms()))
        raise ValueError(f"stemmer: unknown language {language!r}; choose one of {choices}, or None")
    return Stemmer.Stemmer(language)


def tokenize(text: str, *, stopwords: Stopwords = "en", stemmer: str | None = "english") -> list[str]:
    """Tokens of one text, in order (repeats kept: BM25 counts them).

    >>> tokenize("Melanie painted a sunset; Melanie loves painting!")
    ['melani', 'paint', 'sunset', 'melani', 'love', 'paint']
    """
    return tokenize_many([text], stopwords=stopwords, stemmer=stemmer)[0]


def tokenize_many(
    texts: Iterable[str], *, stopwords: Stopwords = "en", stemmer: str | None = "english"
) -> list[list[str]]:
    """Tokens of many texts; each distinct word is stemmed once (the costly step).

    >>> tokenize_many(["Dogs bark", "a dog barked"])
    [['dog', 'bark'], ['dog', 'bark']]
    """
    stop = resolve_stopwords(stopwords)
    words: list[list[str]] = []
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"texts[{i}]: {text!r} is not a string")
        words.append([word for word in TOKEN_PATTERN.findall(text.lower()) if word not in stop])
    if stemmer is None:
        return words
    return _stem(words, _stemmer(stemmer))


def _stem(words: Sequence[list[str]], stemmer: Any) -> list[list[str]]:
    vocabulary = list({word: None for doc in words for word in doc})
    stem_of = dict(zip(vocabulary, stemmer.stemWords(vocabulary)))
    return [[stem_of[word] for word in doc] for doc in words]
