"""A faster CPU encoder: the same sentence-transformers model exported to ONNX here and run by onnxruntime.

The export reads only the local weights (no hub): the model's transformer, its mean pooling and the
L2 normalisation become one ONNX graph, written once per model folder under
``$OPENCLAW_LAB_CACHE/onnx/`` (atomically, under a file lock, so parallel processes share it).
``int8`` adds onnxruntime's dynamic quantisation of that graph, per output channel. sentence-transformers' own ONNX
backend is not used because it needs ``optimum-onnx``, which pins ``transformers < 4.58`` and would
downgrade the rest of the environment; ``torch.onnx`` and ``onnxruntime`` do the same job here.
Exporting needs the ``onnx`` package (the ``onnx`` extra); running needs only onnxruntime.
"""

from __future__ import annotations

import hashlib
import logging
import os
import warnings
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from filelock import FileLock
from tqdm.auto import tqdm

__all__ = ["OnnxEncoder", "export_onnx"]

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def _pooled(transformer: Any) -> Any:
    """The transformer followed by mean pooling over real tokens and L2 normalisation (as the model's own
    Pooling and Normalize modules do), as one torch module to export."""
    import torch

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.transformer(input_ids=input_ids, attention_mask=attention_mask,
                                      token_type_ids=token_type_ids).last_hidden_state  # fmt: skip
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    return Pooled().eval()


def export_onnx(st_model: Any, folder: Path, int8: bool = False) -> Path:
    """The model's ONNX file in ``folder`` (``model.onnx``, or ``model-int8-per-channel.onnx``), exported if absent."""
    target = folder / ("model-int8-per-channel.onnx" if int8 else "model.onnx")
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    source = export_onnx(st_model, folder) if int8 else None  # before the lock, which is not reentrant
    with FileLock(str(folder / ".export.lock")):
        if target.exists():  # another process exported it while this one waited
            return target
        partial = folder / f".{target.name}.{os.getpid()}.partial"
        with _quiet():
            if source is not None:
                from onnxruntime.quantization import QuantType, quantize_dynamic

                # per channel: a scale for each output column, not one per matrix (cosine to the model's vectors
                # 0.992 on average against 0.958 per matrix, LoCoMo turns; at the same speed)
                quantize_dynamic(source, partial, weight_type=QuantType.QInt8, per_channel=True)
            else:
                _export(st_model, partial)
        os.replace(partial, target)  # a reader sees a whole file or none
    return target


@contextmanager
def _quiet() -> Iterator[None]:
    """The exporter's and the quantiser's advice, which is for model authors (the test checks the result)."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        root.setLevel(level)


def _export(st_model: Any, path: Path) -> None:
    try:
        import onnx  # noqa: F401 - torch.onnx writes through it
    except ImportError:
        raise ImportError('backend: exporting to ONNX needs onnx; run pip install "openclaw-lab[onnx]"') from None
    import torch

    example = st_model.tokenizer(["an example", "another, longer example"], padding=True, return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {"embedding": {0: "batch"}}
    with torch.no_grad():
        torch.onnx.export(_pooled(st_model[0].auto_model), tuple(example[name] for name in INPUTS), str(path),
                          input_names=list(INPUTS), output_names=["embedding"], dynamic_axes=axes,
                          opset_version=17, dynamo=False)  # fmt: skip


class OnnxEncoder:
    """Encodes like ``SentenceTransformer.encode(normalize_embeddings=True)`` with onnxruntime on the CPU.

    Each text is run alone, and ``threads`` texts at once (onnxruntime releases the GIL; default: one per core).
    int8 quantises activations with one scale per run, so in a batch a text's vector would depend on the texts
    beside it (cosine 0.986 between one text's vectors from two batches, LoCoMo turns); alone, it is a function of
    the text, whatever else is encoded. A text alone is also never padded.
    """

    def __init__(self, st_model: Any, model_path: str, cache_root: Path, int8: bool = False,
                 threads: int | None = None) -> None:  # fmt: skip
        import onnxruntime

        folder = cache_root / "onnx" / f"{Path(model_path).name}-{hashlib.sha256(model_path.encode()).hexdigest()[:8]}"
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # quiet: warnings about unused initialisers are not the user's concern
        options.intra_op_num_threads = options.inter_op_num_threads = 1  # the texts are spread over the cores
        self.session = onnxruntime.InferenceSession(str(export_onnx(st_model, folder, int8)), options,
                                                    providers=["CPUExecutionProvider"])  # fmt: skip
        self.tokenizer = st_model.tokenizer
        self.max_length = st_model.max_seq_length
        self.threads = threads or os.cpu_count() or 1

    def _one(self, tokens: dict[str, list[int]]) -> np.ndarray:
        return self.session.run(None, {name: np.asarray([tokens[name]], dtype=np.int64) for name in INPUTS})[0][0]

    def encode(self, texts: Sequence[str], progress: bool) -> np.ndarray:
        tokens = self.tokenizer(list(texts), truncation=True, max_length=self.max_length)
        each = ({name: tokens[name][i] for name in INPUTS} for i in range(len(texts)))
        with ThreadPoolExecutor(self.threads) as pool:
            vectors = list(tqdm(pool.map(self._one, each, chunksize=16), total=len(texts), desc="Texts",
                                disable=not progress))  # fmt: skip
        return np.vstack(vectors).astype(np.float32, copy=False)
