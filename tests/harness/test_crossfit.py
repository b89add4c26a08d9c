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

    from openclaw_lab.harness.crossfit import CrossFittedReranker

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
