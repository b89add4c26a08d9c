"""Notebooks are committed clean: no outputs, no execution counts (CI executes them with nbval).

Strip a notebook with ``jupyter nbconvert --clear-output --inplace notebooks/NAME.ipynb`` (or save it from
JupyterLab after "Clear All Outputs").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def dirty_cells(notebook: dict) -> list[str]:
    """Descriptions of the code cells that carry outputs or an execution count."""
    found = []
    for n, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code":
            continue
        if cell.get("outputs"):
            found.append(f"cell {n}: {len(cell['outputs'])} outputs")
        if cell.get("execution_count") is not None:
            found.append(f"cell {n}: execution_count {cell['execution_count']}")
    return found


def test_the_notebooks_folder_has_notebooks():
    assert NOTEBOOKS, "notebooks/*.ipynb: no notebook found"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path):
    notebook = json.loads(path.read_text(encoding="utf-8"))
    assert notebook["cells"], f"{path.name} has no cells"
    assert dirty_cells(notebook) == [], f"{path.name}: clear the outputs before committing"


def test_dirty_cells_finds_outputs_and_execution_counts():
    notebook = {"cells": [
        {"cell_type": "markdown", "source": "# title"},
        {"cell_type": "code", "execution_count": None, "outputs": [], "source": "1"},
        {"cell_type": "code", "execution_count": 3, "outputs": [{"output_type": "stream", "text": "x"}], "source": "2"},
    ]}  # fmt: skip
    assert dirty_cells(notebook) == ["cell 2: 1 outputs", "cell 2: execution_count 3"]
