"""Every guide in docs/ is run, so the documentation cannot drift from the code.

On each page, in order and in a fresh folder (with copies of the repository's ``experiments/`` and ``datasets/``
in it): a code block with a ``title="path"`` is written to that path; a ``python`` block is executed, all of a
page's blocks in one namespace; a ``bash`` block's ``openclaw-lab`` commands are run through the CLI's
``main`` and must exit 0; a ``yaml`` block must parse. A block that cannot run here (it installs packages,
needs the internet or takes an hour) is preceded by ``<!-- not run: why -->``; any other bash command fails
the test, so nothing is skipped silently.
"""

from __future__ import annotations

import glob
import re
import shlex
import shutil
from pathlib import Path

import pytest
import yaml

from openclaw_lab.harness import registry
from tests.harness.test_qa import stub  # noqa: F401 - the fixture: an OpenAI-compatible stub server

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BLOCK = re.compile(
    r"(?P<skip><!-- not run: (?P<why>[^>]*) -->\n)?"
    r"^```(?P<lang>\w+)(?: +title=\"(?P<title>[^\"]+)\")?\n(?P<body>.*?)^```$",
    re.MULTILINE | re.DOTALL,
)
RUNNABLE = ("python", "bash", "yaml")


def blocks(page: Path) -> list[re.Match]:
    return list(BLOCK.finditer(page.read_text()))


def pages() -> list[Path]:
    found = [p for p in sorted(DOCS.rglob("*.md")) if "notebooks" not in p.parts]
    return [p for p in found if any(b["lang"] in RUNNABLE or b["title"] for b in blocks(p))]


def test_pages_are_found():
    names = {p.relative_to(DOCS).as_posix() for p in pages()}
    assert {"getting-started.md", "how-to/retrieval-strategy.md", "how-to/gate-in-ci.md"} <= names


def test_skipped_blocks_say_why():
    for page in pages():
        for block in blocks(page):
            assert block["skip"] is None or block["why"].strip(), f"{page}: a block is skipped without a reason"


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_runs(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, stub):
    monkeypatch.setenv("LLM_BASE_URL", stub.url())  # the QA guide's server: a stub, as no LLM runs here
    for kind in vars(registry).values():  # what a guide registers is gone after it: other tests list the names
        if isinstance(kind, registry.Registry):
            monkeypatch.setattr(kind, "_own", dict(kind._own))
    for shared in ("experiments", "datasets"):  # copies: a page writes its own files into experiments/
        shutil.copytree(ROOT / shared, tmp_path / shared)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    for block in blocks(page):
        if block["skip"]:
            continue
        where = f"{page.relative_to(ROOT)}:{page.read_text()[: block.start()].count(chr(10)) + 1}"
        if block["title"]:
            target = tmp_path / block["title"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block["body"])
            if block["lang"] == "yaml":
                assert yaml.safe_load(block["body"]), where
        elif block["lang"] == "python":
            exec(compile(block["body"], where, "exec"), namespace)  # noqa: S102 - the page's own code
        elif block["lang"] == "bash":
            for command in _commands(block["body"]):
                _run_cli(command, where)
        elif block["lang"] == "yaml":
            assert yaml.safe_load(block["body"]), where
    capsys.readouterr()


def _commands(body: str) -> list[str]:
    joined = re.sub(r"\\\n\s*", " ", body)
    lines = [line.split(" #")[0].strip() for line in joined.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _run_cli(command: str, where: str) -> None:
    from openclaw_lab.cli import main

    words = shlex.split(command)
    assert words[0] == "openclaw-lab", f"{where}: {command!r} is not an openclaw-lab command; mark the block not run"
    args = [match for word in words[1:] for match in (sorted(glob.glob(word)) if "*" in word else [word])]
    code = main(args)
    assert code == 0, f"{where}: {command} exited {code}"
