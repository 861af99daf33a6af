"""``CachedModel`` encodes outputs to bytes only to cache them: with no cache and no partition, never."""

from __future__ import annotations

import dataclasses

import numpy as np

from harness.adapters.cache import Cache, array_to_bytes
from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import ARRAYS, Capability
from harness.adapters.model import ModelAdapter, ModelIdentity


class Lengths(ModelAdapter):
    """A text encoder: (length, number of spaces) of each text; it offers ``capability`` (a text encoder's)."""

    def __init__(self, capability):
        super().__init__("m")
        self.capabilities = frozenset({capability})

    def identity(self):
        return ModelIdentity("lengths", "tests:Lengths", "src", "rev1", {}, "float32", "pkg", "1.0", "abc")

    def encode_texts(self, texts, lang=None):
        return np.array([[len(t), t.count(" ")] for t in texts], dtype=np.float32)


def counting_capability():
    """The text encoder capability with a codec that counts the values it encodes."""
    encoded = []

    def encode(value):
        encoded.append(value)
        return array_to_bytes(value)

    codec = dataclasses.replace(ARRAYS, encode=encode)
    return dataclasses.replace(Capability.TEXT_ENCODER, codec=codec), encoded


TEXTS = ["a b", "abc", "a b", "a  b c"]
EXPECTED = [[3, 1], [3, 0], [3, 1], [6, 3]]


def test_no_cache_computes_without_encoding():
    capability, encoded = counting_capability()
    values = CachedModel(Lengths(capability), None).call(capability, TEXTS, {"lang": None})
    assert encoded == []
    np.testing.assert_array_equal(np.stack(values), np.array(EXPECTED, dtype=np.float32))


def test_a_cache_stores_each_distinct_output_once_and_gives_the_same_values(tmp_path):
    capability, encoded = counting_capability()
    values = CachedModel(Lengths(capability), Cache(tmp_path)).call(capability, TEXTS, {"lang": None})
    assert len(encoded) == 3  # "a b" twice, computed and encoded once
    np.testing.assert_array_equal(np.stack(values), np.array(EXPECTED, dtype=np.float32))
    again, more = counting_capability()
    cached = CachedModel(Lengths(again), Cache(tmp_path)).call(again, TEXTS, {"lang": None})
    assert more == [] and all(np.array_equal(a, b) for a, b in zip(cached, values))
