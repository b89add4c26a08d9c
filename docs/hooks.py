"""MkDocs hooks: reference pages generated from the code, and links to the repository's own files.

- ``<!-- cli-reference -->`` becomes every command's ``--help``, from the CLI's argparse parser.
- ``<!-- config-reference -->`` becomes a table per TOML table, from the config classes (``harness.schema``).
- A relative link that leaves ``docs/`` (a run's report, an experiment file) must name a file of the
  repository: a missing one is a warning, which ``mkdocs build --strict`` turns into a failure. Such links
  work as written on a code host; in the built site they point at ``repo_url`` when it is set, and are shown
  as the path otherwise (the site has no copy of the results folders).
- An image outside ``docs/`` (a committed figure) is copied into the site under ``repo/``.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.openclaw")
ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"(?<!!)\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)\)")
IMAGE = re.compile(r"!\[(?P<text>[^\]]*)\]\((?P<target>[^)\s]+)\)")
COPIES = "repo"  # where images of the repository are copied in the site


def on_files(files, config):
    """Images the pages show from outside docs/, added to the site as files of their own."""
    from mkdocs.structure.files import File

    for page in files.documentation_pages():
        for match in IMAGE.finditer(Path(page.abs_src_path).read_text()):
            resolved = _outside_docs(match["target"], Path(page.abs_src_path).parent, config)
            if resolved and resolved.exists() and files.get_file_from_path(_copy_uri(resolved)) is None:
                files.append(File.generated(config, _copy_uri(resolved), abs_src_path=str(resolved)))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if "<!-- cli-reference -->" in markdown:
        markdown = markdown.replace("<!-- cli-reference -->", _cli_reference())
    if "<!-- config-reference -->" in markdown:
        markdown = markdown.replace("<!-- config-reference -->", _config_reference())
    markdown = IMAGE.sub(lambda match: _repo_image(match, page, config), markdown)
    return LINK.sub(lambda match: _repo_link(match, page, config), markdown)


def _outside_docs(target: str, source: Path, config) -> Path | None:
    """The repository file a relative link names, when it lies outside docs/ (None otherwise)."""
    if re.match(r"^[a-z]+:|^#|^/", target):
        return None
    resolved = (source / target.partition("#")[0]).resolve()
    docs = Path(config["docs_dir"]).resolve()
    return None if resolved.is_relative_to(docs) or not resolved.is_relative_to(ROOT) else resolved


def _copy_uri(resolved: Path) -> str:
    """Where the site holds its copy of a repository image."""
    return f"{COPIES}/{resolved.relative_to(ROOT).as_posix()}"


def _repo_image(match: re.Match, page, config) -> str:
    resolved = _outside_docs(match["target"], Path(page.file.abs_src_path).parent, config)
    if resolved is None:
        return match[0]
    if not resolved.exists():
        log.warning("%s: the image %r is not in the repository", page.file.src_path, match["target"])
        return match[0]
    depth = page.file.src_uri.count("/")
    return f"![{match['text']}]({'../' * depth}{_copy_uri(resolved)})"


def _repo_link(match: re.Match, page, config) -> str:
    target = match["target"]
    resolved = _outside_docs(target, Path(page.file.abs_src_path).parent, config)
    if resolved is None:
        return match[0]  # mkdocs checks links between pages itself
    anchor = target.partition("#")[2]
    relative = resolved.relative_to(ROOT).as_posix()
    if not resolved.exists():
        log.warning("%s: the link %r names %s, which is not in the repository", page.file.src_path, target, relative)
        return match[0]
    if config.get("repo_url"):
        kind = "tree" if resolved.is_dir() else "blob"
        url = posixpath.join(config["repo_url"], kind, "main", relative) + (f"#{anchor}" if anchor else "")
        return f"[{match['text']}]({url})"
    text = match["text"]
    return text if text.startswith("`") else f"{text} (`{relative}`)"


def _cli_reference() -> str:
    from openclaw_lab.cli import build_parser

    parser = build_parser()
    commands = next(action for action in parser._actions if action.choices and action.dest == "command")
    parts = [f"```text\n{_help(parser)}```"]
    for name, sub in commands.choices.items():
        parts.append(f"## `openclaw-lab {name}`\n\n```text\n{_help(sub)}```")
    return "\n\n".join(parts)


def _help(parser) -> str:
    from unittest import mock

    with mock.patch.dict("os.environ", {"COLUMNS": "110"}):  # argparse wraps at the terminal's width: a fixed one
        return parser.format_help()


def _cell(text: str) -> str:
    """A table cell in Markdown: pipes escaped, reST's double backticks single, no stray HTML."""
    return text.replace("|", "\\|").replace("``", "`").replace("<", "&lt;")


def _config_reference() -> str:
    from openclaw_lab.harness.schema import sections, settings

    rows: dict[str, list[str]] = {}
    for setting in settings():
        table = setting.path.partition(".")[0] if "." in setting.path else ""
        default = f"`{setting.default}`" if setting.default else "(required)"
        row = f"| `{setting.path}` | {setting.type} | {default} | {_cell(setting.description)} |"
        rows.setdefault(table, []).append(row)
    out = []
    docs = sections()
    for table, lines in rows.items():
        title = "Top level" if not table else ("`[[systems]]`" if table == "systems" else f"`[{table}]`")
        intro = docs.get(table, "").replace("``", "`")
        header = "| setting | type | default | what it sets |\n|:--|:--|:--|:--|"
        out.append(f"## {title}\n\n{intro}\n\n{header}\n" + "\n".join(lines))
    return "\n\n".join(out)
