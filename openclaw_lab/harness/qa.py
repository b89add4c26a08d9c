"""End-to-end QA: each question's assembled context goes to an answering model, the answer to a judge.

Protocols, as published: ``locomo`` scores the LLM judge's CORRECT/WRONG (the "J" score of the mem0,
Zep and LangMem LoCoMo tables), token F1 and BLEU-1 against the gold answer, over categories 1–4
(adversarial questions are left out, as there); ``longmemeval`` uses LongMemEval's per-question-type
judge prompts and its yes/no reading, abstention questions included. Prompts are versioned files in
``prompts/`` (see its SOURCES.md), copied into every run folder. Systems are compared over the same
questions with McNemar's exact test on the judge's verdicts.

>>> round(token_f1("Ana moved to Lyon in May", "Lyon"), 3), round(bleu1("in Lyon", "Lyon"), 3)
(0.286, 0.5)
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

import pandas as pd

from openclaw_lab.agent.context import ContextAssembler, render_spelled_date
from openclaw_lab.datasets.types import Conversation, Question
from openclaw_lab.evaluation.metrics import mcnemar
from openclaw_lab.llm import ChatClient, Reply
from openclaw_lab.model import MemoryItem
from openclaw_lab.replay.conversation import render_turn
from openclaw_lab.retrieval.protocol import RunDict
from openclaw_lab.text import normalize_answer, split_words

__all__ = ["PROTOCOLS", "PROMPTS", "JUDGE_FORMATS", "QAPlan", "token_f1", "bleu1", "read_verdict", "judged_correct",
           "run_qa", "summarise", "evidence_run", "ORACLE"]

PROMPTS = Path(__file__).parent / "prompts"
ORACLE = "oracle"  # the QA row whose context is each question's evidence turns, and nothing else
PROTOCOLS = ("locomo", "longmemeval")
# How the LoCoMo judge is asked for its JSON label (mem0's evaluation used OpenAI's JSON mode): ``schema``
# constrains the reply to {"label": "CORRECT" | "WRONG"} (llama.cpp's servers: a grammar; a small model
# otherwise writes prose); ``reasoned`` to {"reason": "...", "label": ...}, the prompt's one-sentence reason first
# and then the label; ``json`` is plain JSON mode, ``text`` sends no response_format.
_LABEL = {"enum": ["CORRECT", "WRONG"]}
JUDGE_FORMATS = {
    "schema": {"type": "json_object", "schema": {"type": "object", "required": ["label"],
                                                  "properties": {"label": _LABEL}}},
    "reasoned": {"type": "json_object", "schema": {"type": "object", "required": ["reason", "label"],
                                                    "properties": {"reason": {"type": "string", "maxLength": 300},
                                                                   "label": _LABEL}}},
    "json": {"type": "json_object"},
    "text": None,
}  # fmt: skip


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def _tokens(text: str) -> list[str]:
    """LoCoMo's evaluation tokens: SQuAD-normalised words, Porter-stemmed (Snowball's English here); a Chinese
    character is a word of its own (``text.split_words``), so a Chinese answer is scored character by character."""
    return _stemmer().stemWords(split_words(normalize_answer(text)))


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 of a prediction against the gold answer (LoCoMo's ``f1_score``), in [0, 1]."""
    predicted, wanted = _tokens(prediction), _tokens(str(gold))
    same = sum((Counter(predicted) & Counter(wanted)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(wanted)
    return 2 * precision * recall / (precision + recall)


def bleu1(prediction: str, gold: str) -> float:
    """BLEU-1: clipped unigram precision times the brevity penalty, over lower-cased words, in [0, 1]."""
    predicted, wanted = normalize_answer(prediction).split(), normalize_answer(str(gold)).split()
    if not predicted or not wanted:
        return 0.0
    clipped = sum((Counter(predicted) & Counter(wanted)).values())
    penalty = 1.0 if len(predicted) > len(wanted) else math.exp(1 - len(wanted) / len(predicted))
    return penalty * clipped / len(predicted)


VERDICTS = ("CORRECT", "WRONG", "unread", "empty")


def read_verdict(protocol: str, reply: str) -> str:
    """The judge's verdict: ``CORRECT``, ``WRONG``, or ``unread`` when the reply says neither clearly.

    LoCoMo: the JSON ``{"label": ...}`` the prompt asks for, else the one verdict word the reply names
    (``incorrect`` is WRONG; both words and no JSON is unread). LongMemEval: its own reading, "yes" anywhere
    is CORRECT; a "no" is WRONG; neither is unread (and, as there, not correct).

    >>> read_verdict("locomo", 'Same city. {"label": "CORRECT"}'), read_verdict("locomo", "**Label:** incorrect")
    ('CORRECT', 'WRONG')
    >>> read_verdict("locomo", '{"reason": "Same city, other words.", "label": "CORRECT"}')
    'CORRECT'
    >>> read_verdict("locomo", "It is correct, not wrong."), read_verdict("longmemeval", "No.")
    ('unread', 'WRONG')
    """
    if protocol == "longmemeval":
        return "CORRECT" if "yes" in reply.lower() else "WRONG" if re.search(r"\bno\b", reply, re.I) else "unread"
    for found in reversed(re.findall(r"\{[^{}]*\}", reply)):
        try:
            label = str(json.loads(found)["label"]).strip().upper()
        except (ValueError, KeyError, TypeError):
            continue
        if label in ("CORRECT", "WRONG"):
            return label
    words = {"WRONG" if w.upper() in ("WRONG", "INCORRECT") else "CORRECT"
             for w in re.findall(r"\b(correct|incorrect|wrong)\b", reply, re.I)}  # fmt: skip
    return words.pop() if len(words) == 1 else "unread"


def judged_correct(protocol: str, reply: str) -> bool:
    """Whether the judge's reply says CORRECT (``read_verdict``); an unread reply is not correct."""
    return read_verdict(protocol, reply) == "CORRECT"


class _NoBar:
    """The progress bar when none is shown."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


@dataclass
class QAPlan:
    """The built QA stage: the two endpoints, the protocol, context budgets, the systems whose runs feed it."""

    answerer: ChatClient
    judge: ChatClient
    protocol: str
    budgets: tuple[int, ...]
    systems: tuple[str, ...]
    answer_prompt: str = "answer_v1"
    judge_format: str = "schema"  # a key of JUDGE_FORMATS (LoCoMo's judge; LongMemEval's answers yes or no)
    oracle: bool = False  # also answer from each question's evidence turns alone (the row ``oracle``)
    questions: int | None = None  # the first N scored questions (None: all)
    prompts: dict[str, str] = field(default_factory=dict)

    def judge_extra(self) -> dict[str, Any] | None:
        """The judge's ``response_format``, where the protocol reads JSON."""
        form = JUDGE_FORMATS[self.judge_format]
        return {"response_format": form} if form is not None and self.protocol == "locomo" else None

    def __post_init__(self) -> None:
        self.prompts = {"answer": (PROMPTS / f"{self.answer_prompt}.txt").read_text()}
        if self.protocol == "locomo":
            self.prompts["judge"] = (PROMPTS / "judge_locomo_v1.txt").read_text()
        else:
            self.prompts |= {f"judge.{kind}": text for kind, text in
                             json.loads((PROMPTS / "judge_longmemeval_v1.json").read_text()).items()}  # fmt: skip

    def asked(self, questions: Sequence[Question]) -> list[Question]:
        """The questions the protocol scores (LoCoMo leaves adversarial ones out; LongMemEval keeps all), the
        first ``questions`` of them when set."""
        return [q for q in questions if self.protocol == "longmemeval" or not q.abstention][: self.questions]

    def rows(self) -> tuple[str, ...]:
        """The table's systems, in order: the configured ones, then ``oracle`` when asked for."""
        return (*self.systems, ORACLE) if self.oracle else self.systems

    def judge_prompt(self, q: Question, answer: str) -> str:
        if self.protocol == "locomo":
            template = self.prompts["judge"]
        else:
            kind = "abstention" if q.abstention else q.category
            template = self.prompts.get(f"judge.{kind}", self.prompts["judge.default"])
        return template.format(question=q.text, gold_answer=q.answer, generated_answer=answer)


def run_qa(
    plan: QAPlan,
    questions: Sequence[Question],
    item_runs: Mapping[str, RunDict],
    items: Mapping[str, MemoryItem],
    count_tokens: Callable[[str], int],
    progress: Callable[[int], Any] = lambda total: _NoBar(),
) -> pd.DataFrame:
    """One row per (system, budget, question): the answer (why it stopped, its tokens and seconds), the judge's
    reply and verdict, F1 and BLEU-1. ``progress(total)`` makes one bar for all the stage's calls (tqdm's
    rate and remaining time). An empty answer is WRONG without asking the judge (verdict ``empty``)."""
    count_tokens = lru_cache(maxsize=None)(count_tokens)
    asked = plan.asked(questions)
    bar = progress(2 * len(plan.rows()) * len(plan.budgets) * len(asked))

    def tick(reply: Reply | None = None) -> None:
        bar.update(1)
        bar.set_postfix_str(f"in flight {plan.answerer.stats.in_flight}, timeouts "
                            f"{plan.answerer.stats.timeouts + plan.judge.stats.timeouts}")  # fmt: skip

    rows = []
    try:
        for system in plan.rows():
            for budget in plan.budgets:
                rows += _qa_rows(plan, asked, system, budget, item_runs, items, count_tokens, tick)
    finally:
        bar.close()
    return pd.DataFrame(rows)


def _qa_rows(plan: QAPlan, asked: Sequence[Question], system: str, budget: int, item_runs: Mapping[str, RunDict],
             items: Mapping[str, MemoryItem], count_tokens: Callable[[str], int],
             tick: Callable[..., None]) -> list[dict[str, Any]]:  # fmt: skip
    """The rows of one system at one budget: all answers first, then the judge's verdicts on them."""
    assembler = ContextAssembler(count_tokens, budget, render=render_spelled_date)
    contexts = [assembler.assemble({"long_term": [items[i] for i in item_runs[system].get(q.id, {})]}).text
                for q in asked]  # fmt: skip
    answers = plan.answerer.replies([[{"role": "user", "content": plan.prompts["answer"].format(
        context=context, question=q.text, question_date=f"{q.asked_at.day} {q.asked_at:%B %Y}")}]
        for q, context in zip(asked, contexts)], on_reply=tick)  # fmt: skip
    judged = [(q, a) for q, a in zip(asked, answers) if a.text.strip()]
    for _ in range(len(asked) - len(judged)):
        tick()  # an empty answer's verdict needs no call
    verdicts = dict(zip([q.id for q, _ in judged], plan.judge.replies(
        [[{"role": "user", "content": plan.judge_prompt(q, a.text)}] for q, a in judged], on_reply=tick,
        extra=plan.judge_extra())))
    rows = []
    for q, answer in zip(asked, answers):
        judge = verdicts.get(q.id)
        verdict = read_verdict(plan.protocol, judge.text) if judge is not None else "empty"
        rows.append({"system": system, "budget": budget, "question": q.id, "category": q.category,
                     "question_text": q.text, "gold_answer": q.answer,
                     "answer": answer.text, "answer_finish": answer.finish_reason,
                     "answer_prompt_tokens": answer.prompt_tokens, "answer_tokens": answer.completion_tokens,
                     "answer_seconds": answer.seconds, "judge": judge.text if judge is not None else "",
                     "judge_finish": judge.finish_reason if judge is not None else "",
                     "judge_seconds": judge.seconds if judge is not None else 0.0,
                     "verdict": verdict, "correct": verdict == "CORRECT",
                     "f1": token_f1(answer.text, q.answer), "bleu1": bleu1(answer.text, q.answer)})  # fmt: skip
    return rows


def evidence_run(conversations: Sequence[Conversation], questions: Sequence[Question]
                 ) -> tuple[RunDict, dict[str, MemoryItem]]:  # fmt: skip
    """The oracle's run: each question's evidence turns as memories (dated by their session), in the order
    they were said, and those memories by id. A question without evidence turns gets an empty context."""
    said = {}  # (conversation id, turn id) -> (its place in the conversation, its session, the turn)
    for c in conversations:
        turns = [(s, t) for s in sorted(c.sessions, key=lambda s: s.started_at) for t in s.turns]
        said |= {(c.id, t.id): (place, s, t) for place, (s, t) in enumerate(turns)}
    items: dict[str, MemoryItem] = {}
    run: RunDict = {}
    for q in questions:
        found = sorted(said[(q.conversation_id, t)] for t in q.evidence_turn_ids if (q.conversation_id, t) in said)
        for rank, (_, session, turn) in enumerate(found):
            item_id = f"{q.conversation_id}|{turn.id}"
            items[item_id] = MemoryItem.new(render_turn(turn.speaker, turn.text, turn.caption), now=session.started_at,
                                            id=item_id, session_id=session.id, source_ids=(turn.id,))  # fmt: skip
            run.setdefault(q.id, {})[item_id] = float(len(found) - rank)
    return run, items


def summarise(table: pd.DataFrame) -> pd.DataFrame:
    """Accuracy (the judge), F1 and BLEU-1 per system, budget and category (and ``all``), with McNemar's p
    against the first system at the same budget over all questions."""
    parts = []
    for category, group in [("all", table), *table.groupby("category")]:
        means = group.groupby(["system", "budget"], sort=False)[["correct", "f1", "bleu1"]].mean()
        parts.append(means.assign(category=category, questions=group.groupby(["system", "budget"], sort=False).size()))
    summary = pd.concat(parts).rename(columns={"correct": "accuracy"}).reset_index()
    first = table["system"].iloc[0]
    p_values = {}
    for (system, budget), group in table.groupby(["system", "budget"], sort=False):
        if system != first:
            base = table[(table["system"] == first) & (table["budget"] == budget)].set_index("question")["correct"]
            mine = group.set_index("question")["correct"].reindex(base.index)
            p_values[(system, budget)] = mcnemar(list(base), list(mine))
    summary["p_vs_first"] = pd.Series([p_values.get((s, b)) if c == "all" else None for s, b, c in
                                       zip(summary["system"], summary["budget"], summary["category"])], dtype=object)  # fmt: skip
    return summary
