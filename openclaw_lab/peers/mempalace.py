"""MemPalace ("no API key required") on this machine, with our offline embedding model.

MemPalace embeds through chroma; by default with a MiniLM ONNX model it downloads on first use,
which cannot happen here. Its ``openai-compat`` setting embeds over HTTP instead, so the adapter
serves our packaged all-MiniLM-L6-v2 (the same model, with our on-disk cache) on 127.0.0.1 for the
life of the system. Its configuration, palace and lock files live in the folder the harness gives it,
never in the home folder. Every turn is one drawer (wing: the user, room: the session, source: the turn id).

Modes: ``raw`` queries the drawers' vectors only (its verbatim baseline); ``hybrid`` is its own
search (``searcher.search_memories``: BM25 and vector similarity re-ranked, closets as a boost).
MemPalace stamps ``filed_at`` with the wall clock: it cannot see the dataset's time.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from openclaw_lab.embedding import Embedder
from openclaw_lab.peers.endpoint import EmbeddingEndpoint
from openclaw_lab.peers.protocol import Observation, Recalled, check_installed, require

__all__ = ["MemPalace", "MemPalaceSystem", "MODES"]

MODES = ("raw", "hybrid")


@dataclass(frozen=True)
class MemPalace:
    """The settings of a MemPalace system (``mode``: ``raw`` or ``hybrid``), checked before any data loads."""

    mode: str = "hybrid"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode: {self.mode!r} is not one of {', '.join(MODES)}")
        check_installed("mempalace", "mempalace")

    def open(self, folder: Path, embedder: Embedder) -> MemPalaceSystem:
        return MemPalaceSystem(folder, embedder, self.mode)


class MemPalaceSystem:
    """A palace in ``folder``, one wing per user, embedding with ``embedder`` over a local endpoint."""

    def __init__(self, folder: str | Path, embedder: Embedder, mode: str = "hybrid") -> None:
        self.mode = mode
        self.folder = Path(folder)
        self.palace = str(self.folder / "palace")
        self._endpoint = EmbeddingEndpoint(embedder).start()
        settings = {
            "MEMPALACE_CONFIG_DIR": str(self.folder / "config"),
            "MEMPALACE_PALACE_PATH": self.palace,
            "MEMPALACE_EMBEDDING_MODEL": "openai-compat",
            "MEMPALACE_EMBEDDING_API_URL": self._endpoint.url,
            "MEMPALACE_EMBEDDING_API_MODEL": embedder.model_id,
            "HOME": str(self.folder),  # its lock files go to ~/.mempalace/locks whatever its settings say
        }
        # MemPalace reads its settings from the environment on every call: set while the system is open.
        self._previous = {key: os.environ.get(key) for key in settings}
        os.environ.update(settings)
        try:
            self._palace = require("mempalace.palace", "mempalace")
            self._drawers = self._palace.get_collection(self.palace, create=True)
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"MemPalaceSystem(mode={self.mode!r})"

    def add(self, user: str, turns: Sequence[Observation]) -> None:
        from mempalace.miner import add_drawer  # its public single-drawer call

        for turn in turns:
            add_drawer(self._drawers, wing=user, room=turn.session_id, content=turn.text, source_file=turn.source_id,
                       chunk_index=0, agent="openclaw-lab")  # fmt: skip

    def search(self, user: str, query: str, k: int, at: datetime) -> list[Recalled]:
        if self.mode == "raw":
            found = self._drawers.query(query_texts=[query], n_results=k, where={"wing": user})
            hits = [{"id": i, "source_file": meta["source_file"], "text": doc}
                    for i, meta, doc in zip(found["ids"][0], found["metadatas"][0], found["documents"][0])]  # fmt: skip
        else:
            from mempalace.searcher import search_memories

            answer = search_memories(query, self.palace, wing=user, n_results=k)
            if "error" in answer:
                raise RuntimeError(f"mempalace search: {answer['error']}")
            hits = [{"id": hit["drawer_id"], **hit} for hit in answer["results"]]
        return [  # ranked as MemPalace returns them; the score only restates that order
            Recalled(id=hit["id"], source_ids=(hit["source_file"],), score=float(len(hits) - rank), content=hit["text"])
            for rank, hit in enumerate(hits)
        ]

    def close(self) -> None:
        for key, value in self._previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._endpoint.stop()
