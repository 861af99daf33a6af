"""``dtype=int8`` of the text encoders: the float32 ONNX export quantised once, run in ONNX Runtime.

The products of an activation with a weight (query, key, value, attention output, feed-forward input)
become integer ones: the weights as signed 8-bit integers with one scale per output channel, the
activations quantised on the fly to 8 bits with **one scale per row** (token), the row's largest
magnitude over 127, so that a text's vector does not depend on the other texts of its batch (ONNX
Runtime's ``quantize_dynamic``, version 2, took one scale per batch: minilm's vectors at batch sizes 1
and 32 differed by up to 3e-2 in a component). The feed-forward output projections stay float32: their
input, the GELU's output, has the widest range of any product's (quantising them too moved minilm's IKEA
XLR by up to 0.016, against 0.015 kept). The integer products run as ``MatMulInteger`` (uint8 activations
shifted by 128 against int8 weights: the u8 x s8 dot products of AVX-512 VNNI or AVX-VNNI where the CPU
has them, AVX2 otherwise); layer norms, softmax, GELU, the embeddings and the products of two activations
(query x key, attention x value) stay float32. The quantised graph is written beside the float32 export,
named by the same key (``<models dir>/<name>-onnx-int8-<key>-q<version>``), and the dtype enters the model
identity, so int8 vectors never share a cache entry or a signature with float32 ones. Agreement with
float32 on IKEA and speed: benchmarks/offline-models.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.params import Param

INT8 = "int8"
QUANTISE_VERSION = 3  # bump when the graph changes (2: FFN outputs kept float32; 3: a scale per row, all products)
LEVELS = 127.0  # symmetric 8-bit range of weights and activations: -127 .. 127
# the feed-forward output projection of BERT, RoBERTa and XLM-R layers (".../layer.N/output/dense") and of
# DistilBERT's (".../ffn/lin2"), as the TorchScript exporter names their nodes: kept float32
KEPT_FLOAT = re.compile(r"/layer\.\d+/output/dense/MatMul$|/ffn/lin2/MatMul$")
TEXT_DTYPES = ("float32", "float16", "bfloat16", INT8)
TEXT_DTYPE_PARAM = Param(
    "float32",
    "weights and activations dtype: float32, float16 / bfloat16 on a GPU (bfloat16 also on a CPU), or int8 "
    "(a CPU with ONNX Runtime: 8-bit weights, activations quantised per row on the fly)",
    str,
    choices=TEXT_DTYPES,
)


def int8_folder(export: Path) -> Path:
    """Where the int8 form of the float32 export folder ``export`` (``<name>-onnx-<key>``) is kept:
    ``<name>-onnx-int8-<key>-q<version>`` beside it."""
    stem, key = export.name.rsplit("-onnx-", 1)
    return export.parent / f"{stem}-onnx-int8-{key}-q{QUANTISE_VERSION}"


def quantized_folder(float_graph: Path, name: str) -> Path:
    """A folder holding ``float_graph`` (the float32 export) quantised to int8 under the same file name, built once
    and sealed (``harness.artefacts.ensure_built``: verified at every open, built again when damaged)."""
    from harness.artefacts import ensure_built

    def quantise(folder: Path) -> None:
        try:
            import onnx
        except ImportError as exc:
            raise HarnessError(f"model {name!r} with dtype=int8 needs the onnx package: {exc}") from None
        model = onnx.load(str(float_graph))  # the weights too, from the file beside it
        quantise_products(model)
        onnx.save_model(model, str(folder / float_graph.name))

    target = int8_folder(float_graph.parent)
    return ensure_built(target, quantise, f"quantising {name} to int8 ({target.name})")


def quantise_products(model: Any) -> None:
    """Replace in ``model`` (an ``onnx.ModelProto``) every ``MatMul`` of an activation by a weight (an initializer)
    with its integer form: per-row activation scales, per-column weight scales (the module's docstring)."""
    from onnx import numpy_helper

    graph = model.graph
    opset = next((entry.version for entry in model.opset_import if entry.domain in ("", "ai.onnx")), 17)
    weights = {tensor.name: tensor for tensor in graph.initializer}
    shared = [
        numpy_helper.from_array(np.array(value, dtype), name)
        for name, value, dtype in (
            ("int8/levels", LEVELS, np.float32),
            ("int8/smallest", np.finfo(np.float32).tiny, np.float32),
            ("int8/low", -LEVELS, np.float32),
            ("int8/high", LEVELS, np.float32),
            ("int8/shift", 128.0, np.float32),
            ("int8/zero", 128, np.uint8),
            *([("int8/last_axis", [-1], np.int64)] if opset >= 18 else []),
        )
    ]
    nodes, added, replaced = [], [], set()
    for node in graph.node:
        if node.op_type != "MatMul" or node.input[1] not in weights or KEPT_FLOAT.search(node.name):
            nodes.append(node)
            continue
        weight = numpy_helper.to_array(weights[node.input[1]]).astype(np.float32)  # (in, out)
        scale = np.maximum(np.abs(weight).max(axis=0), np.finfo(np.float32).tiny) / LEVELS
        prefix = f"int8/{node.name or node.output[0]}"
        added += [
            numpy_helper.from_array(np.clip(np.round(weight / scale), -LEVELS, LEVELS).astype(np.int8), f"{prefix}/w"),
            numpy_helper.from_array(scale.astype(np.float32), f"{prefix}/w_scale"),
        ]
        replaced.add(node.input[1])
        nodes += _integer_product(node.input[0], prefix, node.output[0], opset)
    kept = [tensor for tensor in graph.initializer if tensor.name not in replaced]
    del graph.initializer[:]
    graph.initializer.extend(kept + shared + added)
    del graph.node[:]
    graph.node.extend(nodes)


def _integer_product(activation: str, prefix: str, output: str, opset: int) -> list[Any]:
    """The nodes of ``output = activation @ weight`` with ``activation`` quantised per row (``prefix``/w and
    ``prefix``/w_scale are the weight and its per-column scales); ``ReduceMax`` takes its axes as an input from
    opset 18 on, as an attribute before."""
    from onnx import TensorProto, helper

    def name(part: str) -> str:
        return f"{prefix}/{part}"

    return [
        helper.make_node("Abs", [activation], [name("abs")]),
        helper.make_node("ReduceMax", [name("abs"), "int8/last_axis"], [name("largest")], keepdims=1)
        if opset >= 18
        else helper.make_node("ReduceMax", [name("abs")], [name("largest")], axes=[-1], keepdims=1),
        helper.make_node("Div", [name("largest"), "int8/levels"], [name("row_scale0")]),
        helper.make_node("Max", [name("row_scale0"), "int8/smallest"], [name("row_scale")]),  # a row of zeros
        helper.make_node("Div", [activation, name("row_scale")], [name("scaled")]),
        helper.make_node("Round", [name("scaled")], [name("rounded")]),
        helper.make_node("Clip", [name("rounded"), "int8/low", "int8/high"], [name("clipped")]),
        helper.make_node("Add", [name("clipped"), "int8/shift"], [name("shifted")]),
        helper.make_node("Cast", [name("shifted")], [name("u8")], to=TensorProto.UINT8),
        helper.make_node("MatMulInteger", [name("u8"), name("w"), "int8/zero"], [name("i32")]),
        helper.make_node("Cast", [name("i32")], [name("sums")], to=TensorProto.FLOAT),
        helper.make_node("Mul", [name("sums"), name("row_scale")], [name("rows_scaled")]),
        helper.make_node("Mul", [name("rows_scaled"), name("w_scale")], [output]),
    ]
