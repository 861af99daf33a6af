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
    # a text's vector does not depend on its batch: texts of one length (7 tokens) share a batch, and each alone
    # (batch size 1) gives what it gave there; one activation scale per batch (version 2) moved these by 5e-5-8e-5
    same_length = ["a man rides a bike", "two dogs play in snow", "a woman reads a book", "une femme lit un livre"]
    assert {len(ids) for ids in int8.tokenizer(same_length)["input_ids"]} == {7}
    together = int8.encode_texts(same_length)
    alone = HFTextEncoder("m", {"pretrained": bert, "dtype": "int8"}, batch_size=1).encode_texts(same_length)
    np.testing.assert_allclose(alone, together, rtol=0, atol=1e-6)
    # one export, quantised once, in a folder of its own beside the float32 one; a second encoder reuses it
    err = capsys.readouterr().err
    assert err.count("exporting") == 1 and err.count("quantising text-encoder to int8") == 1
    folders = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert len(folders) == 2 and folders[1].startswith("text-encoder-onnx-int8-") and folders[1].endswith("-q4")
    import onnx

    before, ops = ([node.op_type for node in onnx.load(str(tmp_path / f / "encoder.onnx")).graph.node] for f in folders)
    # 3 layers: the 6 weight products of each (query, key, value, attention output, feed-forward in and out) are
    # 8-bit block products, each with its bias inside (18 Adds fewer); the 2 products of activations (query x key,
    # attention x value) stay float32
    assert ops.count("MatMulNBits") == 3 * 6 and ops.count("MatMul") == 3 * 2
    assert before.count("MatMul") == 3 * 8 and before.count("Add") - ops.count("Add") == 3 * 6


def test_block_weights_layout():
    """``MatMulNBits``' layout: column n's inputs in rows of 32 codes (value / block scale + 128), zeros past K."""
    from harness_models.encoders.onnx_int8 import block_weights

    weight = np.zeros((40, 2), dtype=np.float32)  # 2 blocks along the 40 inputs, the second padded with 8 zeros
    weight[0], weight[1], weight[32], weight[33] = [2.0, 0.25], [-0.5, 1.0], [-1.0, 4.0], [0.75, 1.0]
    codes, scales = block_weights(weight)
    assert codes.shape == (2, 2, 32) and codes.dtype == np.uint8
    np.testing.assert_allclose(scales, [[2 / 127, 1 / 127], [1 / 127, 4 / 127]], rtol=1e-7)
    # column 0, block 0: 2 -> 127, -0.5 -> -31.75 -> -32; block 1: -1 -> -127, 0.75 -> 95.25 -> 95
    assert codes[0, 0, :2].tolist() == [255, 96] and codes[0, 1, :2].tolist() == [1, 223]
    # column 1, block 0: 0.25 -> 31.75 -> 32, 1 -> 127; block 1: 4 -> 127, 1 -> 31.75 -> 32
    assert codes[1, 0, :2].tolist() == [160, 255] and codes[1, 1, :2].tolist() == [255, 160]
    assert (codes[:, :, 2:] == 128).all()  # zeros, and the padding past K


def test_block_products_by_hand():
    """``quantise_products`` on one product with its bias: weight and activation scales per block of 32 along the
    inputs (the rows' blocks' largest magnitudes over 127), integer sums per block scaled back, the bias added in
    the same node; a row of zeros gives the bias; a row alone gives what it gave beside others."""
    import onnx
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    from harness_models.encoders.onnx_int8 import quantise_products

    weight = np.zeros((40, 2), dtype=np.float32)  # as in test_block_weights_layout
    weight[0], weight[1], weight[32], weight[33] = [2.0, 0.25], [-0.5, 1.0], [-1.0, 4.0], [0.75, 1.0]
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["product"], name="product"),
            helper.make_node("Add", ["product", "b"], ["y"], name="bias"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None, 40])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, 2])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(np.array([0.25, -1.0], np.float32), "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    quantise_products(model)
    onnx.checker.check_model(model)
    assert [node.op_type for node in model.graph.node] == ["MatMulNBits"]
    assert {tensor.name for tensor in model.graph.initializer} == {"b", "int8/product/w", "int8/product/w_scale"}
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.zeros((3, 40), dtype=np.float32)
    x[0, [0, 1, 32, 33]] = [127.0, 63.4, 0.5, -0.125]
    x[2, [0, 1, 32, 33]] = [-0.5, 0.2, 20.0, 2.0]
    (y,) = session.run(None, {"x": x})
    # row 0, block 0: scale 1, codes (127, 63); block 1: scale 0.5/127, codes (127, -31.75 -> -32) (one scale for
    # the row, 1, would have made them (0, 0)). Codes of the weights: test_block_weights_layout. Column 0: block 0
    # 127*127 + 63*-32 = 14113, times 1 * 2/127; block 1 127*-127 - 32*95 = -19169, times 0.5/127 * 1/127; plus
    # 0.25. Column 1: block 0 127*32 + 63*127 = 12065, times 1/127; block 1 127*127 - 32*32 = 15105, times
    # 0.5/127 * 4/127; minus 1
    assert y[0] == pytest.approx(
        [14113 * 2 / 127 - 19169 * 0.5 / 127**2 + 0.25, 12065 / 127 + 15105 * 2 / 127**2 - 1], rel=1e-6
    )
    assert y[1].tolist() == [0.25, -1.0]
    # row 2, block 0: scale 0.5/127, codes (-127, 50.8 -> 51); block 1: scale 20/127, codes (127, 12.7 -> 13).
    # Column 0: -127*127 + 51*-32 = -17761 and 127*-127 + 13*95 = -14894; column 1: -127*32 + 51*127 = 2413 and
    # 127*127 + 13*32 = 16545
    assert y[2] == pytest.approx(
        [
            -17761 * (0.5 / 127) * (2 / 127) - 14894 * (20 / 127) * (1 / 127) + 0.25,
            2413 * (0.5 / 127) * (1 / 127) + 16545 * (20 / 127) * (4 / 127) - 1,
        ],
        rel=1e-6,
    )
    # a row's scales are its own: row 2 alone gives the same values (one scale per batch would take row 0's and
    # quantise row 2's block 0 to (0, 0) beside it), so a text's vector does not depend on its batch
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
