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

REQUESTS_ZH = [
    "有什么推荐的跑鞋吗？我右膝有旧伤。",
    "能不能给我一些建议，怎么准备 JLPT N4？",
    "你建议我在东京吃些什么？",
    "推荐一些适合健身后吃的零食吧。",
    "下周去重庆出差，有没有什么好的建议？",
    "帮我推荐几本 Rust 的入门书。",
    "我应该怎么安排婚礼前的减脂计划？",
    "你觉得我应该买 MacBook Air 还是 ThinkPad X1？",
]
QUESTIONS_ZH = [
    "你之前推荐我学 Rust 先看哪本书？",  # advice already given: a fact to recall
    "你推荐过我用什么 App 来提高专注力？",
    "你当时建议的是哪款车？",
    "他给我推荐了一本书，叫什么来着？",
    "我朋友推荐我去成都玩，是哪个朋友？",
    "我没有什么好的建议，你呢？",
    "我应该是三月份买的电脑吧？",
    "我推荐你试试 Forest，它有用吗？",  # the user recommending, not asking
    "我的婚礼定在哪一天？",
]


@pytest.mark.parametrize("query", REQUESTS_ZH)
def test_chinese_requests_for_advice_are_recognised_by_their_form(query):
    assert is_request(query)


@pytest.mark.parametrize("query", QUESTIONS_ZH)
def test_chinese_questions_about_advice_given_and_statements_are_not_requests(query):
    assert not is_request(query)


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
