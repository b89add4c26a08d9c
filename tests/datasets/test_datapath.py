"""The data path: lookup order, the missing-file message, checksums, and a download that fails fast."""

from __future__ import annotations

import hashlib
import http.server
import json
import socket
import threading
from pathlib import Path

import pytest

from openclaw_lab.datasets import datapath, load_locomo
from openclaw_lab.datasets.datapath import (
    ChecksumMismatch,
    ChecksumWarning,
    DataFile,
    DatasetNotFound,
    DownloadError,
    check_sha256,
    download,
    find_dataset,
    sha256_file,
)

LOCOMO = datapath.DATA_FILES["locomo/locomo10.json"]


@pytest.fixture
def empty_repo(tmp_path, monkeypatch) -> Path:
    """No OPENCLAW_LAB_DATA, and an empty repository datasets/ folder."""
    repo = tmp_path / "repo-datasets"
    repo.mkdir()
    monkeypatch.delenv("OPENCLAW_LAB_DATA", raising=False)
    monkeypatch.setattr(datapath, "REPO_DATASETS", repo)
    return repo


def put(root: Path, name: str, filename: str, data: bytes = b"[]") -> Path:
    path = root / name / filename
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_the_environment_comes_before_the_repository(tmp_path, empty_repo, monkeypatch):
    first, second = tmp_path / "first", tmp_path / "second"
    in_repo = put(empty_repo, "locomo", "locomo10.json")
    assert find_dataset("locomo") == in_repo
    in_second = put(second, "locomo", "locomo10.json")
    monkeypatch.setenv("OPENCLAW_LAB_DATA", f"{first}:{second}")
    assert find_dataset("locomo") == in_second
    in_first = put(first, "locomo", "locomo10.json")
    assert find_dataset("locomo") == in_first
    assert datapath.data_roots() == [first, second, empty_repo]


def test_a_missing_file_says_where_to_get_it_and_where_to_put_it(empty_repo):
    with pytest.raises(DatasetNotFound) as caught:
        find_dataset("locomo")
    message = str(caught.value)
    assert isinstance(caught.value, FileNotFoundError)
    assert LOCOMO.url in message
    assert "CC BY-NC 4.0" in message
    assert str(empty_repo / "locomo" / "locomo10.json") in message
    assert "OPENCLAW_LAB_DATA" in message and "datasets/locomo/CARD.md" in message


def test_a_missing_longmemeval_split_names_its_address(empty_repo):
    with pytest.raises(DatasetNotFound, match="longmemeval_oracle"):
        find_dataset("longmemeval", "longmemeval_oracle.json")


def test_an_unknown_dataset_needs_a_filename(empty_repo):
    with pytest.raises(ValueError, match="^filename: .*'nope'"):
        find_dataset("nope")
    with pytest.raises(DatasetNotFound, match="^nope: data.json .*Put it at"):
        find_dataset("nope", "data.json")


def test_sha256_file_matches_hand_and_hashlib_values(tmp_path):
    small = tmp_path / "abc"
    small.write_bytes(b"abc")
    assert sha256_file(small) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    large = tmp_path / "large"
    data = bytes(range(256)) * 9000  # 2.2 MiB: crosses the 1 MiB block boundary
    large.write_bytes(data)
    assert sha256_file(large) == hashlib.sha256(data).hexdigest()


def test_a_checksum_mismatch_warns_or_raises_when_strict(tmp_path):
    path = put(tmp_path, "locomo", "locomo10.json", b"[]")
    with pytest.warns(ChecksumWarning, match="sha256 mismatch") as warned:
        actual, note = check_sha256(path, "locomo")
    assert actual == hashlib.sha256(b"[]").hexdigest()
    assert LOCOMO.sha256 in note and actual in note and len(warned) == 1
    with pytest.raises(ChecksumMismatch, match=LOCOMO.sha256):
        check_sha256(path, "locomo", strict=True)


