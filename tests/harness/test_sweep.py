import pandas as pd
import pytest

from openclaw_lab.harness.config import ExperimentConfig
from openclaw_lab.harness.metrics import pareto_front, recall_at_footprint
from openclaw_lab.harness.sweep import grid


def test_grid_is_the_cartesian_product():
    config = ExperimentConfig.from_dict(
        {"name": "s", "sweep": {"consolidation.threshold": [0.1, 0.2], "consolidation.law": ["seed", "none"]}}
    )
    assert len(grid(config)) == 4
    assert {"consolidation.threshold": 0.2, "consolidation.law": "none"} in grid(config)
    with pytest.raises(ValueError, match="^sweep"):
        grid(ExperimentConfig.from_dict({"name": "s"}))


def test_pareto_front_by_hand():
    points = pd.DataFrame({"footprint": [0.2, 0.4, 0.5, 0.6, 0.9], "recall": [0.5, 0.7, 0.6, 0.8, 0.8]})
    front = pareto_front(points)
    assert front["footprint"].tolist() == [0.2, 0.4, 0.6]  # 0.5 is beaten by 0.4; 0.9 by 0.6
    assert recall_at_footprint(points, 0.45) == 0.7
