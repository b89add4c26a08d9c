"""Time expressions in questions, read relative to the question's time; the time-aware retriever."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from openclaw_lab.model import MemoryFilter, MemoryItem
from openclaw_lab.retrieval.bm25 import BM25Retriever
from openclaw_lab.retrieval.temporal import TimeAwareRetriever, TimeWindow, parse_time_window, within

from .conftest import T0  # Monday 8 May 2023, 13:56 UTC


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


CASES = [
    # days
    ("What did I do yesterday?", "2023-05-07", "2023-05-08"),
    ("what happened the day before yesterday", "2023-05-06", "2023-05-07"),
    ("What did I cook last night?", "2023-05-07", "2023-05-08"),
    ("what did I eat today", "2023-05-08", "2023-05-09"),
    ("who called this morning", "2023-05-08", "2023-05-09"),
    ("what did I buy 3 days ago", "2023-05-05", "2023-05-06"),
    ("what did I buy three days ago", "2023-05-05", "2023-05-06"),
    ("what did I buy a few days ago", "2023-05-05", "2023-05-06"),
    ("what did I do last Saturday?", "2023-05-06", "2023-05-07"),
    ("what did I do on Friday?", "2023-05-05", "2023-05-06"),
    ("what did I do last Sunday", "2023-05-07", "2023-05-08"),
    ("what did I do on Monday", "2023-05-01", "2023-05-02"),  # today is a Monday: the one before
    # weeks
    ("Where did I go last week?", "2023-05-01", "2023-05-08"),
    ("the previous week was busy", "2023-05-01", "2023-05-08"),
    ("what is planned this week", "2023-05-08", "2023-05-15"),
    ("what did I do two weeks ago", "2023-04-24", "2023-05-01"),
    ("what did I do a couple of weeks ago", "2023-04-24", "2023-05-01"),
    ("what did I do a week ago", "2023-05-01", "2023-05-08"),
    ("what did we do last weekend", "2023-05-06", "2023-05-08"),
    # months
    ("which book did I read last month?", "2023-04-01", "2023-05-01"),
    ("what did I do this month", "2023-05-01", "2023-06-01"),
    ("what did I start a month ago", "2023-04-01", "2023-05-01"),
    ("what did I start three months ago", "2023-02-01", "2023-03-01"),
    ("What did Caroline do in May 2023?", "2023-05-01", "2023-06-01"),
    ("May 2023 trip", "2023-05-01", "2023-06-01"),
    ("what happened during March, 2023", "2023-03-01", "2023-04-01"),
    ("what happened in early June 2022", "2022-06-01", "2022-07-01"),
    ("what did I do in April", "2023-04-01", "2023-05-01"),
    ("what did I do in June", "2022-06-01", "2022-07-01"),  # June is still to come: the last one
    ("what did I do last May", "2022-05-01", "2022-06-01"),
    ("what did I do last April", "2023-04-01", "2023-05-01"),
    ("what did I do in sept. 2022", "2022-09-01", "2022-10-01"),
    # years
    ("what did I do in 2023", "2023-01-01", "2024-01-01"),
    ("the 2022 holiday", "2022-01-01", "2023-01-01"),
    ("Where did I travel last year?", "2022-01-01", "2023-01-01"),
    ("what have I done this year", "2023-01-01", "2024-01-01"),
    ("what did I do two years ago", "2021-01-01", "2022-01-01"),
    # dates
    ("What did we eat on 8 May 2023?", "2023-05-08", "2023-05-09"),
    ("on the 8th of May 2023", "2023-05-08", "2023-05-09"),
    ("on May 8, 2023", "2023-05-08", "2023-05-09"),
    ("on May 8th", "2023-05-08", "2023-05-09"),
    ("on 7 May", "2023-05-07", "2023-05-08"),
    ("on 20 May", "2022-05-20", "2022-05-21"),  # not yet this year: last year's
    ("the 2023-05-01 meeting", "2023-05-01", "2023-05-02"),
    ("on 31 April 2023", "2023-04-01", "2023-05-01"),  # no such day: the month it names
]


@pytest.mark.parametrize(("query", "since", "until"), CASES, ids=[case[0] for case in CASES])
def test_calendar_expressions(query, since, until):
    assert parse_time_window(query, T0) == TimeWindow(day(since), day(until))


ROLLING = [
    ("what did I eat in the past 3 days", T0 - timedelta(days=3)),
    ("what did I do the past week", T0 - timedelta(weeks=1)),
    ("what happened over the last week", T0 - timedelta(weeks=1)),
    ("what did I read in the last 2 months", datetime(2023, 3, 8, 13, 56, tzinfo=timezone.utc)),
    ("what changed over the last year", datetime(2022, 5, 8, 13, 56, tzinfo=timezone.utc)),
]


@pytest.mark.parametrize(("query", "since"), ROLLING, ids=[case[0] for case in ROLLING])
def test_rolling_spans_end_with_today(query, since):
    assert parse_time_window(query, T0) == TimeWindow(since, day("2023-05-09"))


@pytest.mark.parametrize(
    "query",
    [
        "What is my dog's name?",
        "What am I doing tomorrow?",
        "what is planned for next week",
        "what did I do two weeks before my trip",  # relative to an event: its date is not in the question
        "May I ask what my dog is called?",  # "may" the verb
        "I go running on Mondays",  # a habit, not a day
        "I ran 5 miles",
    ],
)
def test_no_window_without_a_time_expression(query):
    assert parse_time_window(query, T0) is None


def test_the_most_specific_expression_wins():
    assert parse_time_window("in May 2023, on 8 May 2023 exactly", T0).since == day("2023-05-08")
    assert parse_time_window("in 2023, what did I do last week", T0).since == day("2023-05-01")


def test_month_ends_and_year_ends_roll_over():
    assert parse_time_window("last month", day("2023-01-15")) == TimeWindow(day("2022-12-01"), day("2023-01-01"))
    assert parse_time_window("in December 2022", T0) == TimeWindow(day("2022-12-01"), day("2023-01-01"))
    assert parse_time_window("a month ago", day("2023-03-31")) == TimeWindow(day("2023-02-01"), day("2023-03-01"))
    assert parse_time_window("last week", day("2023-01-02")) == TimeWindow(day("2022-12-26"), day("2023-01-02"))


def test_relative_to_the_question_time_not_the_wall_clock():
    assert parse_time_window("yesterday", day("2019-07-01")) == TimeWindow(day("2019-06-30"), day("2019-07-01"))
    naive = datetime(2019, 7, 1, 10)  # a naive time is taken as UTC
    assert parse_time_window("yesterday", naive).since == day("2019-06-30")
    with pytest.raises(ValueError, match=r"^query: 3 is not a string"):
        parse_time_window(3, T0)


# the retriever, on a tiny fixture
def memory(id, text, when):
    return MemoryItem.new(text, now=when, id=id)


ITEMS = [
    memory("mountains", "a hiking trip to the mountains", day("2023-05-06")),
    memory("lake", "hiking and more hiking around the lake", day("2023-04-20")),
    memory("boots", "new hiking boots", datetime(2023, 5, 8, 9, tzinfo=timezone.utc)),
    memory("pasta", "cooked pasta for the kids", day("2023-05-03")),
]
QUESTION = "where did I go hiking last week?"  # only "hiking" is in the memories


def time_aware(clock, **params):
    retriever = TimeAwareRetriever(BM25Retriever(), clock, **params)
    retriever.index(ITEMS)
    return retriever


def ids(hits):
    return [hit.item.id for hit in hits]


def test_filter_mode_keeps_only_the_window(clock):
    assert ids(time_aware(clock, mode="filter", margin=0).search(QUESTION, 10)) == ["mountains"]
    # a day of margin lets in what was said on Monday about the week before
    widened = time_aware(clock, mode="filter", margin=timedelta(days=1)).search(QUESTION, 10)
    assert sorted(ids(widened)) == ["boots", "mountains"]


def test_filter_mode_scores_are_the_base_scores(clock):
    retriever = time_aware(clock, mode="filter", margin=0)
    base = BM25Retriever()
    base.index(ITEMS)
    base_scores = {hit.item.id: hit.score for hit in base.search(QUESTION, 10)}
    hits = retriever.search(QUESTION, 5)
    assert [(hit.item.id, hit.score) for hit in hits] == [("mountains", base_scores["mountains"])]


def test_boost_mode_lifts_the_window_and_keeps_the_rest(clock):
    base = BM25Retriever()
    base.index(ITEMS)
    assert ids(base.search(QUESTION, 10)) == ["lake", "boots", "mountains"]  # "hiking" twice, then by length
    # relevance scaled to [0, 1]: lake 1, mountains 0 (the lowest) + the boost
    boosted = time_aware(clock, mode="boost", boost=1.5, margin=0).search(QUESTION, 10)
    assert ids(boosted) == ["mountains", "lake", "boots"]
    assert [hit.score for hit in boosted[:2]] == [1.5, 1.0]
    mild = time_aware(clock, mode="boost", boost=0.5, margin=0).search(QUESTION, 10)
    assert ids(mild)[0] == "lake" and mild[0].score == 1.0


def test_without_a_time_expression_the_base_answers(clock):
    base = BM25Retriever()
    base.index(ITEMS)
    for mode in ("filter", "boost"):
        hits = time_aware(clock, mode=mode).search("where did we go hiking?", 10)
        assert hits == base.search("where did we go hiking?", 10)


def test_the_window_is_intersected_with_the_callers_filter(clock):
    retriever = time_aware(clock, mode="filter", margin=0)
    assert ids(retriever.search(QUESTION, 10, MemoryFilter(since=day("2023-05-07")))) == []
    assert ids(retriever.search(QUESTION, 10, MemoryFilter(until=day("2023-04-25")))) == []
    assert ids(retriever.search("pasta last week", 10, MemoryFilter(since=day("2023-05-02")))) == ["pasta"]
    last_week = TimeWindow(day("2023-05-01"), day("2023-05-08"))
    narrowed = within(MemoryFilter(since=day("2023-05-02"), min_importance=2), last_week)
    assert (narrowed.since, narrowed.until, narrowed.min_importance) == (day("2023-05-02"), day("2023-05-08"), 2)


def test_the_window_follows_the_clock_and_the_margin(clock):
    retriever = time_aware(clock, margin=2)  # a number is days
    assert retriever.window(QUESTION) == TimeWindow(day("2023-04-29"), day("2023-05-10"))
    clock.advance(timedelta(days=7))
    assert retriever.window(QUESTION) == TimeWindow(day("2023-05-06"), day("2023-05-17"))


def test_bad_parameters_raise(clock):
    with pytest.raises(ValueError, match=r"^mode: unknown 'soft'; choose one of boost, filter"):
        time_aware(clock, mode="soft").search(QUESTION, 3)
    with pytest.raises(ValueError, match=r"^margin: -1 must be a timedelta or a number of days >= 0"):
        time_aware(clock, margin=-1).search(QUESTION, 3)
    with pytest.raises(ValueError, match=r"^boost: -0.5 must be a number >= 0"):
        time_aware(clock, boost=-0.5).search(QUESTION, 3)
    with pytest.raises(ValueError, match=r"^clock: TimeAwareRetriever needs a clock"):
        time_aware(None).search(QUESTION, 3)
