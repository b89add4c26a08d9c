"""How far a reader travels following one experiment from ``openclaw-lab run`` into the replay and the results.

Runs the CLI on a small experiment under a profiler and keeps, in the order they are first called, the
package's functions (each is read once, as a reader would). Between them it counts:

- files: the distinct files read;
- returns: calls that enter a file the reader had already left (A -> B -> A counts one);
- climbs: calls from a lower layer into a higher one (a callback: consolidation calling back into the harness);
- the harness's share of the package's lines.

By default only the composition is followed: modules from the consolidation layer up (``--lowest 0``: all).

    python scripts/reading_path.py                       # this checkout
    python scripts/reading_path.py --root ../other-tree  # another checkout (run with that tree on the path)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap
from pathlib import Path

# lower layers first; a module's layer is the first prefix it matches
LAYERS = [
    ("openclaw_lab.errors", 0), ("openclaw_lab.clock", 0), ("openclaw_lab.model", 0), ("openclaw_lab.text", 0),
    ("openclaw_lab.stores", 1), ("openclaw_lab.encoders", 1), ("openclaw_lab.embedding", 1), ("openclaw_lab.splade", 1),
    ("openclaw_lab.llm", 1), ("openclaw_lab.tiers", 2), ("openclaw_lab.datasets", 2), ("openclaw_lab.retrieval", 3),
    ("openclaw_lab.consolidation", 4), ("openclaw_lab.manager", 5), ("openclaw_lab.agent", 6),
    ("openclaw_lab.replay", 7), ("openclaw_lab.peers", 8), ("openclaw_lab.engines", 8),
    ("openclaw_lab.harness", 9), ("openclaw_lab.cli", 10),
]  # fmt: skip

EXPERIMENT = """
name = "reading"
[dataset]
name = "synthetic"
params = { n_turns = 300, n_conversations = 2, seed = 1 }
[memory]
store = "exact"
unit = "turn"
[consolidation]
enabled = true
interval_hours = 24
merge = {}
supersession = { strategy = "pairs" }
expiry = {}
[[systems]]
name = "bm25"
strategy = "bm25"
[[systems]]
name = "dense"
strategy = "dense"
superseded = "below-successor"
[metrics]
k = [1, 5, 10]
"""


def layer(module: str) -> int:
    return next((rank for prefix, rank in LAYERS if module == prefix or module.startswith(prefix + ".")), 5)


def trace(root: Path) -> list[tuple[str, str, str]]:
    """(caller module, callee module, callee function) of each package function's first call, in order."""
    from openclaw_lab.cli import main

    package = str(root / "openclaw_lab")
    seen, calls = set(), []

    def profile(frame, event, arg):
        if event != "call" or not frame.f_code.co_filename.startswith(package):
            return
        code = frame.f_code
        if code in seen or code.co_name.startswith("<"):  # lambdas and comprehensions are read with their function
            return
        seen.add(code)
        caller = frame.f_back
        while caller is not None and (not caller.f_code.co_filename.startswith(package)
                                      or caller.f_code.co_name.startswith("<")):  # fmt: skip
            caller = caller.f_back
        module = frame.f_globals.get("__name__", "")
        calls.append((caller.f_globals.get("__name__", "") if caller else "", module, code.co_qualname))

    with tempfile.TemporaryDirectory() as scratch:
        config = Path(scratch) / "reading.toml"
        config.write_text(textwrap.dedent(EXPERIMENT))
        sys.setprofile(profile)
        try:
            main(["run", str(config), "--results", scratch])
        finally:
            sys.setprofile(None)
    return calls


def composing(calls: list[tuple[str, str, str]], lowest: int) -> list[tuple[str, str, str]]:
    """The calls a reader of the composition follows: into modules of layer ``lowest`` and above (the layers
    below, stores, tiers, retrieval, are parts read on their own)."""
    return [call for call in calls if layer(call[1]) >= lowest]


def counts(calls: list[tuple[str, str, str]]) -> dict[str, int]:
    left, current, returns, climbs = set(), None, 0, 0
    for caller, callee, _ in calls:
        if callee != current:
            if callee in left:
                returns += 1
            if current is not None:
                left.add(current)
            current = callee
        if caller and layer(callee) > layer(caller):
            climbs += 1
    return {"files": len({callee for _, callee, _ in calls}), "returns": returns, "climbs": climbs}


def harness_share(root: Path) -> tuple[int, int]:
    package = root / "openclaw_lab"
    lines = {p: len(p.read_text().splitlines()) for p in package.rglob("*.py")}
    harness = sum(n for p, n in lines.items() if (package / "harness") in p.parents)
    return harness, sum(lines.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--show", action="store_true", help="print every call followed, marking the climbs")
    parser.add_argument("--lowest", type=int, default=4, help="the lowest layer followed (4: consolidation; 0: all)")
    args = parser.parse_args()
    root = args.root.resolve()
    sys.path.insert(0, str(root))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    calls = composing(trace(root), args.lowest)
    if args.show:
        for caller, callee, name in calls:
            mark = " CLIMB" if caller and layer(callee) > layer(caller) else ""
            print(f"{caller:45} -> {callee}:{name}{mark}")
    harness, total = harness_share(root)
    figures = counts(calls)
    print(f"functions read: {len(calls)}; files: {figures['files']}; returns into a file already left: "
          f"{figures['returns']}; climbs up a layer: {figures['climbs']}; harness lines: {harness} of {total} "
          f"({harness / total:.1%})")


if __name__ == "__main__":
    main()
