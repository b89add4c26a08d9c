from openclaw_lab.datasets.synthetic import generate
from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.experiment import run_experiment


def test_the_learned_reranker_never_scores_a_conversation_it_was_fitted_on(embedder):
    benchmark = generate(400, seed=5, n_conversations=4)
    config = ExperimentConfig.from_dict({
        "name": "crossfit",
        "memory": {"simulate_access": False},
        "systems": [{"name": "hybrid", "strategy": "hybrid"},
                    {"name": "learned", "strategy": "learned-crossfit", "params": {"folds": 2}}],
        "metrics": {"k": [1, 10]},
    })  # fmt: skip
    result = run_experiment(config, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    folds = result.models["learned"]
    assert len(folds) == 2
    for fold in folds:
        assert not set(fold["trained_on"]) & set(fold["tested_on"])
    assert sorted(c for fold in folds for c in fold["tested_on"]) == sorted(c.id for c in benchmark.conversations)
    assert set(result.runs["learned.turn"]) == set(result.qrels["turn"])  # every question answered once
    # measured: on this synthetic set the fitted reranker is at least as good as its first stage at rank 1
    assert result.metrics["learned"]["turn.recall@1"] >= result.metrics["hybrid"]["turn.recall@1"] - 0.05


def test_the_first_stage_sources_are_features_and_are_checked(embedder):
    import pytest

    from openclaw_lab.retrieval.crossfit import CrossFittedReranker

    benchmark = generate(300, seed=6, n_conversations=3)
    config = ExperimentConfig.from_dict({
        "name": "crossfit-sources", "memory": {"simulate_access": False}, "metrics": {"k": [10]},
        "systems": [{"name": "learned", "strategy": "learned-crossfit",
                     "params": {"folds": 3, "sources": ["dense", "bm25", "context"]}}],
    })  # fmt: skip
    result = run_experiment(config, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    assert set(result.runs["learned.turn"]) == set(result.qrels["turn"])
    for bad in (["dense", "colbert"], [], "dense"):
        with pytest.raises(ValueError, match="^sources"):
            CrossFittedReranker(embedder, sources=bad)
    with pytest.raises(ValueError, match="^length"):
        CrossFittedReranker(embedder, length="yes")
    with pytest.raises(ValueError, match="^session"):
        CrossFittedReranker(embedder, session=1)


def test_the_reranker_reads_more_candidates_than_the_run_keeps(embedder):
    benchmark = generate(300, seed=6, n_conversations=3)
    config = ExperimentConfig.from_dict({
        "name": "crossfit-candidates", "memory": {"simulate_access": False}, "metrics": {"k": [10], "depth": 10},
        "systems": [{"name": f"learned-{n}", "strategy": "learned-crossfit", "params": {"folds": 3, "candidates": n}}
                    for n in (10, 30)],
    })  # fmt: skip
    result = run_experiment(config, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    for n in (10, 30):
        assert max(len(ranked) for ranked in result.runs[f"learned-{n}.turn"].values()) == 10  # the run's depth
        rows_per_query = [fold["candidates"] / fold["queries"] for fold in result.models[f"learned-{n}"]]
        assert max(rows_per_query) <= n
    assert min(fold["candidates"] / fold["queries"] for fold in result.models["learned-30"]) > 10


def test_the_fine_tuned_encoder_never_ranks_a_conversation_it_was_fitted_on(embedder, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path))  # where the fold models are saved
    benchmark = generate(300, seed=7, n_conversations=3)
    config = ExperimentConfig.from_dict({
        "name": "finetuned", "memory": {"simulate_access": False}, "metrics": {"k": [1, 10]},
        "systems": [{"name": "finetuned", "strategy": "finetuned-crossfit", "params": {"folds": 3, "batch_size": 8}},
                    {"name": "fused", "strategy": "learned-crossfit",
                     "params": {"folds": 3, "finetuned": 1.0,
                                "finetune": {"batch_size": 8, "ranker": "hybrid-context"}}}],
    })  # fmt: skip
    result = run_experiment(config, results_dir=None, embedder=embedder, benchmark=benchmark, progress=False)
    folds = result.models["finetuned"]
    assert len({fold["model"] for fold in folds}) == 3  # one fitted copy per fold
    for fold in folds:
        assert not set(fold["trained_on"]) & set(fold["tested_on"])
    assert sorted(c for fold in folds for c in fold["tested_on"]) == sorted(c.id for c in benchmark.conversations)
    for name in ("finetuned", "fused"):
        assert set(result.runs[f"{name}.turn"]) == set(result.qrels["turn"])  # every question answered once
    # the fused reranker's folds name the encoder fitted on the same training conversations
    for fold in result.models["fused"]:
        assert fold["encoder"]["trained_on"] == fold["trained_on"] and fold["finetuned"] == 1.0
    # same settings and first stage (the ranker aside): the fused reranker reuses the three models, fitted once
    assert [fold["encoder"]["model"] for fold in result.models["fused"]] == [fold["model"] for fold in folds]
    assert len(list((tmp_path / "finetuned").iterdir())) == 3


def test_fine_tuning_settings_are_checked_by_name(embedder):
    import pytest

    from openclaw_lab.retrieval.crossfit import CrossFittedEncoder, CrossFittedReranker

    with pytest.raises(ValueError, match="^finetuned"):
        CrossFittedReranker(embedder, finetuned=-1)
    with pytest.raises(ValueError, match="^finetune: set only with finetuned"):
        CrossFittedReranker(embedder, finetune={"epochs": 2})
    with pytest.raises(ValueError, match="^finetune: .*epoch"):
        CrossFittedReranker(embedder, finetuned=1.0, finetune={"epoch": 2})
    with pytest.raises(ValueError, match="^learning_rate"):
        CrossFittedReranker(embedder, finetuned=1.0, finetune={"learning_rate": 0})
    with pytest.raises(ValueError, match="^negatives_from"):
        CrossFittedEncoder(embedder, negatives_from=0)
    with pytest.raises(ValueError, match="^sources"):
        CrossFittedEncoder(embedder, sources=["colbert"])
    with pytest.raises(ValueError, match="^ranker: 'bm25' is not one of dense, context, hybrid-context"):
        CrossFittedEncoder(embedder, ranker="bm25")
    with pytest.raises(ValueError, match="^positives: 'session' is not one of turns, sessions"):
        CrossFittedEncoder(embedder, positives="session")
