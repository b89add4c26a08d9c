"""A griffe extension for the API pages: a docstring's doctest lines (``>>>`` and their output) are shown as
code. Without it, Markdown reads ``[x for x in …]`` in an example as a link."""

from __future__ import annotations

import griffe


class DoctestFences(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)


def fence_doctests(text: str) -> str:
    out, in_example = [], False
    for line in text.splitlines():
        starts = line.lstrip().startswith(">>>")
        if starts and not in_example:
            out.append("```pycon")
            in_example = True
        elif in_example and not line.strip():
            out.append("```")
            in_example = False
        out.append(line)
    if in_example:
        out.append("```")
    return "\n".join(out)
