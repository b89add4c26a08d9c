"""Fuzzed data files end in counted skips or one clear error naming the file, never a traceback, and never
a question count that changes without the load report saying so."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from openclaw_lab.datasets import load_locomo, load_longmemeval
from openclaw_lab.errors import DataError

from .test_locomo import sample

LME = Path(__file__).parent / "fixtures" / "lme_format_tiny.json"
LOCOMO = [sample("conv-1", {1: ("1:56 pm on 8 May, 2023", ["D1:1", "D1:2"]), 2: ("2:00 pm on 9 May, 2023", ["D2:1"])},
                 [{"question": f"q{i}?", "answer": "a", "evidence": ["D1:2"], "category": 1 + i % 5} for i in range(6)])]
REPLACEMENTS = st.sampled_from([None, 7, "", "text", [], {}, ["D9:9"], True, 1.5, "\x00"])


def paths(value, prefix=()):
    """Every (path, value) inside nested lists and dicts."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from paths(item, (*prefix, i))


def mutate(data, path, action, replacement):
    data = copy.deepcopy(data)
    if not path:
        return replacement
    *parent_path, last = path
    parent = data
    for key in parent_path:
        parent = parent[key]
    if action == "drop":
        del parent[last]
    else:
        parent[last] = replacement
    return data


def check(loader, text: str, tmp_path: Path, expected: int) -> None:
    """``expected``: the question records the fuzzed file holds (a dropped record is another, valid file)."""
    file = tmp_path / "fuzzed.json"
    file.write_text(text)
    try:
        bench = loader(file)
    except DataError as error:
        assert str(error).startswith(str(file)), error
        return
    # loaded: every question is there, or the report counts the ones that are not
    assert len(bench.questions) + bench.report.skipped_questions == expected
    for conversation in bench.conversations:
        for turn in (t for s in conversation.sessions for t in s.turns):
            assert isinstance(turn.text, str) and turn.text != "None"


def fuzz_case(data):
    all_paths = list(paths(data))
    return st.tuples(st.sampled_from(all_paths), st.sampled_from(["drop", "replace"]), REPLACEMENTS, st.booleans(),
                     st.integers(1, 400))  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=fuzz_case(LOCOMO))
def test_fuzzed_locomo_files(tmp_path, case):
    path, action, replacement, truncate, cut = case
    if action == "drop" and not path:
        return
    data = mutate(LOCOMO, path, action, replacement)
    expected = sum(len(s["qa"]) for s in data if isinstance(s, dict) and isinstance(s.get("qa"), list)) if isinstance(
        data, list) else 0  # fmt: skip
    text = json.dumps(data)
    check(load_locomo, text[:-cut] if truncate else text, tmp_path, expected)


LME_DATA = json.loads(LME.read_text())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=fuzz_case(LME_DATA))
def test_fuzzed_longmemeval_files(tmp_path, case):
    path, action, replacement, truncate, cut = case
    if action == "drop" and not path:
        return
    data = mutate(LME_DATA, path, action, replacement)
    text = json.dumps(data)
    check(load_longmemeval, text[:-cut] if truncate else text, tmp_path, len(data) if isinstance(data, list) else 0)
