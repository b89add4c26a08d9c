"""Where tasks run: here, one after another (``LocalEngine``, the default), in worker processes forked from
this one (``ProcessEngine``: every core of one machine), or as Ray tasks (``RayEngine``).

The harness hands an engine independent tasks (the conversations of a replay, the points of a
sweep) and reads each outcome as it finishes. A task that fails becomes an outcome carrying its
error and its name, so that a sweep keeps every point that finished. Ray is an optional extra
(``pip install "openclaw-lab[ray]"``), imported only when a Ray engine is built.

Embeddings are never computed per task: ``for_tasks(embedder, texts, engine)`` encodes every text a run
will need once, in the driver, and returns an embedder that reads them from a table shipped with it
(through Ray's object store, stored once however many tasks read it; inherited by forked workers).

>>> outcomes = LocalEngine().map(pow, [(2, 3), (2, -1), ("2", 1)], names=["a", "b", "c"])
>>> [(o.name, o.value, type(o.error).__name__ if o.error else None) for o in outcomes]
[('a', 8, None), ('b', 0.5, None), ('c', None, 'TypeError')]
"""

from __future__ import annotations

import copy
import itertools
import multiprocessing
import os
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from openclaw_lab.embedding import CacheStats, Embedder, text_key

__all__ = [
    "Engine", "LocalEngine", "ProcessEngine", "RayEngine", "Outcome", "TaskError", "VectorTable", "for_tasks",
    "portable", "values",
]  # fmt: skip

# passed on to Ray's workers: models are never downloaded, the cache is the driver's
WORKER_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM", "OPENCLAW_LAB_CACHE",
              "OPENCLAW_LAB_DATA", "ANONYMIZED_TELEMETRY")  # fmt: skip


@dataclass
class Outcome:
    """What one task left: its value, or the error it raised (``detail``: the task's traceback)."""

    index: int
    name: str
    value: Any = None
    error: BaseException | None = None
    detail: str = ""


class TaskError(RuntimeError):
    """Tasks that failed, each named (a grid point, a conversation) with the error it raised (its cause: the
    first one). Not an input error: the config was checked before any task ran, so its traceback is kept."""

    def __init__(self, failed: Sequence[Outcome], what: str = "task") -> None:
        self.failed = list(failed)
        lines = [f"{what} {o.name}: {type(o.error).__name__}: {o.error}" for o in self.failed]
        super().__init__(f"{len(self.failed)} {what}(s) failed\n" + "\n".join(lines))
        for outcome in self.failed:
            if outcome.error is not None and outcome.error.__traceback__ is None and outcome.detail:
                self.add_note(f"{what} {outcome.name}, where it ran:\n{outcome.detail}")  # a remote traceback


def values(outcomes: Iterable[Outcome], what: str = "task") -> list[Any]:
    """The values in task order; every failure raised together as one ``TaskError``."""
    done = sorted(outcomes, key=lambda o: o.index)
    if failed := [o for o in done if o.error is not None]:
        raise TaskError(failed, what) from failed[0].error
    return [o.value for o in done]


class Engine(Protocol):
    def map(
        self, task: Callable[..., Any], inputs: Sequence[tuple], *, names: Sequence[str],
        shared: Mapping[str, Any] | None = None,
    ) -> Iterator[Outcome]:  # fmt: skip
        """``task(*inputs[i], **shared)`` for every i, yielded as each finishes (any order)."""


class LocalEngine:
    """Today's behaviour: every task in this process, in order."""

    def map(self, task, inputs, *, names, shared=None):  # noqa: ANN001, ANN201 - the Engine protocol's
        for index, (args, name) in enumerate(zip(inputs, names, strict=True)):
            try:
                yield Outcome(index, name, task(*args, **(shared or {})))
            except Exception as error:  # noqa: BLE001 - handed to the caller with its name
                yield Outcome(index, name, error=error, detail=traceback.format_exc())

    def __repr__(self) -> str:
        return "LocalEngine()"


def _check_num_cpus(num_cpus: int | None) -> None:
    if num_cpus is not None and (isinstance(num_cpus, bool) or not isinstance(num_cpus, int) or num_cpus < 1):
        raise ValueError(f"num_cpus: {num_cpus!r} must be an integer >= 1")


# the jobs of running ``ProcessEngine.map`` calls: a forked worker finds its task, inputs and shared values here
_FORKED: dict[int, tuple[Callable[..., Any], Sequence[tuple], Mapping[str, Any]]] = {}
_JOB_IDS = itertools.count()


class ProcessEngine:
    """Tasks in ``num_cpus`` worker processes (default: every CPU), forked from this one for each ``map``.

    A fork inherits the tasks' inputs and shared values as they are: nothing is pickled on the way in
    (closures and loaded models included) and no worker imports or loads anything again; each value comes
    back pickled. It needs the ``fork`` start method (Linux; macOS allows it); elsewhere use ``ray``.
    """

    def __init__(self, num_cpus: int | None = None) -> None:
        _check_num_cpus(num_cpus)
        if "fork" not in multiprocessing.get_all_start_methods():
            raise ValueError("engine: the processes engine forks this process, which this platform cannot; use ray")
        self.num_cpus = num_cpus

    def map(self, task, inputs, *, names, shared=None):  # noqa: ANN001, ANN201 - the Engine protocol's
        names = list(names)
        if len(names) != len(inputs):
            raise ValueError(f"names: {len(names)} names for {len(inputs)} inputs")
        if not inputs:
            return
        job = next(_JOB_IDS)
        _FORKED[job] = (task, inputs, shared or {})  # in place before the workers fork (at the first submit)
        workers = min(self.num_cpus or os.cpu_count() or 1, len(inputs))
        try:
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
                futures = {pool.submit(_forked, job, index): index for index in range(len(inputs))}
                for future in as_completed(futures):
                    index = futures[future]
                    if (error := future.exception()) is None:
                        yield Outcome(index, names[index], future.result())
                    else:  # the worker's error, its traceback as the cause; or BrokenProcessPool for a lost worker
                        yield Outcome(index, names[index], error=error, detail=str(error.__cause__ or ""))
        finally:
            del _FORKED[job]

    def __repr__(self) -> str:
        return f"ProcessEngine(num_cpus={self.num_cpus!r})"


