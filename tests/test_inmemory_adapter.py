"""An object with ``encode`` used as a text encoder: its identity, built once, and its shape check."""

from __future__ import annotations

import numpy as np
import pytest

from harness.adapters.capabilities import Capability
from harness.adapters.inmemory import EncoderAdapter, in_memory_adapter
from harness.errors import HarnessError


class Doubler:
    """Two numbers per text: its length and twice its length."""

    def encode(self, texts):
        return [[len(t), 2 * len(t)] for t in texts]


def test_the_identity_names_the_class_and_is_built_once(monkeypatch):
    from harness.results import provenance

    calls = []
    code_identity = provenance.code_identity
    monkeypatch.setattr(provenance, "code_identity", lambda path: calls.append(path) or code_identity(path))
    adapter = EncoderAdapter(Doubler())
    first, second = adapter.identity(), adapter.identity()
    assert first is second and calls == [f"in-memory:{__name__}.Doubler"]
    assert first.name == "Doubler" and first.revision is None
    assert EncoderAdapter(Doubler()).identity() == first  # another instance of the class: the same identity
    assert len(calls) == 2


def test_vectors_come_back_as_float32_rows():
    vectors = EncoderAdapter(Doubler()).encode_texts(["ab", "abcd"])
    assert vectors.dtype == np.float32 and vectors.tolist() == [[2.0, 4.0], [4.0, 8.0]]


def test_a_wrong_shape_is_refused_with_the_model_named():
    class Scalar:
        def encode(self, texts):
            return np.zeros(len(texts))

    with pytest.raises(HarnessError, match=r"model 'Scalar': encode\(\) returned shape \(3,\) for 3 texts"):
        EncoderAdapter(Scalar()).encode_texts(["a", "b", "c"])


def test_an_object_without_encode_is_refused():
    with pytest.raises(HarnessError, match="got int"):
        in_memory_adapter(3, {"xlr": [Capability.TEXT_ENCODER]}, device="cpu", batch_size=8)
