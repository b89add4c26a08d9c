"""A seeded synthetic benchmark: user-assistant conversations with planted facts, updates and chatter.

Facts are about people ("My sister Ana lives in Porto") or the user ("I started learning the cello
today"); some change later ("Ana moved to Lyon last week"). Questions come a day after the last session,
with exact evidence: the latest statement of each fact. Categories: ``single-fact`` (never updated),
``updated-fact`` (evidence is the latest update), ``temporal`` (the date of an event, answered as
"8 May 2023"), ``multi-fact`` (two facts in one question), ``retracted-fact`` (the fact stopped being
true: "Ana sold the Volvo and has no car any more"; the answer is "no car any more"). Generation is
linear in ``n_turns``.

Ground truth for consolidation (``Benchmark.labels``): every statement carries its fact key (subject and
attribute), a version and the statement it supersedes; questions about an updated fact name the
superseded statements; with ``duplicate_rate`` some user turns restate an unchanged fact in other words
in a later session, labelled as a duplicate of the statement they repeat; with ``retraction_rate`` some
user turns retract a fact (a new version, labelled ``retracted``, superseding the last); with ``plan_rate``
some state a plan for a date 2 to 30 days ahead, labelled with when it expires (the end of that day).

>>> bench = generate(200, seed=1)
>>> sum(len(s.turns) for c in bench.conversations for s in c.sessions)
200
>>> generate(200, seed=1).questions == bench.questions
True
"""

from __future__ import annotations

import hashlib
import random
import string
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from openclaw_lab.datasets import synthetic_vocab as vocab
from openclaw_lab.datasets.gcpause import gc_paused
from openclaw_lab.datasets.types import Benchmark, Conversation, FactLabels, LoadReport, Question, Session, Statement, Turn
from openclaw_lab.model import as_utc

__all__ = ["CATEGORIES", "QUESTION_DELAY", "generate"]

CATEGORIES = ("single-fact", "updated-fact", "temporal", "multi-fact", "retracted-fact")
QUESTION_DELAY = timedelta(days=1)
MIN_SESSION_GAP_MINUTES = 120  # sessions never overlap under any per-turn clock step below ~4 minutes
CONFUSER_RATE = 0.1  # share of chatter that names a known person next to one of their fact values
VERSION = 3  # bump when the same parameters would generate different data (2: fact labels, duplicates;
# 3: no restatement of a retracted fact; fact keys name their conversation)
_TURNS_VERSION = 1  # seeds the text: with the duplicate, retraction and plan rates 0, version 2 writes version 1's turns
_MONTHS = "January February March April May June July August September October November December".split()
_ASSISTANT = [f"{a} {b}" for a in vocab.ASSISTANT_OPENERS for b in vocab.ASSISTANT_FOLLOWUPS]
_SLOTS = [
    tuple(name for _, name, _, _ in string.Formatter().parse(template) if name) for template in vocab.DISTRACTORS
]


