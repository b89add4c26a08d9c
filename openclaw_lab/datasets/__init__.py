"""Datasets: LoCoMo, LongMemEval and a synthetic generator, found on a data path, loaded into a Benchmark.

>>> bench = generate(n_turns=200, seed=0)
>>> bench.name, len(bench.conversations)
('synthetic', 1)
"""

from __future__ import annotations

from openclaw_lab.datasets.datapath import (
    DATA_FILES,
    ChecksumMismatch,
    ChecksumWarning,
    DatasetNotFound,
    DownloadError,
    data_roots,
    download,
    find_dataset,
    sha256_file,
)
from openclaw_lab.datasets.jsonstream import iter_json_array
from openclaw_lab.datasets.locomo import load_locomo
from openclaw_lab.datasets.longmemeval import iter_longmemeval, load_longmemeval, session_documents
from openclaw_lab.datasets.synthetic import generate
from openclaw_lab.datasets.types import Benchmark, Conversation, LoadReport, Question, Session, Turn

__all__ = [
    "Turn",
    "Session",
    "Conversation",
    "Question",
    "LoadReport",
    "Benchmark",
    "load_locomo",
    "load_longmemeval",
    "iter_longmemeval",
    "session_documents",
    "generate",
    "iter_json_array",
    "DATA_FILES",
    "data_roots",
    "find_dataset",
    "sha256_file",
    "download",
    "DatasetNotFound",
    "ChecksumMismatch",
    "ChecksumWarning",
    "DownloadError",
]

