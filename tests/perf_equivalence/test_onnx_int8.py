"""dtype=int8 of hf-text-encoder: the float32 ONNX export quantised once, close to float32, its own identity."""

from __future__ import annotations

import numpy as np
import pytest
from tiny_models import tiny_bert

from harness.errors import HarnessError
from harness_models.encoders.text import HFTextEncoder
from harness_models.token_embedders.hf import HFTokenEmbedder

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

TEXTS = ["a man rides a bike down the street", "zwei Hunde", "une femme lit un livre", "a", "zwei Hunde"]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return str(tiny_bert(tmp_path_factory.mktemp("bert"), layers=3))


def test_int8_vectors_are_close_to_float32_but_not_equal(bert, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path))
    exact = HFTextEncoder("m", {"pretrained": bert}).encode_texts(TEXTS)
    int8 = HFTextEncoder("m", {"pretrained": bert, "dtype": "int8"})
    assert int8.args["backend"] == "onnxruntime"  # auto: the only backend that runs int8
    quantised = int8.encode_texts(TEXTS)
    assert quantised.shape == exact.shape == (len(TEXTS), 32)
    np.testing.assert_allclose(np.linalg.norm(quantised, axis=1), 1.0, atol=1e-6)
    cosines = (quantised * exact).sum(axis=1)
    assert cosines.min() > 0.95 and not np.array_equal(quantised, exact)
    np.testing.assert_array_equal(quantised[1], quantised[4])  # the same text, the same vector
    # one export, quantised once, in a folder of its own beside the float32 one; a second encoder reuses it
    HFTextEncoder("m", {"pretrained": bert, "dtype": "int8"}).encode_texts(TEXTS[:1])
    err = capsys.readouterr().err
    assert err.count("exporting") == 1 and err.count("quantising text-encoder to int8") == 1
    folders = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert len(folders) == 2 and folders[1].startswith("text-encoder-onnx-int8-") and folders[1].endswith("-q3")
    import onnx

    ops = [node.op_type for node in onnx.load(str(tmp_path / folders[1] / "encoder.onnx")).graph.node]
    # 3 layers: 5 weight products of each (query, key, value, attention out, FFN in) are integer ones; the FFN
    # out and the 2 products of activations (query x key, attention x value) stay float32
    assert ops.count("MatMulInteger") == 3 * 5 and ops.count("MatMul") == 3 * 3


def test_integer_products_by_hand():
    """``quantise_products`` on one product: weight scales per column, activation scales per row (the rows' largest
    magnitudes over 127), the integer sum scaled back; a row of zeros gives zeros."""
    import onnx
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    from harness_models.encoders.onnx_int8 import quantise_products

    weight = np.array([[1.0, -0.5], [2.0, 0.25], [-1.0, 1.0]], dtype=np.float32)  # column maxima 2 and 1
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="product")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 2])],
        [numpy_helper.from_array(weight, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    quantise_products(model)
    onnx.checker.check_model(model)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.array([[127.0, 63.4, -1.0], [0.0, 0.0, 0.0], [0.5, 0.25, 0.125]], dtype=np.float32)
    (y,) = session.run(None, {"x": x})
    # row 0: scale 1, quantised (127, 63, -1); weights by column: scale 2/127 -> (64, 127, -64) (63.5 rounds to
    # even), scale 1/127 -> (-64, 32, 127) (-63.5 and 31.75); sums 127*64 + 63*127 - 1*-64 = 16193 and
    # 127*-64 + 63*32 - 127 = -6239, times the scales
    assert y[0] == pytest.approx([16193 * 2 / 127, -6239 / 127], rel=1e-6)
    assert y[1].tolist() == [0.0, 0.0]
    # row 2: scale 0.5/127, quantised (127, 64, 32) (63.5 rounds to even): sums 127*64 + 64*127 - 32*64 = 14208
    # and 127*-64 + 64*32 + 32*127 = -2016
    assert y[2] == pytest.approx([14208 * (0.5 / 127) * (2 / 127), -2016 * (0.5 / 127) * (1 / 127)], rel=1e-6)
    # a row's scale is its own: row 2 alone gives the same values (one scale per batch would take row 0's 1.0
    # and quantise row 2 to (0, 0, 0) beside it), so a text's vector does not depend on its batch
    assert session.run(None, {"x": x[2:]})[0][0].tolist() == y[2].tolist()


def test_int8_is_its_own_identity(bert):
    float32 = HFTextEncoder("m", {"pretrained": bert}).identity()
    int8 = HFTextEncoder("m", {"pretrained": bert, "dtype": "int8"}).identity()
    assert (float32.dtype, int8.dtype) == ("float32", "int8")
    assert int8.digest() != float32.digest()  # another cache key and signature


def test_int8_outside_onnx_runtime_is_refused(bert):
    with pytest.raises(HarnessError, match="dtype=int8 runs in ONNX Runtime on a CPU only"):
        HFTextEncoder("m", {"pretrained": bert, "dtype": "int8", "backend": "torch"}).identity()
    with pytest.raises(HarnessError, match="dtype=int8 runs in ONNX Runtime on a CPU only"):
        HFTextEncoder("m", {"pretrained": bert, "dtype": "int8"}, device="cuda").identity()
    with pytest.raises(HarnessError, match="int8"):  # the token embedder has no int8
        HFTokenEmbedder("m", {"pretrained": bert, "layer": 2, "dtype": "int8"})