def generate(
    n_turns: int = 1000,
    *,
    seed: int = 0,
    n_conversations: int | None = None,
    fact_rate: float = 0.08,
    update_rate: float = 0.03,
    duplicate_rate: float = 0.0,
    retraction_rate: float = 0.0,
    plan_rate: float = 0.0,
    session_turns: tuple[int, int] | list[int] = (10, 30),
    span_days: float = 180.0,
    start: datetime | str = "2023-01-02T09:00:00+00:00",
) -> Benchmark:
    """Generate ``n_turns`` turns in ``n_conversations`` conversations (default: one per 1,000 turns).

    ``fact_rate``, ``update_rate``, ``duplicate_rate``, ``retraction_rate`` and ``plan_rate`` are the shares
    of user turns that state a new fact, update an earlier one, restate one unchanged in other words, retract one, or state
    a plan; a session has between ``session_turns`` turns; sessions spread over ``span_days`` (more
    when they would come closer than two hours apart). The Benchmark's sha256 fingerprints the generator
    version and the parameters (there is no file). Same arguments, same benchmark.

    >>> generate(100, seed=3).questions[0].category in CATEGORIES
    True
    """
    extra = {"duplicate_rate": duplicate_rate, "retraction_rate": retraction_rate, "plan_rate": plan_rate}
    for name, rate in extra.items():
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 1:
            raise ValueError(f"{name}: {rate!r} must be between 0 and 1")
    lo, hi = _check(n_turns, n_conversations, fact_rate, update_rate + sum(extra.values()), session_turns, span_days)
    count = n_conversations if n_conversations is not None else max(1, round(n_turns / 1000))
    begin = as_utc(_parse_start(start), "start")
    params = dict(
        fact_rate=fact_rate, update_rate=update_rate, session_turns=(lo, hi), span_days=span_days, start=begin
    )
    for name, rate in extra.items():
        if rate:  # only named when used, so that version 1's fingerprints of the same turns stay readable
            params[name] = rate
    conversations, questions, labels = [], [], FactLabels()
    with gc_paused():
        for index in range(count):
            size = n_turns // count + (index < n_turns % count)
            rng = random.Random(f"synthetic:{_TURNS_VERSION}:{seed}:{index}")  # str seeds are hashed with sha512
            conversation, asked = _Writer(f"syn-{index}", size, rng, labels, **params).write()
            conversations.append(conversation)
            questions.extend(asked)
    source = f"synthetic v{VERSION}: n_turns={n_turns}, seed={seed}, n_conversations={count}, " + ", ".join(
        f"{key}={value}" for key, value in params.items()
    )
    report = LoadReport(notes=[f"{len(questions)} questions over {n_turns} turns in {count} conversations"])
    fingerprint = hashlib.sha256(source.encode()).hexdigest()
    return Benchmark("synthetic", conversations, questions, sha256=fingerprint, source=source, report=report,
                     labels=labels)  # fmt: skip


def _parse_start(start: datetime | str) -> datetime:
    if not isinstance(start, str):
        return start
    try:
        return datetime.fromisoformat(start)
    except ValueError as error:
        raise ValueError(f"start: {start!r} is not an ISO date such as '2023-01-02T09:00:00+00:00'") from error


def _check(n_turns, n_conversations, fact_rate, update_rate, session_turns, span_days) -> tuple[int, int]:
    if isinstance(n_turns, bool) or not isinstance(n_turns, int) or n_turns < 1:
        raise ValueError(f"n_turns: {n_turns!r} must be a positive int")
    if n_conversations is not None and (
        isinstance(n_conversations, bool) or not isinstance(n_conversations, int) or not 1 <= n_conversations <= n_turns
    ):
        raise ValueError(f"n_conversations: {n_conversations!r} must be an int from 1 to n_turns ({n_turns})")
    for name, rate in (("fact_rate", fact_rate), ("update_rate", update_rate)):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"{name}: {rate!r} must be between 0 and 1")
    if fact_rate + update_rate > 1.0:
        raise ValueError(f"update_rate: fact_rate + update_rate is {fact_rate + update_rate}, more than 1")
    if len(session_turns) != 2 or not 1 <= session_turns[0] <= session_turns[1]:
        raise ValueError(f"session_turns: {session_turns!r} must be (min, max) with 1 <= min <= max")
    if not span_days > 0:
        raise ValueError(f"span_days: {span_days!r} must be positive")
    return int(session_turns[0]), int(session_turns[1])


@dataclass
class _Subject:
    who: str  # "my sister Ana" or "I"
    name: str
    kinds: dict[str, vocab.FactKind]
    used: set[str] = field(default_factory=set)  # kinds already stated about this subject


@dataclass
class _Fact:
    subject: _Subject
    kind: vocab.FactKind
    value: str
    turn_id: str
    session_id: str
    session_number: int
    stated_on: datetime
    updated: bool = False
    retracted: bool = False
    earlier: list[str] = field(default_factory=list)  # turn ids of the statements this value replaced
    restated: list[str] = field(default_factory=list)  # paraphrases of the current statement
    text: str = ""  # the current statement's words


