"""A run folder's runs and qrels as TREC files, for trec_eval, ir_measures and any TREC tool.

Run lines are ``qid Q0 doc rank score tag`` in the run's rank order; qrels lines ``qid 0 doc relevance``.
"""

from __future__ import annotations

from pathlib import Path

from openclaw_lab.evaluation.metrics import NO_HIT
from openclaw_lab.harness.results import read_run

__all__ = ["export_trec"]


def export_trec(run_dir: str | Path, dest: str | Path | None = None) -> list[Path]:
    """Write ``<system>.<level>.run`` and ``qrels.<level>.txt`` into ``dest`` (default ``<run>/trec``)."""
    data = read_run(run_dir)
    folder = Path(dest) if dest is not None else data["path"] / "trec"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for key, run in data["runs"].items():
        lines = [f"{_id(qid)} Q0 {_id(doc)} {rank} {score!r} {key}"
                 for qid, docs in run.items() for rank, (doc, score) in enumerate(docs.items(), 1) if doc != NO_HIT]  # fmt: skip
        written.append(_write(folder / f"{key}.run", lines))
    for level, qrels in data["qrels"].items():
        lines = [f"{_id(qid)} 0 {_id(doc)} {relevance}" for qid, docs in qrels.items() for doc, relevance in docs.items()]
        written.append(_write(folder / f"qrels.{level}.txt", lines))
    return written


def _id(text: str) -> str:
    if not text or any(ch.isspace() for ch in text):
        raise ValueError(f"id: {text!r} is empty or holds white space, which the TREC format cannot carry")
    return text


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path
