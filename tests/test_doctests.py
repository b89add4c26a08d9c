"""Every docstring example in the package runs and prints what it shows (the examples are documentation)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "openclaw_lab"
MODULES = sorted(
    ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__") for p in PACKAGE.rglob("*.py")
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, tmp_path, monkeypatch):
    monkeypatch.chdir(PACKAGE.parent)  # examples name repository paths (tests/datasets/fixtures/…)
    monkeypatch.setenv("OPENCLAW_LAB_CACHE", str(tmp_path))
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed (run python -m doctest -v)"
