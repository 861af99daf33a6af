"""``dtype`` on the text encoder and the token embedder: float16 needs a GPU, bfloat16 runs on a CPU and is
recorded in the model identity (so its vectors never share a cache entry with float32 ones)."""

from __future__ import annotations

import numpy as np
import pytest
from tiny_models import tiny_bert

from harness.errors import HarnessError
from harness_models.encoders.text import HFTextEncoder
from harness_models.token_embedders.hf import HFTokenEmbedder

TEXTS = ["a man rides a horse", "two dogs play in the snow", "a woman reads"]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("bert"), layers=2)


@pytest.mark.parametrize("adapter, extra", [(HFTextEncoder, {}), (HFTokenEmbedder, {"layer": 2})])
def test_float16_on_a_cpu_is_refused_with_the_fix(bert, adapter, extra):
    with pytest.raises(HarnessError, match=r"model 'bert': dtype=float16 needs a GPU .* use dtype=bfloat16 or float32"):
        adapter("bert", {"pretrained": str(bert), "dtype": "float16", **extra}, device="cpu").identity()


@pytest.mark.parametrize("adapter, extra", [(HFTextEncoder, {}), (HFTokenEmbedder, {"layer": 2})])
def test_dtype_is_in_the_identity(bert, adapter, extra):
    plain = adapter("bert", {"pretrained": str(bert), **extra}).identity()
    half = adapter("bert", {"pretrained": str(bert), "dtype": "bfloat16", **extra}).identity()
    assert (plain.dtype, half.dtype) == ("float32", "bfloat16")
    assert plain.digest() != half.digest()
    # a GPU may take float16 (nothing is loaded for the identity)
    assert (
        adapter("bert", {"pretrained": str(bert), "dtype": "float16", **extra}, device="cuda").identity().dtype
        == "float16"
    )


def test_bfloat16_text_vectors_are_float32_arrays_close_to_float32(bert):
    reference = HFTextEncoder("bert", {"pretrained": str(bert)}).encode_texts(TEXTS)
    vectors = HFTextEncoder("bert", {"pretrained": str(bert), "dtype": "bfloat16"}).encode_texts(TEXTS)
    assert vectors.dtype == np.float32 and vectors.shape == reference.shape
    assert (vectors * reference).sum(1).min() > 0.99  # both L2-normalised: cosines
    assert np.abs(vectors - reference).max() > 1e-4  # it really ran in bfloat16


def test_bfloat16_token_vectors(bert):
    [reference] = HFTokenEmbedder("bert", {"pretrained": str(bert), "layer": 2}).embed_tokens(TEXTS[:1])
    [half] = HFTokenEmbedder("bert", {"pretrained": str(bert), "layer": 2, "dtype": "bfloat16"}).embed_tokens(TEXTS[:1])
    assert half.tokens == reference.tokens and half.vectors.dtype == np.float32
    np.testing.assert_allclose(half.vectors, reference.vectors, atol=0.1)
    assert np.abs(half.vectors - reference.vectors).max() > 1e-4
