"""Reference encoders of known (poor) quality for meta-evaluation: a random encoder and degraded wrappers.

``random-encoder`` gives every text a fixed random unit vector (seeded by the text), so it
knows nothing about meaning: retrieval with it is at chance. ``degraded-encoder`` wraps another
registered text encoder and makes it worse in a controlled, seeded way: Gaussian noise of
standard deviation ``noise`` added to each (unit) vector, drawn from a generator seeded by
``seed`` and the text, then only the first ``truncate`` dimensions kept; the result is
L2-normalised again. The base's vectors go through the harness cache like any model's, so
the variants of one base compute them once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.adapters.cache import default_cache
from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.params import Param


def text_rng(purpose: str, seed: int, text: str) -> np.random.Generator:
    """A generator seeded by a purpose, ``seed`` and the text (the same text always gets the same draws)."""
    digest = hashlib.sha256(f"{purpose}\0{seed}\0{text}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class RandomEncoder(ModelAdapter):
    """A fixed random unit vector per text: a chance-level text encoder."""

    capabilities = frozenset({Capability.TEXT_ENCODER})
    params = {"dim": Param(384, "vector size", min=1), "seed": Param(0, "seed mixed with each text")}

    def card(self) -> dict[str, Any]:
        """No weights: ``dim``-dimensional vectors, shipped with the harness."""
        return {
            **super().card(),
            "parameters": 0,
            "dimension": self.args["dim"],
            "source": "packaged",
            "control": "random vectors: retrieval with them is at chance",
        }

    def identity(self) -> ModelIdentity:
        """No weights: the arguments and the generator."""
        return ModelIdentity(
            self.name, self.adapter_name, "numpy.random.PCG64", np.__version__, dict(self.args), "float32"
        )

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """One random unit vector per text."""
        rows = [text_rng("vector", self.args["seed"], text).standard_normal(self.args["dim"]) for text in texts]
        return unit_rows(np.asarray(rows, dtype=np.float64).reshape(len(texts), self.args["dim"]))


class DegradedEncoder(ModelAdapter):
    """Another text encoder with seeded noise added and/or dimensions cut."""

    capabilities = frozenset({Capability.TEXT_ENCODER})
    params = {
        "base": Param("e5-small", "the registered text encoder to degrade"),
        "noise": Param(0.0, "standard deviation of the Gaussian noise added to each unit vector", min=0.0),
        "truncate": Param(None, "keep only the first k dimensions", int, min=1),
        "seed": Param(0, "seed of the noise (mixed with each text)"),
    }

    def __init__(self, name: str, args: dict | None = None, **kwargs):
        super().__init__(name, args, **kwargs)
        from harness.adapters.resolve import build_adapter
        from harness.plugins.registry import get_registry

        base = build_adapter(
            get_registry(),
            self.args["base"],
            {},
            {name: [Capability.TEXT_ENCODER]},
            device=self.device,
            batch_size=self.batch_size,
        )
        self.base = CachedModel(base, default_cache())

    def identity(self) -> ModelIdentity:
        """The base model's source and revision, with its identity's digest and the degradation."""
        base = self.base.identity
        return ModelIdentity(
            self.name,
            self.adapter_name,
            base.source,
            f"{base.revision}|{base.digest()[:12]}",
            dict(self.args),
            base.dtype,
        )

    def card(self) -> dict[str, Any]:
        """The base model's card, with the kept dimensions; a control (degraded on purpose) when it noises or cuts."""
        base = self.base.adapter.card()
        changes = ([f"noise {self.args['noise']}"] if self.args["noise"] > 0 else []) + (
            [f"cut to {self.args['truncate']} dimensions"] if self.args["truncate"] is not None else []
        )
        control = f"{self.args['base']} degraded on purpose ({', '.join(changes)})" if changes else base.get("control")
        return {**base, "dimension": self.args["truncate"] or base["dimension"], "control": control}

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """The base vectors, noised, truncated and normalised."""
        vectors = unit_rows(np.asarray(self.base.encode_texts(texts, lang=lang), dtype=np.float64))
        if self.args["noise"] > 0:
            noise = [text_rng("noise", self.args["seed"], text).standard_normal(vectors.shape[1]) for text in texts]
            vectors = vectors + self.args["noise"] * np.asarray(noise).reshape(vectors.shape)
        if self.args["truncate"] is not None:
            vectors = vectors[:, : self.args["truncate"]]
        return unit_rows(vectors)
