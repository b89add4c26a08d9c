"""The data path: where dataset files live, their public sources and checksums, and a downloader.

A file ``<name>/<file>`` is looked up under each folder of ``$OPENCLAW_LAB_DATA`` (``os.pathsep``
separated), then under the repository's ``datasets/`` folder. Data files are never committed (licences);
each dataset's ``datasets/<name>/CARD.md`` mirrors the constants below.

Checksum policy: a file whose sha256 differs from the pinned one is still loaded (a user may have a
patched copy) but a :class:`ChecksumWarning` is emitted and the loader records the mismatch in its
``LoadReport``; ``strict=True`` raises :class:`ChecksumMismatch` instead.

>>> DATA_FILES["locomo/locomo10.json"].size
2805274
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DataFile",
    "DATA_FILES",
    "DEFAULT_FILES",
    "DatasetNotFound",
    "ChecksumMismatch",
    "ChecksumWarning",
    "DownloadError",
    "data_roots",
    "find_dataset",
    "sha256_file",
    "check_sha256",
    "download",
]

REPO_DATASETS = Path(__file__).resolve().parents[2] / "datasets"
ENV_VAR = "OPENCLAW_LAB_DATA"


@dataclass(frozen=True)
class DataFile:
    """A public dataset file: where to fetch it, what it hashes to ('' when none is pinned), its licence."""

    dataset: str
    filename: str
    url: str
    sha256: str = ""
    size: int | None = None
    licence: str = ""

    @property
    def key(self) -> str:
        return f"{self.dataset}/{self.filename}"


_LONGMEMEVAL_URL = "https://huggingface.co/datasets/xiaowu0162/longmemeval/resolve/main/"
_KNOWN = [
    DataFile(
        "locomo",
        "locomo10.json",
        "https://raw.githubusercontent.com/snap-research/locomo/"
        "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376/data/locomo10.json",
        sha256="79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
        size=2_805_274,
        licence="CC BY-NC 4.0 (non-commercial use only; attribution required)",
    ),
    # The Hugging Face entries carry no ".json" extension upstream; we store them with one.
    *(
        DataFile("longmemeval", f"longmemeval_{split}.json", _LONGMEMEVAL_URL + f"longmemeval_{split}", licence="MIT")
        for split in ("s", "m", "oracle")
    ),
]
DATA_FILES: dict[str, DataFile] = {f.key: f for f in _KNOWN}
DEFAULT_FILES = {"locomo": "locomo10.json", "longmemeval": "longmemeval_s.json"}


class DatasetNotFound(FileNotFoundError):
    """A dataset file is not on the data path; the message says where to get it and where to put it."""


class ChecksumMismatch(ValueError):
    """A dataset file's sha256 differs from the pinned one (raised only with ``strict=True``)."""


class ChecksumWarning(UserWarning):
    """A dataset file's sha256 differs from the pinned one; results may not compare with published ones."""


class DownloadError(OSError):
    """A download failed (no internet, timeout, HTTP error); the message names the address and the target."""


def data_roots() -> list[Path]:
    """The folders searched, in order: each entry of ``$OPENCLAW_LAB_DATA``, then the repo's ``datasets/``."""
    env = os.environ.get(ENV_VAR, "")
    return [Path(p).expanduser() for p in env.split(os.pathsep) if p] + [REPO_DATASETS]


def _data_file(name: str, filename: str | None) -> tuple[str, DataFile | None]:
    if filename is None:
        if name not in DEFAULT_FILES:
            raise ValueError(f"filename: needed for dataset {name!r}; known datasets: {', '.join(DEFAULT_FILES)}")
        filename = DEFAULT_FILES[name]
    return filename, DATA_FILES.get(f"{name}/{filename}")


def find_dataset(name: str, filename: str | None = None) -> Path:
    """The first ``<root>/<name>/<filename>`` on the data path; raise DatasetNotFound saying how to get it.

    >>> find_dataset("locomo").name  # doctest: +SKIP
    'locomo10.json'
    """
    filename, known = _data_file(name, filename)
    roots = data_roots()
    for root in roots:
        candidate = root / name / filename
        if candidate.is_file():
            return candidate
    searched = ", ".join(str(root / name / filename) for root in roots)
    source = f"Get it from {known.url} (licence: {known.licence}) and put it at " if known else "Put it at "
    raise DatasetNotFound(
        f"{name}: {filename} is not on the data path (searched {searched}). {source}"
        f"{roots[0] / name / filename}, or point {ENV_VAR} at a folder holding {name}/{filename}; "
        f"see datasets/{name}/CARD.md."
    )


def sha256_file(path: str | Path) -> str:
    """The hex sha256 of a file, read in 1 MiB blocks (constant memory).

    >>> import tempfile, pathlib; p = pathlib.Path(tempfile.mkdtemp()) / "x"; _ = p.write_bytes(b"abc")
    >>> sha256_file(p)[:16]
    'ba7816bf8f01cfea'
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_sha256(path: str | Path, name: str, filename: str | None = None, *, strict: bool = False) -> tuple[str, str]:
    """Hash ``path`` and compare with the pinned sha256 of ``name/filename``; return (sha256, note).

    The note is '' when the file matches or no checksum is pinned; otherwise it describes the mismatch,
    which is also warned (ChecksumWarning) or, with ``strict=True``, raised (ChecksumMismatch).
    """
    path = Path(path)
    actual = sha256_file(path)
    known = DATA_FILES.get(f"{name}/{filename or path.name}")
    if known is None or not known.sha256 or actual == known.sha256:
        return actual, ""
    note = (
        f"sha256 mismatch for {path}: expected {known.sha256} ({known.key} from {known.url}), got {actual}; "
        "results will not compare with published numbers"
    )
    if strict:
        raise ChecksumMismatch(note)
    warnings.warn(note, ChecksumWarning, stacklevel=3)
    return actual, note


def download(
    name: str,
    dest: str | Path | None = None,
    *,
    filename: str | None = None,
    url: str | None = None,
    timeout: float = 10.0,
) -> Path:
    """Fetch ``name/filename`` from its public address into ``dest`` (a folder or a file path); return the path.

    ``dest`` defaults to the first data root. The file is written under a temporary name and renamed only
    when complete and, where a sha256 is pinned, verified. Without internet it fails within ``timeout``
    seconds with a DownloadError naming the address and the target.

    >>> download("locomo", "/tmp/data", timeout=2)  # doctest: +SKIP
    PosixPath('/tmp/data/locomo10.json')
    """
    filename, known = _data_file(name, filename)
    source = url or (known.url if known else None)
    if source is None:
        raise ValueError(f"url: no public address is known for {name}/{filename}; pass url=...")
    target = Path(dest) if dest is not None else data_roots()[0] / name
    if target.is_dir() or dest is None or target.suffix == "":
        target = target / filename
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=f".{filename}.", suffix=".part", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out, urllib.request.urlopen(source, timeout=timeout) as response:
            shutil.copyfileobj(response, out, 1 << 20)
        if known and known.sha256 and (actual := sha256_file(partial)) != known.sha256:
            raise DownloadError(f"download: {source} gave sha256 {actual}, expected {known.sha256}; not saved")
        os.replace(partial, target)
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError) as error:
        reason = getattr(error, "reason", error)
        raise DownloadError(
            f"download: could not fetch {source} within {timeout:g} s ({reason}). Without internet, fetch it "
            f"on another machine and put it at {target}, or point {ENV_VAR} at its folder."
        ) from error
    finally:
        Path(partial).unlink(missing_ok=True)
    return target
