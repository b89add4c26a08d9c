"""Context assembly within token budgets, and the LLM-free answer-in-context check.

Three sections, filled and rendered in this order: relevant long-term memories (kept in relevance
order), the current session and working memory (candidates given newest first, rendered oldest
first). Each has a header and an optional token budget; the total budget caps them
all. Tokens are counted with the model's tokenizer, line by line (header and each dated memory),
which equals the count of the joined text for WordPiece/BPE tokenizers that ignore whitespace.
An item already placed (by id, or through the ``sem_<id>`` / ``consolidated_from`` provenance of a
semantic copy) is not placed again.

>>> from datetime import datetime
>>> from openclaw_lab.model import MemoryItem
>>> item = MemoryItem.new("Ana lives in Porto", now=datetime(2023, 5, 8, 13, 56), id="e1")
>>> assembler = ContextAssembler(lambda text: len(text.split()), total_budget=20)
>>> print(assembler.assemble({"long_term": [item], "working": [item]}).text)
## Relevant memories
[2023-05-08 13:56] Ana lives in Porto
>>> answer_in_context("The Porto!", "[2023-05-08 13:56] Ana lives in porto")
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from openclaw_lab.consolidation.consolidate import SEMANTIC_PREFIX
from openclaw_lab.model import MemoryItem
from openclaw_lab.text import normalize_answer
from openclaw_lab.tiers.working import render_line

__all__ = [
    "SECTIONS",
    "DEFAULT_HEADERS",
    "AssembledContext",
    "ContextAssembler",
    "identity_keys",
    "render_spelled_date",
    "answer_in_context",
]

SECTIONS = ("long_term", "session", "working")
DEFAULT_HEADERS = {
    "long_term": "## Relevant memories",
    "session": "## This session",
    "working": "## Recent turns",
}
CHRONOLOGICAL = frozenset({"session", "working"})  # rendered oldest to newest; long-term keeps relevance order
TokenCounter = Callable[[str], int]


def render_spelled_date(item: MemoryItem) -> str:
    """A memory line dated as datasets write answers (``8 May 2023``), for answer-in-context checks.

    >>> from datetime import datetime
    >>> render_spelled_date(MemoryItem.new("Ana lives in Porto", now=datetime(2023, 5, 8, 13, 56)))
    '[8 May 2023, 13:56] Ana lives in Porto'
    """
    return f"[{item.created_at.day} {item.created_at:%B %Y, %H:%M}] {item.content}"


@dataclass(frozen=True)
class AssembledContext:
    """The context text, the items used in each section (in rendered order) and each section's tokens."""

    text: str
    items: Mapping[str, tuple[MemoryItem, ...]] = field(default_factory=dict)
    tokens: Mapping[str, int] = field(default_factory=dict)

    @property
    def used_item_ids(self) -> dict[str, tuple[str, ...]]:
        return {name: tuple(item.id for item in items) for name, items in self.items.items()}

    @property
    def item_ids(self) -> tuple[str, ...]:
        """Every used item id, in rendered order."""
        return tuple(item.id for items in self.items.values() for item in items)

    @property
    def total_tokens(self) -> int:
        return sum(self.tokens.values())


def identity_keys(item: MemoryItem) -> set[str]:
    """Ids that denote the same memory: its own, and those of the episodes it was consolidated from/into.

    >>> from datetime import datetime
    >>> copy = MemoryItem.new("x", now=datetime(2023, 5, 8), id="sem_e1", metadata={"consolidated_from": "e1,e2"})
    >>> sorted(identity_keys(copy))
    ['e1', 'e2', 'sem_e1']
    """
    keys = {item.id}
    if item.id.startswith(SEMANTIC_PREFIX):
        keys.add(item.id[len(SEMANTIC_PREFIX) :])
    for name in ("consolidated_from", "consolidated_into"):
        keys.update(part.strip() for part in str(item.metadata.get(name, "")).split(",") if part.strip())
    return keys


