"""How much of a history is not English: what decides whether an English-only embedding model can read it.

Words are counted by script: a run of Chinese or Japanese characters is cut into words by jieba (so a Chinese
word weighs what an English one does), any other run of letters is one word, and numbers count for neither
side. Latin-script words count as English when English function words ("the", "and", "you", NLTK's list) are
a real share of them, as they are in any English running text; otherwise (French, Spanish, or only the
product names inside Chinese text) they count as not English too.

>>> mix = LanguageMix.of(["我想买一台 MacBook Air，预算 8000 元", "你有什么推荐吗？"])
>>> mix.needs_multilingual, round(mix.not_english, 2)
(True, 1.0)
>>> LanguageMix.of(["I moved to Lyon last May and I love it there."]).needs_multilingual
False
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from bm25s.stopwords import STOPWORDS_EN_PLUS

from openclaw_lab.text import cjk_runs

__all__ = ["LanguageMix", "NOT_ENGLISH_SHARE", "ENGLISH_FUNCTION_SHARE"]

# A history with at least this share of words not in English gets a multilingual model: an English model
# reads ~90 % of it at best (MiniLM maps most Chinese characters to [UNK]).
NOT_ENGLISH_SHARE = 0.1
# English running text has 40-50 % function words; French or Spanish has a few percent (shared "a", "on").
ENGLISH_FUNCTION_SHARE = 0.15
ENGLISH_FUNCTION_WORDS = frozenset(STOPWORDS_EN_PLUS)
_WORD = re.compile(r"[^\W\d_]+")  # a run of letters (numbers and underscores left out)
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]+")  # Basic Latin letters, Latin-1 and Latin Extended-A/B
_JAPANESE_OR_CHINESE = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]")


@dataclass(frozen=True)
class LanguageMix:
    """Word counts of a set of texts by script (see the module's doc).

    >>> LanguageMix.of(["Je voudrais un café, s'il vous plaît"]).latin_is_english
    False
    """

    words: int = 0  # every word counted
    other_script: int = 0  # words in a script other than Latin (a Chinese word as jieba cuts it)
    latin: int = 0  # words in Latin script
    english_function: int = 0  # Latin words that are English function words

    @classmethod
    def of(cls, texts: Iterable[str]) -> LanguageMix:
        """The counts over ``texts`` (each a string)."""
        words = other = latin = function = 0
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise ValueError(f"texts[{i}]: {text!r} is not a string")
            for is_cjk, piece in cjk_runs(text):
                found = _cjk_words(piece) if is_cjk and _JAPANESE_OR_CHINESE.search(piece) else _WORD.findall(piece)
                for word in found:
                    words += 1
                    if _LATIN.fullmatch(word):
                        latin += 1
                        function += word.lower() in ENGLISH_FUNCTION_WORDS
                    else:
                        other += 1
        return cls(words, other, latin, function)

    @property
    def latin_is_english(self) -> bool:
        """Whether the Latin-script words read as English running text (enough function words among them)."""
        return self.latin > 0 and self.english_function / self.latin >= ENGLISH_FUNCTION_SHARE

    @property
    def not_english(self) -> float:
        """The share of words not in English (0 for no words)."""
        if not self.words:
            return 0.0
        return (self.other_script + (0 if self.latin_is_english else self.latin)) / self.words

    @property
    def needs_multilingual(self) -> bool:
        """Whether a real share of the words (``NOT_ENGLISH_SHARE``) is not English."""
        return self.not_english >= NOT_ENGLISH_SHARE

    def describe(self) -> str:
        """One phrase for a log line, e.g. ``93% of 2,104 words not in English``."""
        return f"{self.not_english:.0%} of {self.words:,} words not in English"


def _cjk_words(run: str) -> list[str]:
    return [word for word in _jieba().lcut(run) if word.strip()]


@lru_cache(maxsize=1)
def _jieba() -> Any:
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)  # its dictionary load is not worth a line on every run
    return jieba
