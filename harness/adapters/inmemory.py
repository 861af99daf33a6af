"""Models built in Python and passed to ``harness.evaluate`` directly (notebooks).

Two kinds are accepted: a ``ModelAdapter`` instance (used as it is, cached under its identity),
or any object with ``encode(texts, ...)`` returning one vector per text, as MTEB accepts
(a sentence-transformers model, for instance). The latter is wrapped as a text encoder and is
not cached: nothing identifies its weights, so its outputs could be confused with another
model's of the same class.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.adapters.resolve import check_capabilities
from harness.errors import HarnessError


class EncoderAdapter(ModelAdapter):
    """A text encoder around an object with ``encode(texts)`` (MTEB's encoder protocol)."""

    capabilities = frozenset({Capability.TEXT_ENCODER})
    cacheable = False

    def __init__(self, encoder: Any, *, device: str = "cpu", batch_size: int = 32):
        name = getattr(encoder, "name", None) or getattr(encoder, "model_name", None) or type(encoder).__name__
        super().__init__(str(name), {}, device=device, batch_size=batch_size)
        self.encoder = encoder
        self._identity: ModelIdentity | None = None

    def identity(self) -> ModelIdentity:
        """The wrapped object's class; no revision (so the cache is not used). Built once (a run asks several
        times, and each build looks the code's distribution up: about 0.1 s)."""
        if self._identity is None:
            cls = type(self.encoder)
            self._identity = ModelIdentity(name=self.name, adapter=f"in-memory:{cls.__module__}.{cls.__qualname__}")
        return self._identity

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """``encoder.encode(texts)`` as a float32 (len(texts), dim) array."""
        vectors = self.encoder.encode(list(texts))
        if hasattr(vectors, "detach"):  # a torch tensor
            vectors = vectors.detach().cpu().numpy()
        array = np.asarray(vectors, dtype=np.float32)
        if array.ndim != 2 or len(array) != len(texts):
            raise HarnessError(
                f"model {self.name!r}: encode() returned shape {array.shape} for {len(texts)} texts; "
                "expected one vector per text"
            )
        return array


def in_memory_adapter(
    model: Any, needs: Mapping[str, Iterable[Capability]], *, device: str, batch_size: int
) -> ModelAdapter:
    """The adapter for a model object: an adapter instance as it is, or an encoder wrapped; capabilities checked."""
    if isinstance(model, ModelAdapter):
        adapter = model
    elif callable(getattr(model, "encode", None)):
        adapter = EncoderAdapter(model, device=device, batch_size=batch_size)
    else:
        raise HarnessError(
            f"model must be a name, a ModelAdapter or an object with encode(texts); got {type(model).__name__}"
        )
    check_capabilities(adapter.name, type(adapter), needs)
    return adapter


def adapter_is_cacheable(adapter: ModelAdapter) -> bool:
    """False for adapters whose identity does not pin their outputs (``cacheable = False``)."""
    return bool(getattr(adapter, "cacheable", True))
