"""The experiment TOML's settings, read from the config classes themselves (for the reference page).

Each setting's description is the comment written beside (or just above) its field in ``harness/config.py``,
so the reference cannot drift from the code.

>>> setting = next(s for s in settings() if s.path == "memory.access_k")
>>> setting.type, setting.default
('an integer', '3')
>>> next(s for s in settings() if s.path == "memory.unit").description
'"turn", "round" (two turns), "session" or "user-session" (LongMemEval\\'s key)'
"""

from __future__ import annotations

import inspect
import json
import re
import typing
from collections.abc import Iterator
from dataclasses import MISSING, dataclass, fields

from openclaw_lab.harness.config import ExperimentConfig, _describe

__all__ = ["Setting", "settings", "sections"]

_FIELD = re.compile(r"^\s+(\w+): [^=#]+(?:=[^#]*)?(?:#\s*(?P<comment>.*))?$")
_COMMENT = re.compile(r"^\s+#\s?(?P<text>.*)$")


@dataclass(frozen=True)
class Setting:
    path: str  # e.g. "memory.access_k"
    type: str  # in words: "an integer", "a string or nothing"
    default: str  # as TOML would write it; "" when the setting is required
    description: str


def sections() -> dict[str, str]:
    """Each top-level table of an experiment and the docstring of its config class ("" when it has none)."""
    hints = typing.get_type_hints(ExperimentConfig)
    out = {}
    for spec in fields(ExperimentConfig):
        cls = _config_class(hints[spec.name])
        doc = (cls.__doc__ or "") if cls else ""
        generated = not cls or doc.startswith(f"{cls.__name__}(")  # no docstring: dataclass writes the signature
        out[spec.name] = "" if generated else inspect.cleandoc(doc)
    return out


def settings() -> Iterator[Setting]:
    """Every setting of an experiment, table by table, in the order the config classes declare them."""
    hints = typing.get_type_hints(ExperimentConfig)
    yield from _settings_of(ExperimentConfig, "", top_level=True)
    for spec in fields(ExperimentConfig):
        if cls := _config_class(hints[spec.name]):
            yield from _settings_of(cls, f"{spec.name}.")


def _config_class(hint) -> type | None:
    if typing.get_origin(hint) is tuple:  # [[systems]]: a list of tables
        hint = typing.get_args(hint)[0]
    return hint if inspect.isclass(hint) and hasattr(hint, "__dataclass_fields__") else None


def _settings_of(cls: type, prefix: str, top_level: bool = False) -> Iterator[Setting]:
    hints = typing.get_type_hints(cls)
    comments = _comments(cls)
    for spec in fields(cls):
        if top_level and _config_class(hints[spec.name]):
            continue
        yield Setting(prefix + spec.name, _describe(hints[spec.name]), _default(spec), comments.get(spec.name, ""))


def _default(spec) -> str:
    if spec.default is not MISSING:
        value = spec.default
    elif spec.default_factory is not MISSING:
        value = spec.default_factory()
    else:
        return ""
    if value is None:
        return "(the library's default)"
    return json.dumps(list(value) if isinstance(value, tuple) else value)


def _comments(cls: type) -> dict[str, str]:
    """Field name -> the comment beside it, or the comment lines just above it."""
    out: dict[str, str] = {}
    above: list[str] = []
    for line in inspect.getsource(cls).splitlines():
        if match := _COMMENT.match(line):
            above.append(match["text"].strip())
        elif match := _FIELD.match(line):
            out[match[1]] = " ".join([*above, match["comment"] or ""]).strip()
            above = []
        else:
            above = []
    return out
