"""Read a top-level JSON array one element at a time, so a file of gigabytes needs memory for one element.

>>> import io
>>> list(iter_json_array(io.StringIO('[{"a": 1}, [2, 3], "x"]'), chunk_size=4))
[{'a': 1}, [2, 3], 'x']
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

__all__ = ["iter_json_array"]

_WHITESPACE = " \t\n\r"


def iter_json_array(source: str | Path | IO[str], *, chunk_size: int = 1 << 20) -> Iterator[Any]:
    """Yield the elements of the JSON array in ``source`` (a path or a text stream), one at a time.

    Memory is about one element plus one chunk: the buffer is trimmed after each element, and a read that
    ends inside an element grows (doubles) until the element is complete, so long elements stay linear.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size: {chunk_size} must be at least 1")
    if isinstance(source, (str, Path)):
        with open(source, encoding="utf-8") as handle:
            yield from _elements(handle, chunk_size)
    else:
        yield from _elements(source, chunk_size)


def _elements(handle: IO[str], chunk_size: int) -> Iterator[Any]:
    reader = _Buffer(handle, chunk_size)
    if reader.next_char() != "[":
        raise ValueError(f"source: expected a JSON array starting with '[' at offset {reader.offset}")
    reader.pos += 1
    if reader.next_char() == "]":
        return
    while True:
        yield reader.decode()
        separator, where = reader.next_char(), reader.offset
        reader.pos += 1
        if separator == "]":
            return
        if separator != ",":
            raise ValueError(f"source: expected ',' or ']' at offset {where}, found {separator!r}")


class _Buffer:
    """A sliding text window over a stream with a JSON decoder."""

    def __init__(self, handle: IO[str], chunk_size: int) -> None:
        self.handle, self.chunk_size = handle, chunk_size
        self.text, self.pos, self.dropped = "", 0, 0  # dropped: characters already discarded
        self.decoder = json.JSONDecoder()
        self.eof = False

    @property
    def offset(self) -> int:
        return self.dropped + self.pos

    def _read(self, size: int) -> None:
        chunk = self.handle.read(size)
        self.eof = not chunk
        self.dropped += self.pos
        self.text, self.pos = self.text[self.pos :] + chunk, 0

    def next_char(self) -> str:
        """Skip whitespace; return the next character ('' at the end of the stream)."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.text) or self.eof:
                return self.text[self.pos : self.pos + 1]
            self._read(self.chunk_size)

    def decode(self) -> Any:
        """Decode the element at the cursor, reading more (twice as much each time) until it is complete."""
        size = self.chunk_size
        while True:
            if self.next_char() == "" and self.eof:
                raise ValueError(f"source: the JSON array ends without ']' at offset {self.offset}")
            try:
                value, end = self.decoder.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as error:
                if self.eof:
                    where = self.dropped + error.pos
                    raise ValueError(f"source: invalid JSON at offset {where}: {error.msg}") from error
                self._read(size)
                size *= 2
                continue
            if self._number_may_continue(value, end):
                self._read(size)
                continue
            self.pos = end
            return value

    def _number_may_continue(self, value: Any, end: int) -> bool:
        # A top-level number cut by the window ("-2." of "-2.5e10") decodes as a shorter number.
        if self.eof or isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return end == len(self.text) or self.text[end] not in _WHITESPACE + ",]"