class _Writer:
    """Writes one conversation turn by turn, remembering facts, then its questions."""

    def __init__(self, conversation_id: str, n_turns: int, rng: random.Random, labels: FactLabels, **params) -> None:
        self.id, self.n_turns, self.rng, self.p, self.labels = conversation_id, n_turns, rng, params, labels
        self.facts: list[_Fact] = []
        self.mutable: list[_Fact] = []
        self.people: list[_Subject] = []
        self.names: set[str] = set()
        self.me = _Subject("I", "I", vocab.SELF_KINDS)
        self.updates = 0

    def write(self) -> tuple[Conversation, list[Question]]:
        lengths = self._session_lengths()
        sessions = []
        for number, (length, started_at) in enumerate(zip(lengths, self._session_dates(len(lengths))), 1):
            session_id = f"{self.id}:s{number}"
            turns = []
            for index in range(1, length + 1):
                turn_id = f"{session_id}:t{index}"
                if index % 2:
                    turns.append(Turn(turn_id, "user", self._user_text(turn_id, session_id, number, started_at)))
                else:
                    turns.append(Turn(turn_id, "assistant", self.rng.choice(_ASSISTANT)))
            sessions.append(Session(session_id, started_at, tuple(turns)))
        questions = self._questions(sessions[-1].started_at + QUESTION_DELAY)
        metadata = {"facts": len(self.facts), "updates": self.updates, "people": len(self.people)}
        return Conversation(self.id, tuple(sessions), ("user", "assistant"), metadata), questions

    def _session_lengths(self) -> list[int]:
        lo, hi = self.p["session_turns"]
        lengths, left = [], self.n_turns
        while left > 0:
            lengths.append(min(left, self.rng.randint(lo, hi)))
            left -= lengths[-1]
        return lengths

    def _session_dates(self, count: int) -> list[datetime]:
        span = self.p["span_days"] * 24 * 60
        mean_gap = max(span / count, 2 * MIN_SESSION_GAP_MINUTES)
        minute, dates = self.rng.randrange(7 * 24 * 60), []
        for _ in range(count):
            dates.append(self.p["start"] + timedelta(minutes=minute))
            minute += MIN_SESSION_GAP_MINUTES + int(self.rng.random() * 2 * (mean_gap - MIN_SESSION_GAP_MINUTES))
        return dates

    def _user_text(self, turn_id: str, session_id: str, number: int, started_at: datetime) -> str:
        draw = self.rng.random()
        fact_rate = self.p["fact_rate"]
        if fact_rate and (not self.facts or draw < fact_rate):
            return self._plant(turn_id, session_id, number, started_at)
        if self.mutable and draw < fact_rate + self.p["update_rate"]:
            fact = self.rng.choice(self.mutable)
            if fact.session_number < number:  # an update comes in a later session
                return self._update(fact, turn_id, session_id, number, started_at)
        duplicates = self.p.get("duplicate_rate", 0.0)
        if duplicates and self.facts and draw < fact_rate + self.p["update_rate"] + duplicates:
            fact = self.rng.choice(self.facts)
            # A restatement, in a later session, of a fact that still holds: restating a retracted fact
            # would contradict the retraction, not repeat it.
            if fact.session_number < number and not fact.kind.event and not fact.retracted:
                self.labels.duplicates.append((fact.turn_id, turn_id))
                stated = self.labels.statements[fact.turn_id]
                self.labels.statements[turn_id] = Statement(turn_id, stated.fact, stated.version)
                fact.restated.append(turn_id)
                said = {_fill(t, fact.subject, fact.value) for t in fact.kind.statements} - {fact.text}
                return self.rng.choice(sorted(said)) if said else fact.text  # in other words, where there are any
        retractions = self.p.get("retraction_rate", 0.0)
        if retractions and draw < fact_rate + self.p["update_rate"] + duplicates + retractions:
            candidates = [f for f in self.mutable if f.kind.retractions and f.session_number < number]
            if candidates:  # a retraction comes in a later session; the fact can then no longer change
                return self._retract(self.rng.choice(candidates), turn_id, session_id, number, started_at)
        plans = self.p.get("plan_rate", 0.0)
        if plans and draw < fact_rate + self.p["update_rate"] + duplicates + retractions + plans:
            return self._plan(turn_id, started_at)
        return self._distractor()

    def _plant(self, turn_id: str, session_id: str, number: int, started_at: datetime) -> str:
        subject = self._subject()
        kind_name = self.rng.choice([k for k in subject.kinds if k not in subject.used])
        subject.used.add(kind_name)
        kind = subject.kinds[kind_name]
        value = self.rng.choice(kind.pool)
        fact = _Fact(subject, kind, value, turn_id, session_id, number, started_at)
        self.facts.append(fact)
        self.labels.statements[turn_id] = Statement(turn_id, f"{self.id}/{subject.name}|{kind_name}", 1)
        if kind.mutable:
            self.mutable.append(fact)
        fact.text = _fill(self.rng.choice(kind.statements), subject, value)
        return fact.text

    def _update(self, fact: _Fact, turn_id: str, session_id: str, number: int, started_at: datetime) -> str:
        value = self.rng.choice([v for v in fact.kind.pool if v != fact.value])
        previous = self.labels.statements[fact.turn_id]
        self.labels.statements[turn_id] = Statement(turn_id, previous.fact, previous.version + 1, fact.turn_id)
        fact.earlier += [fact.turn_id, *fact.restated]
        fact.restated = []
        fact.value, fact.turn_id, fact.session_id = value, turn_id, session_id
        fact.session_number, fact.stated_on, fact.updated = number, started_at, True
        self.updates += 1
        fact.text = _fill(self.rng.choice(fact.kind.updates), fact.subject, value)
        return fact.text

    def _retract(self, fact: _Fact, turn_id: str, session_id: str, number: int, started_at: datetime) -> str:
        previous = self.labels.statements[fact.turn_id]
        self.labels.statements[turn_id] = Statement(turn_id, previous.fact, previous.version + 1, fact.turn_id, True)
        fact.earlier += [fact.turn_id, *fact.restated]
        fact.restated = []
        fact.turn_id, fact.session_id, fact.session_number, fact.stated_on = turn_id, session_id, number, started_at
        fact.retracted = True
        self.mutable.remove(fact)
        fact.text = _fill(self.rng.choice(fact.kind.retractions), fact.subject, fact.value)
        return fact.text

    def _plan(self, turn_id: str, started_at: datetime) -> str:
        subject = self.rng.choice(self.people) if self.people and self.rng.random() < 0.7 else self.me
        on = started_at + timedelta(days=self.rng.randint(2, 30))
        self.labels.expires[turn_id] = datetime.combine(on.date() + timedelta(days=1), datetime.min.time(), on.tzinfo)
        template = self.rng.choice(vocab.PLANS)
        if subject is self.me:
            template = template.replace("{Who} is", "I am").replace("{Who} has", "I have").replace("{Who}", "I")
        return _fill(template.replace("{date}", _day(on)), subject, self.rng.choice(vocab.CITIES))

    def _subject(self) -> _Subject:
        if len(self.me.used) < len(self.me.kinds) and self.rng.random() < 0.15:
            return self.me
        if self.people and self.rng.random() < 0.3:
            known = self.rng.choice(self.people)
            if len(known.used) < len(known.kinds):
                return known
        name = self._new_name()
        person = _Subject(f"my {self.rng.choice(vocab.RELATIONS)} {name}", name, vocab.PERSON_KINDS)
        self.people.append(person)
        return person

    def _new_name(self) -> str:
        """A name unused in this conversation: first names, then with a surname, then with an initial."""
        rng = self.rng
        for form in range(3):
            for _ in range(8):
                first = rng.choice(vocab.FIRST_NAMES)
                name = (first, f"{first} {rng.choice(vocab.LAST_NAMES)}",
                        f"{first} {rng.choice(string.ascii_uppercase)}. {rng.choice(vocab.LAST_NAMES)}")[form]
                if name not in self.names:
                    self.names.add(name)
                    return name
        name = f"{rng.choice(vocab.FIRST_NAMES)} {rng.choice(vocab.LAST_NAMES)}-{len(self.names)}"
        self.names.add(name)
        return name

    def _distractor(self) -> str:
        rng = self.rng
        if self.facts and rng.random() < CONFUSER_RATE:
            fact = rng.choice(self.facts)
            if fact.subject is not self.me:
                return rng.choice(vocab.CONFUSERS).format(name=fact.subject.name, value=fact.value)
        index = rng.randrange(len(vocab.DISTRACTORS))
        slots = {}
        for slot in _SLOTS[index]:
            if slot == "name":
                slots[slot] = rng.choice(self.people).name if self.people and rng.random() < 0.7 else rng.choice(
                    vocab.FIRST_NAMES
                )
            else:
                slots[slot] = _distractor_word(rng, slot)
        return vocab.DISTRACTORS[index].format(**slots)

    def _questions(self, asked_at: datetime) -> list[Question]:
        asked: list[tuple[str, str, str, tuple[_Fact, ...]]] = []
        for fact in self.facts:
            if fact.kind.event:
                text = _fill(self.rng.choice(fact.kind.questions_when), fact.subject, fact.value)
                asked.append(("temporal", text, _day(fact.stated_on), (fact,)))
            else:
                answer = fact.kind.retracted if fact.retracted else fact.value
                asked.append((_category(fact), _value_question(self.rng, fact), answer, (fact,)))
        for _ in range(len(self.facts) // 5):
            first, second = self.rng.sample(self.facts, 2)
            if first.retracted or second.retracted:  # asked on their own; their answer reads badly joined
                continue
            one, two = _value_question(self.rng, first), _value_question(self.rng, second)
            text = f"{one.rstrip('?')}, and {two[0].lower()}{two[1:]}"
            asked.append(("multi-fact", text, f"{first.value}; {second.value}", (first, second)))
        return [
            Question(
                id=f"{self.id}:q{number}",
                conversation_id=self.id,
                text=text,
                answer=answer,
                category=category,
                asked_at=asked_at,
                evidence_turn_ids=tuple(f.turn_id for f in facts),
                evidence_session_ids=tuple(dict.fromkeys(f.session_id for f in facts)),
                superseded_turn_ids=tuple(t for f in facts for t in f.earlier),
            )
            for number, (category, text, answer, facts) in enumerate(asked)
        ]


def _category(fact: _Fact) -> str:
    return "retracted-fact" if fact.retracted else "updated-fact" if fact.updated else "single-fact"


def _value_question(rng: random.Random, fact: _Fact) -> str:
    templates = fact.kind.questions_now if fact.updated or fact.retracted else fact.kind.questions
    return _fill(rng.choice(templates), fact.subject, fact.value)


def _fill(template: str, subject: _Subject, value: str) -> str:
    who = subject.who
    return template.format(
        who=who, Who=who[0].upper() + who[1:], name=subject.name, value=value, a_value=_with_article(value)
    )


def _with_article(word: str) -> str:
    return f"{'an' if word[0].lower() in 'aeiou' else 'a'} {word}"


_WORDS = {
    "rel": vocab.RELATIONS, "city": vocab.CITIES, "city2": vocab.CITIES, "job": vocab.JOBS, "hobby": vocab.HOBBIES,
    "pet": vocab.PETS, "car": vocab.CARS, "food": vocab.FOODS,
}


def _distractor_word(rng: random.Random, slot: str) -> str:
    if slot.startswith(("a_", "A_")):
        phrase = _with_article(rng.choice(_WORDS[slot[2:]]))
        return phrase[0].upper() + phrase[1:] if slot[0] == "A" else phrase
    return rng.choice(_WORDS[slot])


def _day(moment: datetime) -> str:
    return f"{moment.day} {_MONTHS[moment.month - 1]} {moment.year}"