def test_a_matching_or_unpinned_file_has_no_note(tmp_path, monkeypatch, recwarn):
    path = put(tmp_path, "toy", "toy.json", b"[1]")
    monkeypatch.setitem(
        datapath.DATA_FILES, "toy/toy.json", DataFile("toy", "toy.json", "http://x", hashlib.sha256(b"[1]").hexdigest())
    )
    assert check_sha256(path, "toy") == (hashlib.sha256(b"[1]").hexdigest(), "")
    other = put(tmp_path, "locomo", "my_subset.json", b"[]")  # not the pinned file name: nothing to compare
    assert check_sha256(other, "locomo")[1] == ""
    assert not recwarn.list


def test_the_locomo_loader_records_a_mismatch_in_its_report(tmp_path):
    sample = {
        "sample_id": "conv-1",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "hi"}],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
        },
        "qa": [],
    }
    path = put(tmp_path, "locomo", "locomo10.json", json.dumps([sample]).encode())
    with pytest.warns(ChecksumWarning):
        bench = load_locomo(path)
    assert bench.sha256 == sha256_file(path)
    assert any("sha256 mismatch" in note for note in bench.report.notes)
    with pytest.raises(ChecksumMismatch):
        load_locomo(path, strict=True)


@pytest.fixture
def silent_server():
    """A TCP server that accepts connections and never answers: a download must time out."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield f"http://127.0.0.1:{server.getsockname()[1]}/locomo10.json"
    server.close()


def test_download_gives_up_after_its_timeout_with_a_clear_message(tmp_path, silent_server):
    with pytest.raises(DownloadError) as caught:
        download("locomo", tmp_path, url=silent_server, timeout=0.3)
    message = str(caught.value)
    assert silent_server in message and "0.3 s" in message
    assert str(tmp_path / "locomo10.json") in message and "OPENCLAW_LAB_DATA" in message
    assert list(tmp_path.iterdir()) == []  # no partial file left behind


def test_download_of_a_refused_connection_fails_at_once(tmp_path):
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(DownloadError, match="could not fetch"):
        download("locomo", tmp_path / "x.json", url=f"http://127.0.0.1:{port}/x", timeout=2)


def test_download_from_the_public_address_fails_fast_offline_or_verifies(tmp_path):
    """No internet here: a clear DownloadError. With internet, the pinned sha256 must match."""
    try:
        path = download("locomo", tmp_path, timeout=3)
    except DownloadError as error:
        assert LOCOMO.url in str(error) and str(tmp_path / "locomo10.json") in str(error)
    else:
        assert sha256_file(path) == LOCOMO.sha256


@pytest.fixture
def http_server():
    """A local HTTP server answering every GET with ``served["body"]``."""
    served = {"body": b""}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's naming)
            self.send_response(200)
            self.send_header("Content-Length", str(len(served["body"])))
            self.end_headers()
            self.wfile.write(served["body"])

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield served, f"http://127.0.0.1:{server.server_port}/file"
    server.shutdown()
    server.server_close()


def test_download_saves_a_verified_file_and_refuses_a_corrupt_one(tmp_path, http_server, monkeypatch):
    served, url = http_server
    body = b'[{"ok": true}]'
    monkeypatch.setitem(
        datapath.DATA_FILES, "toy/toy.json", DataFile("toy", "toy.json", url, hashlib.sha256(body).hexdigest())
    )
    served["body"] = b"corrupted"
    with pytest.raises(DownloadError, match="sha256"):
        download("toy", tmp_path / "toy", filename="toy.json", timeout=2)
    assert not (tmp_path / "toy" / "toy.json").exists()
    assert list((tmp_path / "toy").iterdir()) == []
    served["body"] = body
    path = download("toy", tmp_path / "toy", filename="toy.json", timeout=2)
    assert path == tmp_path / "toy" / "toy.json" and path.read_bytes() == body


def test_download_defaults_to_the_first_data_root(tmp_path, http_server, monkeypatch):
    served, url = http_server
    served["body"] = b"[]"
    monkeypatch.setenv("OPENCLAW_LAB_DATA", str(tmp_path / "data"))
    path = download("longmemeval", filename="longmemeval_oracle.json", url=url, timeout=2)
    assert path == tmp_path / "data" / "longmemeval" / "longmemeval_oracle.json"
    assert find_dataset("longmemeval", "longmemeval_oracle.json") == path


def test_download_without_a_known_address_asks_for_one(tmp_path):
    with pytest.raises(ValueError, match="^url: "):
        download("nope", tmp_path, filename="x.json")
