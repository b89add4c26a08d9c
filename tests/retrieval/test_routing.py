"""Requests for advice, told apart by their form, and the router that sends them to their own retriever."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from openclaw_lab.datasets import generate, load_locomo
from openclaw_lab.model import Hit, MemoryItem
from openclaw_lab.retrieval.routing import QueryRouter, is_request

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
REQUESTS = [
    "Can you recommend some resources where I can learn more about video editing?",
    "I've been feeling stuck with my paintings lately. Any suggestions on how to get inspired?",
    "I'm planning a trip to Denver soon. What should I do there?",
    "Could you suggest a hotel for my upcoming trip to Miami?",
    "Do you have any tips for keeping my sourdough starter alive?",
    "Recommend a podcast for my commute.",
]
QUESTIONS = [
    "What did Melanie recommend to Caroline?",  # a recommendation someone made: a fact to recall
    "What book did you suggest I read?",  # what the assistant said: also a fact
    "Where did my sister move for her new job?",
    "When did Caroline go to the LGBTQ support group?",
    "Which tips did Jon give Gina about her dance studio?",
]


@pytest.mark.parametrize("query", REQUESTS)
def test_requests_for_advice_are_recognised(query):
    assert is_request(query)


@pytest.mark.parametrize("query", QUESTIONS)
def test_questions_about_what_was_said_are_not_requests(query):
    assert not is_request(query)


def test_no_locomo_or_synthetic_question_is_a_request(locomo_path):
    """So routing requests changes no figure measured on either."""
    questions = [*load_locomo(locomo_path).questions, *generate(3000, seed=0).questions]
    assert len(questions) > 2000
    assert [q.text for q in questions if is_request(q.text)] == []


class Named:
    """A retriever that returns one hit named after itself, and records what it indexed and was checked on."""

    def __init__(self, name, fitted_on=()):
        self.name, self.fitted_on, self.indexed = name, set(fitted_on), []

    def index(self, items):
        self.indexed = [item.id for item in items]

    def search(self, query, k, filter=None):
        return [Hit(MemoryItem.new(self.name, now=T0, id=self.name), 1.0)][:k]

    def check_unseen(self, conversation_ids):
        if seen := self.fitted_on & set(conversation_ids):
            raise ValueError(f"conversation_ids: {sorted(seen)} were used to fit this model")


def test_the_router_sends_requests_to_their_route_and_the_rest_to_the_default():
    default, dense = Named("default", fitted_on={"conv-1"}), Named("dense")
    router = QueryRouter(default, [(is_request, dense)])
    router.index([MemoryItem.new("a", now=T0, id="a"), MemoryItem.new("b", now=T0, id="b")])
    assert default.indexed == dense.indexed == ["a", "b"]
    run = router.search_many({"q1": "Any ideas for dinner?", "q2": "Where did I eat?"}, 1)
    assert run == {"q1": {"dense": 1.0}, "q2": {"default": 1.0}}
    router.check_unseen(["conv-2"])
    with pytest.raises(ValueError, match="conv-1"):
        router.check_unseen(["conv-1", "conv-2"])
    with pytest.raises(ValueError, match="query"):
        router.search("  ", 1)
