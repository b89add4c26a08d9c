"""The import picture: no circle among the package's modules, and config names resolved only at the top."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "openclaw_lab"


def module_imports() -> dict[str, set[str]]:
    """Each module of the package and the package modules it imports (at any depth of its code)."""
    modules = {".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__"): p
               for p in PACKAGE.rglob("*.py")}  # fmt: skip
    graph = {}
    for name, path in modules.items():
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                candidates = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            else:
                continue
            found |= {c for c in candidates if c in modules and c != name}
        graph[name] = found
    return graph


def test_no_module_imports_itself_through_a_circle():
    graph = module_imports()
    packages = {name for name in graph if (PACKAGE.parent / name.replace(".", "/") / "__init__.py").exists()}
    edges = {name: {t for t in targets if t not in packages} for name, targets in graph.items()}  # re-exports aside
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in edges[node]:
            if state.get(target) == 1:
                raise AssertionError(f"import circle: {' -> '.join(path[path.index(target):] + [target])}")
            if target not in state:
                visit(target, path + [target])
        state[node] = 2

    for name in edges:
        if name not in state:
            visit(name, [name])


def test_the_registry_is_imported_only_by_the_harness_and_the_cli():
    users = {name for name, targets in module_imports().items() if "openclaw_lab.harness.registry" in targets}
    assert users and all(name.startswith("openclaw_lab.harness") or name == "openclaw_lab.cli" for name in users), users


def test_nothing_below_the_harness_imports_it():
    below = {name: targets for name, targets in module_imports().items()
             if not name.startswith("openclaw_lab.harness") and name != "openclaw_lab.cli"}  # fmt: skip
    offenders = {name for name, targets in below.items() if any(t.startswith("openclaw_lab.harness") for t in targets)}
    assert not offenders


def test_the_default_path_never_imports_ray_or_onnx():
    """A local run builds and replays without the optional engines and encoders, installed or not."""
    import subprocess
    import sys

    code = ("import sys; from openclaw_lab.harness import ExperimentConfig, build, run_sweep; "
            "build(ExperimentConfig.from_dict({'name': 'x', 'dataset': {'name': 'synthetic'}})); "
            "print(sorted(m for m in ('ray', 'onnx', 'openclaw_lab.encoders') if m in sys.modules))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"
