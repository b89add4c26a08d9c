"""What to remember, and how important it is: pluggable policies and scorers, and their metrics.

A scorer maps a turn to a score in [0, 1] (higher is more worth remembering); a policy turns a turn
into a ``RememberDecision`` (remember or not, with an importance). The seed's rules are the default;
``RuleBasedScorer`` looks for facts worth keeping; ``LearnedRememberPolicy`` (remember_learned.py)
is trained on labelled turns. ``remember_metrics`` scores decisions against evidence turns.

>>> policy = ScorerPolicy(RuleBasedScorer())
>>> decision = policy.decide("Remember this: my sister Ana lives in Porto")
>>> decision.remember, int(decision.importance), decision.reasons[0]
(True, 5, 'explicit')
>>> policy.decide("ok, cool").remember
False
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from openclaw_lab.text import has_cjk
from openclaw_lab.model import Importance

__all__ = [
    "RememberDecision",
    "ImportanceScorer",
    "RememberPolicy",
    "importance_from_score",
    "SeedRememberPolicy",
    "RuleBasedScorer",
    "ScorerPolicy",
    "remember_metrics",
    "rule_policy",
    "SEED_KEYWORDS",
]


@dataclass(frozen=True)
class RememberDecision:
    """Whether to remember a turn, its importance, its score in [0, 1] (higher is more) and why."""

    remember: bool
    importance: Importance
    score: float
    reasons: tuple[str, ...] = ()


@runtime_checkable
class ImportanceScorer(Protocol):
    def score(self, message: str, reply: str = "") -> float:
        """How worth remembering the turn is, in [0, 1]; higher is more."""


@runtime_checkable
class ExplainingScorer(Protocol):
    def explain(self, message: str) -> tuple[float, tuple[str, ...]]:
        """The score of ``message`` and the reasons behind it."""


@runtime_checkable
class RememberPolicy(Protocol):
    def decide(self, message: str, reply: str = "") -> RememberDecision:
        """Remember the turn or not, and with which importance."""


def importance_from_score(score: float) -> Importance:
    """Five equal bands of [0, 1]: [0, 0.2) MINIMAL ... [0.8, 1] CRITICAL.

    >>> importance_from_score(0.0).name, importance_from_score(0.55).name, importance_from_score(1.0).name
    ('MINIMAL', 'MEDIUM', 'CRITICAL')
    """
    if not isinstance(score, (int, float)) or not 0.0 <= score <= 1.0 or math.isnan(score):
        raise ValueError(f"score: {score!r} is not a number in [0, 1]")
    return Importance(1 + min(4, int(score * 5)))


# The seed's signal words: a reply that mentions one of these looks worth keeping.
SEED_KEYWORDS = (
    "important", "remember", "don't forget", "do not forget", "never", "always", "must", "deadline",
    "urgent", "appointment", "birthday", "anniversary", "allergic", "password", "address", "phone",
    # the design we implement is written in Chinese: its importance rule keys on 非常重要 ("very important")
    "非常重要", "重要", "记住", "别忘了", "不要忘记", "生日", "过敏", "密码", "地址", "电话", "截止",
)  # fmt: skip


def _mentions(text: str, word: str) -> bool:
    """``word`` as a whole word of ``text``; CJK has no spaces between words, so there it is a substring."""
    return word in text if has_cjk(word) else re.search(rf"\b{re.escape(word)}\b", text) is not None


class SeedRememberPolicy:
    """The seed's rules: a keyword in the interaction or a long reply raises importance from MEDIUM.

    Importance: MEDIUM; HIGH with a keyword (in message or reply) or a reply of at least
    ``long_reply_chars`` characters; CRITICAL with both. LOW for a short exchange (message and reply
    under ``short_chars`` together) without a keyword. Remembered when HIGH or more.
    """

    def __init__(
        self, keywords: Iterable[str] = SEED_KEYWORDS, *, long_reply_chars: int = 200, short_chars: int = 20
    ) -> None:
        self.keywords = tuple(word.lower() for word in keywords)
        self.long_reply_chars, self.short_chars = long_reply_chars, short_chars

    def __repr__(self) -> str:
        return f"SeedRememberPolicy({len(self.keywords)} keywords, long_reply_chars={self.long_reply_chars})"

    def decide(self, message: str, reply: str = "") -> RememberDecision:
        text = f"{message} {reply}".lower()
        keywords = tuple(f"keyword:{word}" for word in self.keywords if _mentions(text, word))
        long_reply = len(reply) >= self.long_reply_chars
        reasons = keywords + (("long_reply",) if long_reply else ())
        level = Importance.MEDIUM + bool(keywords) + long_reply
        if not reasons and len(message) + len(reply) < self.short_chars:
            level = Importance.LOW
        importance = Importance(level)
        return RememberDecision(importance >= Importance.HIGH, importance, (importance - 1) / 4, reasons)


_EXPLICIT = re.compile(
    r"\b(remember (this|that)|don'?t forget|do not forget|note that|make a note|keep in mind|for the record)\b", re.I
)
_FIRST_PERSON = re.compile(
    r"\b(i am|i'm|i was|i have|i've|i had|i work|i live|i moved|i got|i started|i went|i just|my|mine)\b", re.I
)
_PREFERENCE = re.compile(
    r"\b(i|we) (really |truly |absolutely )?(like|love|hate|prefer|enjoy|adore|dislike|can'?t stand)\b"
    r"|\b(my|our) favou?rite\b",
    re.I,
)
_NUMBER = re.compile(r"\b\d+([.,:/]\d+)*\b")
_DATE = re.compile(
    r"\b(january|february|march|april|may|june|july|august|september|october|november|december|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|today|tonight|tomorrow|"
    r"(last|next|this) (week|weekend|month|year|summer|winter|spring|fall|autumn))\b",
    re.I,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*")
_NOT_ENTITIES = frozenset({"I", "I'm", "I've", "I'd", "I'll", "OK", "Ok"})


def named_entities(text: str) -> list[str]:
    """Capitalised words that do not start a sentence (a cheap stand-in for named entities).

    >>> named_entities("Yesterday I met Ana in Porto. She loved it.")
    ['Ana', 'Porto']
    """
    found = []
    for sentence in _SENTENCE.split(text):
        words = _TOKEN.findall(sentence)
        found += [w for w in words[1:] if w[0].isupper() and w not in _NOT_ENTITIES]
    return list(dict.fromkeys(found))


class RuleBasedScorer:
    """Scores the user's message by cues of a fact worth keeping; the reply is not scored.

    An explicit "remember this" scores 1. Otherwise the score sums ``weights`` per cue found, capped
    at 1: named entities (each, up to three), numbers, dates, first-person facts, preferences.
    """

    WEIGHTS = {"entity": 0.15, "number": 0.15, "date": 0.2, "first_person": 0.2, "preference": 0.3}

    def __init__(self, weights: Mapping[str, float] | None = None) -> None:
        unknown = set(weights or {}) - set(self.WEIGHTS)
        if unknown:
            raise ValueError(f"weights: unknown cues {sorted(unknown)}; choose from {', '.join(self.WEIGHTS)}")
        self.weights = {**self.WEIGHTS, **(weights or {})}

    def __repr__(self) -> str:
        return f"RuleBasedScorer(weights={self.weights})"

    def features(self, message: str) -> dict[str, int]:
        """How often each cue occurs in ``message`` (``entity`` counts distinct entities)."""
        return {
            "explicit": len(_EXPLICIT.findall(message)),
            "entity": len(named_entities(message)),
            "number": len(_NUMBER.findall(message)),
            "date": len(_DATE.findall(message)),
            "first_person": len(_FIRST_PERSON.findall(message)),
            "preference": len(_PREFERENCE.findall(message)),
        }

    def explain(self, message: str) -> tuple[float, tuple[str, ...]]:
        """The score in [0, 1] (higher is more worth remembering) and the cues that gave it."""
        found = self.features(message)
        if found["explicit"]:
            return 1.0, ("explicit",)
        cues = tuple(name for name in self.weights if found[name])
        total = sum(self.weights[name] * (min(3, found[name]) if name == "entity" else 1) for name in cues)
        return min(1.0, round(total, 6)), cues

    def score(self, message: str, reply: str = "") -> float:
        return self.explain(message)[0]


class ScorerPolicy:
    """Remember a turn when its score reaches ``threshold``; importance from the score's band."""

    def __init__(self, scorer: ImportanceScorer, threshold: float = 0.4) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold: {threshold!r} is not in [0, 1]")
        self.scorer, self.threshold = scorer, threshold

    def __repr__(self) -> str:
        return f"ScorerPolicy({self.scorer!r}, threshold={self.threshold})"

    def decide(self, message: str, reply: str = "") -> RememberDecision:
        if isinstance(self.scorer, ExplainingScorer):
            score, reasons = self.scorer.explain(message)
        else:
            score, reasons = self.scorer.score(message, reply), ()
        return RememberDecision(score >= self.threshold, importance_from_score(score), score, reasons)