def _forked(job: int, index: int) -> Any:
    task, inputs, shared = _FORKED[job]
    return task(*inputs[index], **shared)


class RayEngine:
    """Tasks on Ray: a local Ray started on first use (``address=None``), or a running cluster (``"auto"``,
    ``"ray://HOST:PORT"``). ``shared`` values are put in the object store once and read by every task."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ImportError('the ray engine needs ray; run pip install "openclaw-lab[ray]"') from None
        _check_num_cpus(num_cpus)
        if address is not None and not isinstance(address, str):
            raise ValueError(f"address: {address!r} must be a string such as 'auto' or 'ray://host:10001'")
        self.address, self.num_cpus = address, num_cpus

    def start(self) -> None:
        """Connect to the cluster, or start a local Ray (once per process)."""
        import ray

        if ray.is_initialized():
            return
        env = {key: os.environ[key] for key in WORKER_ENV if key in os.environ}
        # Ray waits 30 s for a new head's GCS to bind its port; on a busy 2-core machine that start took longer
        # (seen in CI), so a local Ray gets Ray's own operator override of that wait
        os.environ.setdefault("RAY_gcs_server_port_wait_time_s", "120")
        local = {"num_cpus": self.num_cpus, "include_dashboard": False} if self.address is None else {}
        ray.init(address=self.address, runtime_env={"env_vars": env}, log_to_driver=False,
                 configure_logging=False, **local)  # fmt: skip

    def map(self, task, inputs, *, names, shared=None):  # noqa: ANN001, ANN201 - the Engine protocol's
        import ray

        if not inputs:
            return
        self.start()
        refs = {key: ray.put(value) for key, value in (shared or {}).items()}  # stored once, read by every task
        remote = ray.remote(_call)
        pending = {remote.remote(task, args, refs): (i, name) for i, (args, name) in enumerate(zip(inputs, names, strict=True))}
        while pending:
            [ready], _ = ray.wait(list(pending), num_returns=1)
            index, name = pending.pop(ready)
            try:
                yield Outcome(index, name, ray.get(ready))
            except ray.exceptions.RayError as failed:  # the task's own error (remote traceback beside it), or a lost worker
                cause = getattr(failed, "cause", None)
                yield Outcome(index, name, error=cause if isinstance(cause, Exception) else failed, detail=str(failed))

    def __repr__(self) -> str:
        return f"RayEngine(address={self.address!r}, num_cpus={self.num_cpus!r})"


def _call(task: Callable[..., Any], args: tuple, shared: Mapping[str, Any]) -> Any:
    import ray

    return task(*args, **{key: ray.get(ref) for key, ref in shared.items()})


class VectorTable:
    """A read-mostly embedding cache in memory: one matrix and a row per text key, picklable.

    It stands in for ``EmbeddingCache`` on a worker; texts it lacks are encoded there and kept.
    """

    def __init__(self, model: str, keys: Sequence[str], matrix: np.ndarray) -> None:
        self.model = model
        self.rows = {key: row for row, key in enumerate(keys)}
        self.matrix = matrix
        self.extra: dict[str, np.ndarray] = {}
        self.stats = CacheStats()

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        if model != self.model:
            return {}
        found = {key: self.matrix[self.rows[key]] for key in keys if key in self.rows}
        return found | {key: self.extra[key] for key in keys if key in self.extra}

    def put_many(self, model: str, entries: Mapping[str, np.ndarray]) -> None:
        if model == self.model:
            self.extra.update(entries)

    def __len__(self) -> int:
        return len(self.rows) + len(self.extra)

    def close(self) -> None:
        pass


def portable(embedder: Embedder, texts: Iterable[str], progress: bool = False, keep_model: bool = False) -> Embedder:
    """A copy of ``embedder`` to ship to tasks: ``texts`` encoded here once (through its cache) and carried
    in a ``VectorTable``, which also keeps tasks off the cache's SQLite connection. The model itself is
    not carried (a task loads it only if it meets a new text) unless ``keep_model``: a forked worker
    inherits it already loaded."""
    unique = list(dict.fromkeys(texts))
    table = embedder.cache
    if isinstance(table, VectorTable) and all(text_key(t) in table.rows for t in unique):
        return embedder  # already carries them (a sweep's shared replay, on the sweep's shipped embedder)
    matrix = embedder.encode(unique, progress=progress) if unique else np.zeros((0, 0), dtype=np.float32)
    shipped = copy.copy(embedder)
    if not keep_model:
        shipped._model = shipped._onnx = None
    shipped.cache = VectorTable(embedder.model_id, [text_key(t) for t in unique], matrix)  # type: ignore[assignment]
    return shipped


def for_tasks(embedder: Embedder, texts: Iterable[str], engine: Engine, progress: bool = False) -> Embedder:
    """The embedder ``engine``'s tasks read: ``embedder`` itself in this process, else a ``portable`` copy
    carrying ``texts`` (and the loaded model, for workers forked from here)."""
    if isinstance(engine, LocalEngine):
        return embedder
    return portable(embedder, texts, progress, keep_model=isinstance(engine, ProcessEngine))
