"""A test plugin for the fault-injection suite: a text encoder whose vectors follow a local weights file."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity, local_revision
from harness.params import Param
from harness.plugins.hookspecs import hookimpl


@hookimpl
def register_models(register):
    register(
        "weights-file-encoder",
        "faults.fault_plugin:WeightsFileEncoder",
        "Vectors from a hash of the weights file and the text.",
    )


class WeightsFileEncoder(ModelAdapter):
    """Each vector is a hash of the weights file's bytes and the text: other weights, other vectors."""

    capabilities = frozenset({Capability.TEXT_ENCODER})
    params = {"weights": Param(None, "the weights file", str)}
    calls: list[int] = []

    def identity(self) -> ModelIdentity:
        return ModelIdentity(
            self.name, self.adapter_name, self.args["weights"], local_revision(self.args["weights"]), dict(self.args)
        )

    def load(self) -> None:
        self.weights = Path(self.args["weights"]).read_bytes()

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        WeightsFileEncoder.calls.append(len(texts))
        rows = [np.frombuffer(hashlib.sha256(self.weights + t.encode()).digest()[:8], dtype=np.uint8) for t in texts]
        return np.stack(rows).astype(np.float32) + 1.0
