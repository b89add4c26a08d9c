"""Answer-in-context: a metric that needs no LLM.

The share of questions whose normalised gold answer appears in the context an agent would be given:
the system's ranked memories for the question (its run, at the experiment's search depth),
assembled by ``ContextAssembler`` within a token budget (tokens from the model's tokenizer),
rendered with spelled-out dates so that temporal answers can match. Reported per category and
against the budget. Abstention questions have no answer to find and are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache

import pandas as pd

from openclaw_lab.agent.context import ContextAssembler, answer_in_context, render_spelled_date
from openclaw_lab.datasets.types import Question
from openclaw_lab.evaluation.metrics import by_category
from openclaw_lab.model import MemoryItem
from openclaw_lab.retrieval.protocol import RunDict
from openclaw_lab.text import normalize_answer

__all__ = ["answer_in_context_table", "DEFAULT_BUDGETS"]

DEFAULT_BUDGETS = (64, 128, 256, 512, 1024, 2048)


def answer_in_context_table(
    item_run: RunDict,
    items: Mapping[str, MemoryItem],
    questions: Iterable[Question],
    count_tokens: Callable[[str], int],
    budgets: Sequence[int] = DEFAULT_BUDGETS,
) -> pd.DataFrame:
    """Rows: categories and ``all``; columns: budgets; values: share of questions answered in context.

    ``item_run`` ranks item ids per question (rank order); ``items`` resolves them.
    """
    count_tokens = lru_cache(maxsize=None)(count_tokens)  # each memory line is counted once
    assemblers = {b: ContextAssembler(count_tokens, b, render=render_spelled_date) for b in budgets}
    rows = []
    for q in questions:
        if q.abstention or not normalize_answer(q.answer):
            continue
        found = [items[item_id] for item_id in item_run.get(q.id, {})]
        row = {"question": q.id, "category": q.category}
        for budget, assembler in assemblers.items():
            row[budget] = answer_in_context(q.answer, assembler.assemble({"long_term": found}).text)
        rows.append(row)
    if not rows:
        raise ValueError("questions: none has an answer to look for")
    frame = pd.DataFrame(rows).set_index("question")
    return by_category(frame[list(budgets)].astype(float), frame["category"].to_dict())
