"""The ONNX export's own writer of the external weights file: the same two files, byte for byte, as onnx's
``save_model(save_as_external_data=True, size_threshold=1024)``, which copied the 470 MB of e5-small twice more."""

from __future__ import annotations

import io

import numpy as np
import pytest
from tiny_models import tiny_bert

from harness_models.encoders.onnx_encoder import ONNX_FILE, WEIGHTS_FILE, Captured, save_with_external_weights

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


def onnx_save(model, folder):
    folder.mkdir()
    onnx.save_model(
        model, str(folder / ONNX_FILE), save_as_external_data=True, location=WEIGHTS_FILE, size_threshold=1024
    )


def ours_save(model, folder):
    folder.mkdir()
    save_with_external_weights(model, folder)


def assert_same_files(left, right):
    for name in (ONNX_FILE, WEIGHTS_FILE):
        assert (left / name).read_bytes() == (right / name).read_bytes(), name


def graph_of_sizes():
    """Byte tensors of 990 and 991 bytes (onnx moves a tensor out from len + 33 >= 1024), larger float ones,
    and one held in float_data rather than raw_data (never moved)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    tensors = [
        numpy_helper.from_array(rng.integers(0, 255, size, dtype=np.uint8), f"bytes{size}") for size in (990, 991)
    ]
    tensors += [
        numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), f"w{i}")
        for i, shape in enumerate([(3, 500), (2,), (40, 7)])
    ]
    tensors.append(helper.make_tensor("listed", TensorProto.FLOAT, (300,), rng.standard_normal(300).tolist()))
    nodes = [helper.make_node("Identity", [t.name], [f"out_{t.name}"]) for t in tensors]
    outputs = [helper.make_tensor_value_info(f"out_{t.name}", t.data_type, list(t.dims)) for t in tensors]
    graph = helper.make_graph(nodes, "sizes", [], outputs, initializer=tensors)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_the_files_are_onnx_save_models_byte_for_byte(tmp_path):
    model = graph_of_sizes()
    onnx_save(graph_of_sizes(), tmp_path / "onnx")
    ours_save(model, tmp_path / "ours")
    assert_same_files(tmp_path / "onnx", tmp_path / "ours")
    moved = [t.name for t in model.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL]
    assert moved == ["bytes991", "w0", "w2"]  # 990 + 33 < 1024; 2 floats are 8 bytes; float_data stays
    assert (tmp_path / "ours" / WEIGHTS_FILE).stat().st_size == 991 + 3 * 500 * 4 + 40 * 7 * 4


def test_an_exported_bert_saves_as_onnx_saves_it_and_runs_the_same(tmp_path):
    import onnxruntime
    import torch
    from transformers import BertModel

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = BertModel.from_pretrained(tiny_bert(tmp_path / "bert", layers=2)).eval()

        def forward(self, input_ids):
            return self.bert(input_ids=input_ids).last_hidden_state

    example = torch.ones(2, 5, dtype=torch.long)
    written, buffer = Captured(), io.BytesIO()
    for target in (written, buffer):
        torch.onnx.export(Hidden(), (example,), target, dynamo=False, input_names=["input_ids"], opset_version=17)
    exported = written.take()
    assert exported == buffer.getvalue()  # the exporter wrote it to the file object in full
    onnx_save(onnx.load_model_from_string(buffer.getvalue()), tmp_path / "onnx")
    ours_save(onnx.load_model_from_string(exported), tmp_path / "ours")
    assert_same_files(tmp_path / "onnx", tmp_path / "ours")
    ids = np.array([[2, 7, 9, 3, 1], [2, 5, 3, 0, 0]], dtype=np.int64)
    runs = [
        onnxruntime.InferenceSession(str(tmp_path / side / ONNX_FILE)).run(None, {"input_ids": ids})[0]
        for side in ("onnx", "ours")
    ]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_captured_hands_back_one_write_without_copying_it():
    written = Captured()
    data = bytes(range(256)) * 4
    assert written.write(data) == 1024
    assert written.take() is data
    written.write(b"ab")
    written.write(b"cd")
    assert written.take() == b"abcd"
    assert written.take() == b""  # given up
