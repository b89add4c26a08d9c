"""Answer-in-context: a metric that needs no LLM.

The share of questions whose normalised gold answer appears in the context an agent would be given:
the best retrieved memories, assembled by ``ContextAssembler`` within a token budget (tokens from
the model's tokenizer), rendered with spelled-out dates so that temporal answers can match.
Reported per category and against the budget. Abstention questions have no answer to find and are
left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

import pandas as pd

from openclaw_lab import registry
from openclaw_lab.agent.context import ContextAssembler, answer_in_context, normalize_answer, render_spelled_date
from openclaw_lab.clock import SimulatedClock
from openclaw_lab.datasets.types import Question
from openclaw_lab.embedding import Embedder
from openclaw_lab.harness.metrics import by_category
from openclaw_lab.harness.replay import ConversationReplay

__all__ = ["answer_in_context_table", "DEFAULT_BUDGETS"]

DEFAULT_BUDGETS = (64, 128, 256, 512, 1024, 2048)


def answer_in_context_table(
    replays: Sequence[ConversationReplay],
    questions: Mapping[str, list[Question]],
    embedder: Embedder,
    *,
    strategy: str = "dense",
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    depth: int = 100,
    params: Mapping | None = None,
) -> pd.DataFrame:
    """Rows: categories and ``all``; columns: budgets; values: share of questions answered in context."""
    count_tokens = lru_cache(maxsize=None)(embedder.count_tokens)  # each memory line is counted once
    assemblers = {b: ContextAssembler(count_tokens, b, render=render_spelled_date) for b in budgets}
    rows = []
    for replay in replays:
        asked = [q for q in questions.get(replay.conversation_id, []) if not q.abstention and normalize_answer(q.answer)]
        if not asked:
            continue
        clock = SimulatedClock(max(q.asked_at for q in asked))
        retriever = registry.retrievers.create(strategy, embedder=embedder, clock=clock, **dict(params or {}))
        retriever.index(replay.items)
        for q in asked:
            found = [hit.item for hit in retriever.search(q.text, depth)]
            row = {"question": q.id, "category": q.category}
            for budget, assembler in assemblers.items():
                row[budget] = answer_in_context(q.answer, assembler.assemble({"long_term": found}).text)
            rows.append(row)
    if not rows:
        raise ValueError("questions: none has an answer to look for")
    frame = pd.DataFrame(rows).set_index("question")
    return by_category(frame[list(budgets)].astype(float), frame["category"].to_dict())
