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

from openclaw_lab.agent.context import ContextAssembler, normalize_answer, render_spelled_date
from openclaw_lab.datasets.types import Question
from openclaw_lab.harness.metrics import mcnemar
from openclaw_lab.llm import ChatClient
from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.protocol import RunDict
from openclaw_lab.text import split_words

__all__ = ["PROTOCOLS", "PROMPTS", "QAPlan", "token_f1", "bleu1", "judged_correct", "run_qa", "summarise"]

PROMPTS = Path(__file__).parent / "prompts"
PROTOCOLS = ("locomo", "longmemeval")


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


def judged_correct(protocol: str, reply: str) -> bool:
    """The judge's verdict: LoCoMo's ``{"label": "CORRECT"}`` (or the bare word), LongMemEval's 'yes'."""
    if protocol == "longmemeval":
        return "yes" in reply.lower()
    if match := re.search(r"\{[^{}]*\}", reply):
        try:
            return str(json.loads(match.group())["label"]).strip().upper() == "CORRECT"
        except (ValueError, KeyError, TypeError):
            pass
    return "CORRECT" in reply.upper() and "WRONG" not in reply.upper()


@dataclass
class QAPlan:
    """The built QA stage: the two endpoints, the protocol, context budgets, the systems whose runs feed it."""

    answerer: ChatClient
    judge: ChatClient
    protocol: str
    budgets: tuple[int, ...]
    systems: tuple[str, ...]
    answer_prompt: str = "answer_v1"
    prompts: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.prompts = {"answer": (PROMPTS / f"{self.answer_prompt}.txt").read_text()}
        if self.protocol == "locomo":
            self.prompts["judge"] = (PROMPTS / "judge_locomo_v1.txt").read_text()
        else:
            self.prompts |= {f"judge.{kind}": text for kind, text in
                             json.loads((PROMPTS / "judge_longmemeval_v1.json").read_text()).items()}  # fmt: skip

    def asked(self, questions: Sequence[Question]) -> list[Question]:
        """The questions the protocol scores: LoCoMo leaves adversarial ones out; LongMemEval keeps all."""
        return [q for q in questions if self.protocol == "longmemeval" or not q.abstention]

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
    progress: Callable[[Any], Any] = lambda it: it,
) -> pd.DataFrame:
    """One row per (system, budget, question): the answer, the judge's reply and verdict, F1 and BLEU-1."""
    count_tokens = lru_cache(maxsize=None)(count_tokens)
    asked = plan.asked(questions)
    rows = []
    for system in progress(plan.systems):
        for budget in plan.budgets:
            assembler = ContextAssembler(count_tokens, budget, render=render_spelled_date)
            contexts = [assembler.assemble({"long_term": [items[i] for i in item_runs[system].get(q.id, {})]}).text
                        for q in asked]  # fmt: skip
            answers = plan.answerer.complete_many([[{"role": "user", "content": plan.prompts["answer"].format(
                context=context, question=q.text, question_date=f"{q.asked_at.day} {q.asked_at:%B %Y}")}]
                for q, context in zip(asked, contexts)])  # fmt: skip
            verdicts = plan.judge.complete_many([[{"role": "user", "content": plan.judge_prompt(q, answer)}]
                                                 for q, answer in zip(asked, answers)])  # fmt: skip
            for q, answer, verdict in zip(asked, answers, verdicts):
                rows.append({"system": system, "budget": budget, "question": q.id, "category": q.category,
                             "answer": answer, "judge": verdict, "correct": judged_correct(plan.protocol, verdict),
                             "f1": token_f1(answer, q.answer), "bleu1": bleu1(answer, q.answer)})  # fmt: skip
    return pd.DataFrame(rows)


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
