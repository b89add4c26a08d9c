"""mem0 (the open-source ``mem0ai`` library, no platform account), run fully on this machine.

Our packaged all-MiniLM-L6-v2 is its Hugging Face embedder and its vector store is local (chroma, or
qdrant's local mode). With no LLM it runs add-only (``infer=False``): every turn becomes one memory,
verbatim. Given an OpenAI-compatible endpoint it runs its published mode instead: the LLM extracts
memories from each pair of turns. Every memory carries the ids of the turns it came from in its metadata.

mem0 stamps ``created_at`` with the wall clock, so nothing it does can see the dataset's time; its
spaCy features need models that are not on the package registry and stay off.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from openclaw_lab.embedding import Embedder, default_cache_path, default_model_path
from openclaw_lab.llm import Endpoint
from openclaw_lab.peers.protocol import Observation, Recalled, check_installed, require

__all__ = ["Mem0", "Mem0System", "STORES"]

STORES = ("chroma", "qdrant")
_SOURCES = "source_turns"  # metadata key: the turn ids of a memory, as JSON (store metadata must be scalar)


@dataclass(frozen=True)
class Mem0:
    """The settings of a mem0 system, checked (and the extra found) before any data loads.

    ``store``: ``chroma`` (similarity search only) or ``qdrant``'s local mode (where mem0 would add its BM25
    hybrid, but that needs ``fastembed``, whose model is downloaded at first use: similarity only here too).
    ``llm``: an ``Endpoint`` table; when given, mem0 extracts memories with it (``infer=True``).
    """

    store: str = "chroma"
    llm: dict[str, Any] | None = None
    endpoint: Endpoint | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if self.store not in STORES:
            raise ValueError(f"store: {self.store!r} is not one of {', '.join(STORES)}")
        if self.llm is not None:
            object.__setattr__(self, "endpoint", Endpoint(**self.llm))
        check_installed("mem0", "mem0")

    def open(self, folder: Path, embedder: Embedder) -> Mem0System:
        return Mem0System(folder, self.store, self.endpoint)


class Mem0System:
    """mem0's ``Memory`` in ``folder``; one mem0 user per conversation (see ``Mem0``)."""

    def __init__(self, folder: str | Path, store: str = "chroma", endpoint: Endpoint | None = None) -> None:
        self.store, self.endpoint = store, endpoint
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        # Read by mem0 when it is first imported: no telemetry, its settings kept out of the home folder.
        os.environ.setdefault("MEM0_TELEMETRY", "False")
        os.environ.setdefault("MEM0_DIR", str(default_cache_path().parent / "mem0"))
        os.environ.setdefault("OPENAI_API_KEY", "not-used")  # its OpenAI client is built even when unused
        self._memory = require("mem0", "mem0").Memory.from_config(self._config())

    def __repr__(self) -> str:
        return f"Mem0System(store={self.store!r}, infer={self.infer})"

    @property
    def infer(self) -> bool:
        return self.endpoint is not None

    def _config(self) -> dict[str, Any]:
        embedder = {"provider": "huggingface", "config": {"model": default_model_path(), "embedding_dims": 384}}
        if self.store == "chroma":
            store = {"provider": "chroma", "config": {"collection_name": "memories", "path": str(self.folder / "chroma")}}
        else:
            store = {"provider": "qdrant", "config": {"collection_name": "memories", "path": str(self.folder / "qdrant"),
                                                      "embedding_model_dims": 384, "on_disk": True}}  # fmt: skip
        config = {"embedder": embedder, "vector_store": store, "history_db_path": str(self.folder / "history.db")}
        if self.endpoint is not None:
            config["llm"] = {"provider": "openai", "config": {
                "model": self.endpoint.model, "openai_base_url": self.endpoint.base_url,
                "api_key": self.endpoint.api_key(), "temperature": self.endpoint.temperature}}  # fmt: skip
        return config

    def add(self, user: str, turns: Sequence[Observation]) -> None:
        # Add-only: one memory per turn. With an LLM: mem0's own unit, a pair of messages.
        step = 2 if self.infer else 1
        for start in range(0, len(turns), step):
            group = turns[start : start + step]
            messages = [{"role": "user", "content": turn.text} for turn in group]
            self._memory.add(messages, user_id=user, infer=self.infer,
                             metadata={_SOURCES: json.dumps([t.source_id for t in group]), "session": group[0].session_id})  # fmt: skip

    def search(self, user: str, query: str, k: int, at: datetime) -> list[Recalled]:
        found = self._memory.search(query, filters={"user_id": user}, limit=k)["results"]
        return [  # ranked as mem0 returns them; the score only restates that order
            Recalled(id=hit["id"], source_ids=tuple(json.loads((hit.get("metadata") or {}).get(_SOURCES, "[]"))),
                     score=float(len(found) - rank), content=hit.get("memory", ""))
            for rank, hit in enumerate(found)
        ]  # fmt: skip

    def close(self) -> None:
        client = getattr(self._memory.vector_store, "client", None)
        if client is not None and hasattr(client, "close"):
            client.close()
