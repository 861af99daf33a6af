"""Issue 38, item 7 (the cache key): a model path with a Latin-1 byte (not UTF-8) is hashed and memoised like any
other; a Hugging Face folder so named, which safetensors and tokenizers cannot open, is one error line (exit 2)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

import harness.adapters.model
from harness.adapters.cache import Cache
from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity, file_sha256, local_revision
from harness.cli import main


def latin1(parent: Path, name: bytes) -> Path:
    """A path under ``parent`` whose last part is ``name`` (bytes that are not UTF-8, kept by surrogateescape)."""
    return parent / os.fsdecode(name)


class WeightsEncoder(ModelAdapter):
    """One vector per text from a weights file's bytes: its identity hashes the file, wherever it is."""

    capabilities = frozenset({Capability.TEXT_ENCODER})

    def __init__(self, weights: Path):
        super().__init__("weights")
        self.weights = weights

    def identity(self) -> ModelIdentity:
        return ModelIdentity(self.name, self.adapter_name, str(self.weights), local_revision(self.weights))

    def encode_texts(self, texts, lang=None):
        scale = float(self.weights.read_bytes()[0])
        return np.array([[scale * len(text)] for text in texts], dtype=np.float32)


def test_a_latin1_folder_is_hashed_memoised_and_cached(tmp_path, monkeypatch):
    monkeypatch.setattr(harness.adapters.model, "RACY_SECONDS", 0.0)
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    folder = latin1(tmp_path, b"mod\xe8le-caf\xe9")
    folder.mkdir()
    (folder / os.fsdecode(b"poids-\xe9.bin")).write_bytes(b"\x03weights")
    hashed: list[str] = []
    monkeypatch.setattr(harness.adapters.model, "file_sha256", lambda path: hashed.append(path) or file_sha256(path))
    first = local_revision(folder)
    assert local_revision(folder) == first and len(hashed) == 1  # the second time from the memo
    (folder / os.fsdecode(b"poids-\xe9.bin")).rename(folder / "poids-e.bin")
    assert local_revision(folder) != first  # the file's name, byte for byte, is part of the revision

    cache = Cache(tmp_path / "outputs")
    weights = folder / "poids-e.bin"
    vectors = CachedModel(WeightsEncoder(weights), cache).encode_texts(["ab", "abc"])
    again = CachedModel(WeightsEncoder(weights), cache)
    again.adapter.encode_texts = None  # served from the cache: the adapter is never asked
    np.testing.assert_array_equal(again.encode_texts(["ab", "abc"]), vectors)
    np.testing.assert_array_equal(vectors, [[6.0], [9.0]])


def test_a_latin1_hugging_face_folder_is_one_error_line(tmp_path, capsys):
    folder = latin1(tmp_path, b"caf\xe9-bert")
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    args = ["run", "--tasks", "xlr", "--task-args", "src=en,tgt=fr,n=20", "--model", str(folder)]
    assert main([*args, "--output", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"harness: error: model {tmp_path}/caf\\xe9-bert: the path is not valid UTF-8, which the Hugging Face "
        "libraries (safetensors, tokenizers) cannot open; rename the folder\n"
    )
