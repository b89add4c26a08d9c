"""Script-aware text helpers: where Chinese, Japanese and Korean need other rules than space-separated words;
and SQuAD's answer normalisation, which the QA scores and the answer-in-context check share.

>>> has_cjk("我的妹妹住在杭州"), has_cjk("my sister")
(True, False)
>>> estimate_tokens("我的妹妹住在杭州"), estimate_tokens("my sister lives in Hangzhou")
(8, 7)
"""

from __future__ import annotations

import re
import string

__all__ = [
    "CJK", "has_cjk", "cjk_runs", "estimate_tokens", "split_words", "normalize_answer", "sentences", "says_change",
]  # fmt: skip

# Han (with extension A and compatibility ideographs), kana, and Hangul syllables.
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+")

HAN_KANA = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]")  # scripts written without spaces
# CJK and full-width punctuation ("，", "。", "！", "（"): it separates words as a space does
CJK_PUNCTUATION = re.compile(r"[\u3000-\u303f\uff01-\uff0f\uff1a-\uff20\uff3b-\uff40\uff5b-\uff65]")

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def has_cjk(text: str) -> bool:
    return CJK.search(text) is not None


def cjk_runs(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into (is_cjk, piece) runs, in order.

    >>> cjk_runs("我在Lyon工作")
    [(True, '我在'), (False, 'Lyon'), (True, '工作')]
    """
    runs, start = [], 0
    for match in CJK.finditer(text):
        if match.start() > start:
            runs.append((False, text[start : match.start()]))
        runs.append((True, match.group()))
        start = match.end()
    if start < len(text):
        runs.append((False, text[start:]))
    return runs


def estimate_tokens(text: str) -> int:
    """A rough token count when no tokenizer is at hand: a CJK character is about one token (subword
    tokenizers split Chinese per character or finer), other text about four characters a token."""
    cjk = sum(len(run) for run in CJK.findall(text))
    return max(1, cjk + (len(text) - cjk + 3) // 4)


def split_words(text: str) -> list[str]:
    """``text.split()``, with each Chinese or Japanese character a word of its own: those scripts put no spaces
    between words, so a whole Chinese sentence would otherwise be one word (character-level is also the usual unit
    of Chinese answer F1); their punctuation separates words. Korean keeps its spaces; text without CJK splits
    exactly as ``str.split``.

    >>> split_words("我买了 MacBook Air，8999元")
    ['我', '买', '了', 'MacBook', 'Air', '8999', '元']
    """
    if not has_cjk(text):
        return text.split()
    words: list[str] = []
    for is_cjk, piece in cjk_runs(text):
        words += list(piece) if is_cjk and HAN_KANA.search(piece) else CJK_PUNCTUATION.sub(" ", piece).split()
    return words


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, punctuation removed, articles removed, whitespace collapsed.

    >>> normalize_answer("The Eiffel Tower, in Paris!")
    'eiffel tower in paris'
    """
    if not isinstance(text, str):
        raise ValueError(f"text: {text!r} is not a string")
    return " ".join(_ARTICLES.sub(" ", text.lower().translate(_PUNCTUATION)).split())


# A sentence ends at . ! ? (then a space) or at Chinese and Japanese 。！？ (no space), and at every line break.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")
# Words that say a value changed ("now 250 ms", "the new deadline", "moved to Lyon", "现在", "改成"): general
# words of change, not any dataset's templates.
_CHANGE = re.compile(
    r"\b(now|new|newly|recently|just|moved|relocated|changed|switched|quit|sold|replaced|left|no longer|any ?more|"
    r"anymore|actually|instead|these days|started|stopped|gave up|got rid|updated?|increased|decreased|reduced|"
    r"improved|extended|reached|rescheduled|revised|adjusted|raised|lowered|shifted|postponed|promoted|upgraded|"
    r"grown|dropped|went (?:up|down))\b|现在|改成|改为|换了|搬到|不再|最近|新的|已经",
    re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    """``text``'s sentences and lines, stripped, those of fewer than four characters left out (``[text]`` when
    none is left).

    >>> sentences("Budget: $2,000. It is now $1,500!\\nok\\n我搬到杭州了。现在很好")
    ['Budget: $2,000.', 'It is now $1,500!', '我搬到杭州了。', '现在很好']
    """
    found = [piece.strip() for piece in _SENTENCE_END.split(text)]
    return [piece for piece in found if len(piece) >= 4 or (piece and has_cjk(piece))] or [text]


def says_change(text: str) -> bool:
    """Whether ``text`` has a word that says a value changed.

    >>> [says_change(text) for text in ("The deadline moved to April 5", "The deadline is April 1", "现在住在杭州")]
    [True, False, True]
    """
    return _CHANGE.search(text) is not None
