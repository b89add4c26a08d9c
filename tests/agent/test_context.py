from datetime import datetime, timedelta, timezone

import pytest

from openclaw_lab.agent.context import (
    DEFAULT_HEADERS,
    ContextAssembler,
    answer_in_context,
    identity_keys,
    render_spelled_date,
)
from openclaw_lab.consolidation.consolidate import promote
from openclaw_lab.model import MemoryItem, MemoryTier
from openclaw_lab.text import normalize_answer

T0 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


def words(text: str) -> int:
    """A hand-countable tokenizer: one token per word."""
    return len(text.split())


def item(content: str, item_id: str, days: int = 0, **fields) -> MemoryItem:
    return MemoryItem.new(content, now=T0 + timedelta(days=days), id=item_id, **fields)


# "[2023-05-08 13:56] a b c" is 2 + 3 words; every header is 3 words.
A, B, C = item("Ana lives Porto", "a"), item("Max is puppy", "b", days=1), item("pasta for lunch", "c", days=2)


def test_sections_have_headers_dated_lines_and_hand_counted_tokens():
    context = ContextAssembler(words, total_budget=100).assemble({"long_term": [A], "session": [C, B]})
    assert context.text == (
        "## Relevant memories\n[2023-05-08 13:56] Ana lives Porto\n\n"
        "## This session\n[2023-05-09 13:56] Max is puppy\n[2023-05-10 13:56] pasta for lunch"
    )  # the session is rendered oldest first although its candidates came newest first
    assert context.used_item_ids == {"long_term": ("a",), "session": ("b", "c")}
    assert context.tokens == {"long_term": 3 + 5, "session": 3 + 5 + 5}
    assert context.total_tokens == 21 and context.item_ids == ("a", "b", "c")


def test_an_item_found_in_several_tiers_appears_once():
    semantic = promote(A.replace(embedding=[1.0, 0.0]), T0)  # sem_a, consolidated_from "a"
    working = A.replace(tier=MemoryTier.WORKING)
    context = ContextAssembler(words, total_budget=100).assemble(
        {"long_term": [semantic, B], "session": [A, C], "working": [working, B]}
    )
    assert context.used_item_ids == {"long_term": ("sem_a", "b"), "session": ("c",)}
    assert context.text.count("Ana lives Porto") == 1


def test_identity_keys_follow_merged_provenance():
    merged = item("x", "sem_e1", metadata={"consolidated_from": "e1,e2"})
    marked = item("y", "e3", metadata={"consolidated_into": "sem_e1"})
    assert identity_keys(merged) == {"sem_e1", "e1", "e2"} and identity_keys(marked) == {"e3", "sem_e1"}


def test_section_budgets_skip_what_does_not_fit_but_take_smaller_later_items():
    big = item("one two three four five six seven", "big")  # 9 tokens
    assembler = ContextAssembler(words, total_budget=100, section_budgets={"long_term": 3 + 5 + 5})
    context = assembler.assemble({"long_term": [A, big, B, C]})
    assert context.used_item_ids == {"long_term": ("a", "b")} and context.tokens["long_term"] == 13


def test_the_total_budget_caps_later_sections_and_empty_sections_are_left_out():
    assembler = ContextAssembler(words, total_budget=3 + 5 + 3 + 5)
    context = assembler.assemble({"long_term": [A], "session": [B, C], "working": [C]})
    assert context.used_item_ids == {"long_term": ("a",), "session": ("b",)}
    assert "## Recent turns" not in context.text and context.total_tokens == 16


def test_real_tokenizer_counts_match_the_text(embedder):
    items = [item(f"Memory number {i} about the trip to Lisbon and the museum", f"m{i}", days=i) for i in range(12)]
    assembler = ContextAssembler(embedder.count_tokens, 120, {"long_term": 60, "session": 40, "working": 40})
    context = assembler.assemble({"long_term": items[:6], "session": items[6:], "working": items[::-1]})
    assert embedder.count_tokens(context.text) == context.total_tokens <= 120
    assert all(context.tokens[name] <= budget for name, budget in {"long_term": 60, "session": 40}.items())
    assert len(set(context.item_ids)) == len(context.item_ids)


def test_a_budget_below_the_smallest_header_is_refused(embedder):
    smallest = min(embedder.count_tokens(header) for header in DEFAULT_HEADERS.values())
    message = rf"^total_budget: {smallest - 1} tokens .* header, '.+' \({smallest} tokens\)"
    with pytest.raises(ValueError, match=message):
        ContextAssembler(embedder.count_tokens, total_budget=smallest - 1)
    with pytest.raises(ValueError, match=r"^section_budgets\['working'\]: 2 tokens .* '## Recent turns' \(3 tokens\)"):
        ContextAssembler(words, total_budget=100, section_budgets={"working": 2})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"section_budgets": {"episodes": 10}}, "^section: unknown section 'episodes'; choose from long_term"),
        ({"section_budgets": {"session": 0}}, "^session: 0 must be"),
        ({"total_budget": 2.5}, "^total_budget: 2.5 must be"),
    ],
)
def test_bad_settings_are_refused(args, message):
    with pytest.raises(ValueError, match=message):
        ContextAssembler(words, **{"total_budget": 100, **args})


def test_unknown_candidate_sections_are_refused():
    with pytest.raises(ValueError, match="^candidates: unknown section 'semantic'"):
        ContextAssembler(words, total_budget=100).assemble({"semantic": [A]})


def test_a_spelled_date_rendering_lets_dataset_dates_match():
    assembler = ContextAssembler(words, total_budget=100, render=render_spelled_date)
    context = assembler.assemble({"long_term": [B]})
    assert context.text == "## Relevant memories\n[9 May 2023, 13:56] Max is puppy"
    assert context.tokens == {"long_term": 3 + 7}
    assert answer_in_context("9 May 2023", context.text)
    iso = ContextAssembler(words, total_budget=100).assemble({"long_term": [B]}).text
    assert not answer_in_context("9 May 2023", iso)


def test_answer_normalisation_is_squad_style():
    assert normalize_answer("  The  Eiffel-Tower, in PARIS! ") == "eiffeltower in paris"
    assert normalize_answer("a cat and an owl") == "cat and owl"


@pytest.mark.parametrize(
    ("answer", "context", "expected"),
    [
        ("Porto", "[2023-05-08 13:56] My sister Ana lives in Porto.", True),
        ("the Porto", "ana lives in porto", True),
        ("5", "I have 15 cats", False),  # whole words only
        ("7 May 2023", "[2023-05-07 10:00] we met", False),  # dates are matched as written
        ("Lisbon", "Ana lives in Porto", False),
    ],
)
def test_answer_in_context(answer, context, expected):
    assert answer_in_context(answer, context) is expected


def test_an_answer_empty_after_normalisation_is_refused():
    with pytest.raises(ValueError, match="^answer: 'The!' is empty after normalisation"):
        answer_in_context("The!", "anything")
