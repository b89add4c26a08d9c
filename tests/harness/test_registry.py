"""The registry: one table of names per kind, open to other packages through entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from openclaw_lab.errors import ConfigError
from openclaw_lab.harness import registry

PLUGIN = '''
from openclaw_lab.retrieval.bm25 import BM25Retriever


class ShortBM25(BM25Retriever):
    """BM25 that returns at most ``cap`` hits: a strategy that lives in another package."""

    def __init__(self, cap: int = 3) -> None:
        super().__init__()
        self.cap = cap

    def search(self, query, k, filter=None):
        return super().search(query, min(k, self.cap), filter)
'''


def install_plugin(folder: Path, name: str = "short-bm25", module: str = "my_plugin", code: str = PLUGIN) -> Path:
    """A package ``module`` and its installed metadata (a dist-info folder whose entry point names its strategy)
    in ``folder``, as pip leaves them: ``folder`` on the path makes it an installed distribution."""
    (folder / module).mkdir(parents=True)
    (folder / module / "__init__.py").write_text(textwrap.dedent(code))
    info = folder / f"{module}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[openclaw_lab.strategies]\n{name} = {module}:ShortBM25\n")
    return folder


def test_an_entry_point_of_another_package_is_a_strategy(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(install_plugin(tmp_path)))
    monkeypatch.setattr(registry.retrievers, "_plugins", None)  # read the entry points again
    assert "short-bm25" in registry.retrievers.names()
    assert registry.retrievers.get("short-bm25").__name__ == "ShortBM25"
    unknown = r"^systems\[0\]\.strategy: unknown strategy 'short-bm26'; did you mean 'short-bm25'"
    with pytest.raises(ConfigError, match=unknown):
        registry.retrievers.get("short-bm26", field="systems[0].strategy")


def test_a_plugin_name_that_clashes_with_ours_is_refused(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(install_plugin(tmp_path, name="bm25")))
    monkeypatch.setattr(registry.retrievers, "_plugins", None)
    with pytest.raises(ValueError, match=r"openclaw_lab\.strategies: the plugin name 'bm25' .* is already registered"):
        registry.retrievers.names()


def test_a_plugin_that_cannot_be_loaded_names_its_entry(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(install_plugin(tmp_path, module="broken_plugin", code="")))  # no class in it
    monkeypatch.setattr(registry.retrievers, "_plugins", None)
    with pytest.raises(ConfigError, match=r"strategy 'short-bm25' points at 'broken_plugin:ShortBM25', which cannot"):
        registry.retrievers.get("short-bm25")


def test_a_plugin_strategy_runs_from_a_toml(tmp_path):
    """The CLI of a fresh process finds the installed plugin and scores it beside ours."""
    install_plugin(tmp_path / "site")
    config = tmp_path / "plugin.toml"
    config.write_text(textwrap.dedent("""
        name = "plugin"
        [dataset]
        name = "synthetic"
        params = { n_turns = 200, n_conversations = 1, seed = 3 }
        [[systems]]
        name = "bm25"
        strategy = "bm25"
        [[systems]]
        name = "short"
        strategy = "short-bm25"
        params = { cap = 1 }
        [metrics]
        k = [1, 5]
    """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), *sys.path])}
    subprocess.run([sys.executable, "-m", "openclaw_lab.cli", "run", str(config), "--results", str(tmp_path / "out")],
                   env=env, check=True, capture_output=True, text=True)  # fmt: skip
    metrics = json.loads(next((tmp_path / "out" / "plugin").glob("*/metrics.json")).read_text())["systems"]
    assert metrics["short"]["turn.recall@1"] == pytest.approx(metrics["bm25"]["turn.recall@1"])
    assert metrics["short"]["turn.recall@5"] < metrics["bm25"]["turn.recall@5"]  # one hit each: the cap holds


def test_every_kind_has_its_own_entry_point_group():
    groups = [kind.group for kind in registry.KINDS.values()]
    assert len(set(groups)) == len(groups) and all(g.startswith("openclaw_lab.") for g in groups)
    assert registry.KINDS["consolidation step"].names()[:4] == ["summaries", "merge", "supersession", "expiry"]