class ContextAssembler:
    """Builds an ``AssembledContext`` from candidate items per section, best candidates first.

    ``section_budgets`` caps sections by name (a missing name is capped by the total only). Items that
    do not fit are skipped and smaller later ones may still fit. A section with no item is left out.
    ``render`` writes one memory as a line (default: ``[YYYY-mm-dd HH:MM] content``).
    """

    def __init__(
        self,
        count_tokens: TokenCounter,
        total_budget: int,
        section_budgets: Mapping[str, int] | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        render: Callable[[MemoryItem], str] = render_line,
    ) -> None:
        budgets = dict(section_budgets or {})
        headers = {**DEFAULT_HEADERS, **(headers or {})}
        for name in (*budgets, *headers):
            if name not in SECTIONS:
                raise ValueError(f"section: unknown section {name!r}; choose from {', '.join(SECTIONS)}")
        for name, budget in {"total_budget": total_budget, **budgets}.items():
            if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
                raise ValueError(f"{name}: {budget!r} must be a number of tokens >= 1")
        self.count_tokens, self.total_budget, self.section_budgets = count_tokens, total_budget, budgets
        self.headers, self.render = headers, render
        self.header_tokens = {name: count_tokens(headers[name]) for name in SECTIONS}
        smallest = min(SECTIONS, key=self.header_tokens.__getitem__)
        if total_budget < self.header_tokens[smallest]:
            raise ValueError(
                f"total_budget: {total_budget} tokens is smaller than the smallest section header, "
                f"{headers[smallest]!r} ({self.header_tokens[smallest]} tokens)"
            )
        for name, budget in budgets.items():
            if budget < self.header_tokens[name]:
                raise ValueError(
                    f"section_budgets[{name!r}]: {budget} tokens is smaller than its header "
                    f"{headers[name]!r} ({self.header_tokens[name]} tokens)"
                )

    def __repr__(self) -> str:
        return f"ContextAssembler(total_budget={self.total_budget}, section_budgets={self.section_budgets})"

    def assemble(self, candidates: Mapping[str, Sequence[MemoryItem]]) -> AssembledContext:
        """Fill each section from its candidates (best first) within the budgets; see the module docstring."""
        for name in candidates:
            if name not in SECTIONS:
                raise ValueError(f"candidates: unknown section {name!r}; choose from {', '.join(SECTIONS)}")
        remaining, placed = self.total_budget, set[str]()
        items: dict[str, tuple[MemoryItem, ...]] = {}
        tokens: dict[str, int] = {}
        blocks: list[str] = []
        for name in SECTIONS:
            budget = min(remaining, self.section_budgets.get(name, remaining))
            chosen, used = self._fill(candidates.get(name, ()), budget - self.header_tokens[name], placed)
            if not chosen:
                continue
            if name in CHRONOLOGICAL:  # candidates came newest first; a stable sort keeps that order in ties
                chosen = sorted(reversed(chosen), key=lambda item: item.created_at)
            items[name], tokens[name] = tuple(chosen), used + self.header_tokens[name]
            remaining -= tokens[name]
            blocks.append("\n".join([self.headers[name], *(self.render(item) for item in chosen)]))
        return AssembledContext("\n\n".join(blocks), items, tokens)

    def _fill(self, candidates: Iterable[MemoryItem], budget: int, placed: set[str]) -> tuple[list[MemoryItem], int]:
        """The candidates that fit ``budget`` in order, skipping any already placed; marks them placed."""
        chosen: list[MemoryItem] = []
        used = 0
        if budget <= 0:
            return chosen, used
        for item in candidates:
            keys = identity_keys(item)
            if keys & placed:
                continue
            cost = self.count_tokens(self.render(item))
            if used + cost > budget:
                continue
            chosen.append(item)
            placed |= keys
            used += cost
        return chosen, used


def answer_in_context(answer: str, context: str) -> bool:
    """Whether the normalised answer (``text.normalize_answer``) occurs in the normalised context as whole words.

    >>> answer_in_context("5", "I have 15 cats"), answer_in_context("15 cats", "I have 15 cats.")
    (False, True)
    """
    wanted = normalize_answer(answer)
    if not wanted:
        raise ValueError(f"answer: {answer!r} is empty after normalisation; it cannot be looked for in a context")
    return f" {wanted} " in f" {normalize_answer(context)} "