def rule_policy(threshold: float = 0.4) -> ScorerPolicy:
    """``ScorerPolicy(RuleBasedScorer(), threshold)``: the registry's ``rules`` remember policy."""
    return ScorerPolicy(RuleBasedScorer(), threshold)


def remember_metrics(decisions: Mapping[str, bool], evidence_ids: Iterable[str]) -> dict[str, float]:
    """Precision and recall of the remembered turns against the evidence turns (higher is better).

    ``decisions`` maps every decided turn id to whether it was remembered. Recall counts the evidence
    among decided turns; evidence never decided is reported as ``evidence_not_decided``. A metric
    whose denominator is zero is 0.0.

    >>> remember_metrics({"D1:1": True, "D1:2": True, "D1:3": False}, ["D1:1", "D1:3", "D9:9"])["precision"]
    0.5
    """
    evidence = set(evidence_ids)
    remembered = {turn_id for turn_id, keep in decisions.items() if keep}
    decided_evidence = evidence & set(decisions)
    hits = len(remembered & evidence)
    precision = hits / len(remembered) if remembered else 0.0
    recall = hits / len(decided_evidence) if decided_evidence else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "remembered": len(remembered),
        "decided": len(decisions),
        "evidence": len(decided_evidence),
        "true_positives": hits,
        "remember_rate": len(remembered) / len(decisions) if decisions else 0.0,
        "evidence_not_decided": len(evidence - set(decisions)),
    }
