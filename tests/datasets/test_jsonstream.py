"""The incremental JSON array reader: same values as json.loads for any chunk size, clear errors."""

from __future__ import annotations

import io
import json

import pytest

from openclaw_lab.datasets.jsonstream import iter_json_array

CASES = [
    "[]",
    " [ ] ",
    "[1]",
    "[1234, 5678]",
    "[-2.5e10, 0, 12345678901234567890]",
    '[true, false, null, "x"]',
    '[{"a": [1, {"b": "c\\"]"}]}, [], {}, "\\u00fc,]"]',
    json.dumps([{"id": i, "text": "é" * i, "nested": [[i]] * 3} for i in range(30)], indent=2),
]


@pytest.mark.parametrize("text", CASES)
@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, 64, 1 << 20])
def test_elements_equal_json_loads_for_any_chunk_size(text, chunk_size):
    assert list(iter_json_array(io.StringIO(text), chunk_size=chunk_size)) == json.loads(text)


def test_reads_a_path(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('[{"k": "v"}, 2]', encoding="utf-8")
    assert list(iter_json_array(path)) == [{"k": "v"}, 2]


def test_stops_reading_when_the_caller_stops():
    stream = io.StringIO('[{"a": 1}, ' + "x" * 100)  # broken after the first element
    elements = iter_json_array(stream, chunk_size=4)
    assert next(elements) == {"a": 1}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected a JSON array starting with '\\[' at offset 0"),
        ('{"a": 1}', "expected a JSON array"),
        ("[1,", "the JSON array ends without '\\]' at offset 3"),
        ("[1 2]", "expected ',' or '\\]' at offset 3, found '2'"),
        ('[{"a": 1}', "expected ',' or '\\]' at offset 9, found ''"),
        ("[1,]", "invalid JSON at offset 3"),
    ],
)
def test_malformed_input_names_the_offset(text, message):
    with pytest.raises(ValueError, match=f"^source: {message}"):
        list(iter_json_array(io.StringIO(text), chunk_size=2))


def test_chunk_size_must_be_positive():
    with pytest.raises(ValueError, match="^chunk_size: 0"):
        list(iter_json_array(io.StringIO("[]"), chunk_size=0))
