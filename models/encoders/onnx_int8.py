"""``dtype=int8`` of the text encoders: the float32 ONNX export quantised once, run in ONNX Runtime.

Every product of an activation with a weight (query, key, value, attention output, feed-forward input and
output) becomes ONNX Runtime's ``MatMulNBits`` with 8-bit blocks (``bits=8``, ``block_size=32``,
``accuracy_level=4``): the weights as 8-bit integers with one scale per block of 32 consecutive inputs of each
output column (symmetric, the block's largest magnitude over 127), and, at run time, the activations quantised
the same way, **one scale per block of 32 values of each row** (token), then integer dot products (MLAS's int8
kernels: AVX-512 VNNI or AVX-VNNI where the CPU has them) scaled back per block. The bias is added inside the
same node. A row's scales are its own, so a text's vector does not depend on the other texts of its batch
(ONNX Runtime's ``quantize_dynamic``, version 2, took one scale per batch: minilm's vectors at batch sizes 1
and 32 differed by up to 3e-2 in a component). Version 3 took one scale per row, over all 384 or 1,536 values:
one large value coarsened the whole row, so the feed-forward output projections, whose input (the GELU's
output) has the widest range, had to stay float32. A block scale follows the values of its 32 inputs only, so
the rule here is the plain one, every weight product, with no exception chosen by results: on the Multi30K
validation captions (en, de, fr; 3,042 texts, not a test set) the mean cosine distance to float32 fell from
version 3's 2.2e-3 (minilm) and 8.1e-4 (e5-small-hf) to 3.5e-4 and 1.1e-4. Layer norms, softmax, GELU, the
embeddings and the products of two activations (query x key, attention x value) stay float32. On IKEA test,
XLR and BackRetrieval (Recall@10) of both models in all four directions stay within 0.0089 of float32 (version
3: 0.0148); int8 runs 1.12-1.17x our float32 (version 3: 1.34-1.37x; the block scales cost speed). On a CPU
without an int8 kernel for 8-bit blocks ONNX Runtime multiplies the float activations by the dequantised
weights instead (closer to float32, still batch-independent). The quantised graph is written beside the
float32 export, named by the same key (``<models dir>/<name>-onnx-int8-<key>-q<version>``); the dtype enters
the model identity, so int8 vectors never share a cache entry or a signature with float32 ones, and the int8
folder's sealed digest enters every cache key, so version 4's vectors never reuse version 3's cache entries; a
signature tells the versions apart through the adapter's code digest (this module's source, which the adapters
import, in an editable or folder install; the distribution's version in a released one). Agreement with float32
on IKEA and speed: benchmarks/offline-models.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.params import Param

INT8 = "int8"
QUANTISE_VERSION = 4  # bump when the graph changes (2: FFN outputs kept float32; 3: a scale per row; 4: per block)
LEVELS = 127.0  # symmetric 8-bit range of weights and activations: -127 .. 127
BLOCK = 32  # values along the inner dimension that share one scale (MLAS has int8 kernels for 16, 32, 64, ...)
TEXT_DTYPES = ("float32", "float16", "bfloat16", INT8)
TEXT_DTYPE_PARAM = Param(
    "float32",
    "weights and activations dtype: float32, float16 / bfloat16 on a GPU (bfloat16 also on a CPU), or int8 "
    "(a CPU with ONNX Runtime: 8-bit weights, activations quantised on the fly, one scale per 32 values)",
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


def block_weights(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``weight`` (inputs K x outputs N) as ``MatMulNBits`` takes it with 8 bits: codes (N, blocks, BLOCK) uint8,
    column ``n``'s inputs ``b * BLOCK ..`` in row ``[n, b]`` (zeros past K), each the value over its block's scale,
    rounded, plus 128 (the operator's default zero point); scales (N, blocks) float32."""
    inputs, outputs = weight.shape
    blocks = -(-inputs // BLOCK)
    padded = np.zeros((blocks * BLOCK, outputs), np.float32)
    padded[:inputs] = weight
    grouped = padded.T.reshape(outputs, blocks, BLOCK)
    scales = np.maximum(np.abs(grouped).max(axis=2), np.finfo(np.float32).tiny) / LEVELS
    codes = np.clip(np.round(grouped / scales[..., None]), -LEVELS, LEVELS) + 128
    return codes.astype(np.uint8), scales.astype(np.float32)


def quantise_products(model: Any) -> None:
    """Replace in ``model`` (an ``onnx.ModelProto``) every ``MatMul`` of an activation by a weight (an initializer)
    with ``MatMulNBits`` (8-bit blocks of ``BLOCK``, activations quantised per block of each row: the module's
    docstring), taking in the bias of an ``Add`` that is the product's only use (the node then stands where the
    ``Add`` stood, after its bias is defined)."""
    from onnx import helper, numpy_helper

    graph = model.graph
    weights = {tensor.name: tensor for tensor in graph.initializer}
    constants = dict(weights)  # the exporter shares equal tensors (a random model's zero biases) through Identity
    uses: dict[str, list[Any]] = {}
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in weights:
            constants[node.output[0]] = weights[node.input[0]]
        for name in node.input:
            uses.setdefault(name, []).append(node)
    results = {value.name for value in graph.output}  # a product the graph returns keeps its own name
    nodes: list[Any] = []
    added: list[Any] = []
    fused: dict[str, Any] = {}  # the output of a bias Add -> the node that replaces it and its product
    for node in graph.node:
        if node.op_type == "Add" and node.output[0] in fused:
            nodes.append(fused[node.output[0]])
            continue
        if node.op_type != "MatMul" or node.input[1] not in weights:
            nodes.append(node)
            continue
        weight = numpy_helper.to_array(weights[node.input[1]]).astype(np.float32)  # (in, out)
        codes, scales = block_weights(weight)
        prefix = f"int8/{node.name or node.output[0]}"
        added += [numpy_helper.from_array(codes, f"{prefix}/w"), numpy_helper.from_array(scales, f"{prefix}/w_scale")]
        inputs, output = [node.input[0], f"{prefix}/w", f"{prefix}/w_scale"], node.output[0]
        add = None if output in results else _bias_add(uses.get(output, []), output, constants, weight.shape[1])
        if add is not None:
            inputs += ["", "", add.input[1] if add.input[0] == output else add.input[0]]  # no zero points, g_idx
            output = add.output[0]
        product = helper.make_node(
            "MatMulNBits",
            inputs,
            [output],
            name=node.name,
            domain="com.microsoft",
            K=weight.shape[0],
            N=weight.shape[1],
            bits=8,
            block_size=BLOCK,
            accuracy_level=4,  # int8 activations, int32 sums
        )
        if add is None:
            nodes.append(product)
        else:
            fused[output] = product
    used = {name for node in nodes for name in node.input}
    kept = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    del graph.node[:]
    graph.node.extend(nodes)
    if not any(entry.domain == "com.microsoft" for entry in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))


def _bias_add(uses: list[Any], product: str, constants: dict[str, Any], outputs: int) -> Any:
    """The ``Add`` node of ``product`` and a bias (a constant float32 vector of ``outputs`` values) when it is the
    product's only use, else None."""
    from onnx import TensorProto

    if len(uses) != 1 or uses[0].op_type != "Add" or len(uses[0].input) != 2:
        return None
    bias = constants.get(uses[0].input[1] if uses[0].input[0] == product else uses[0].input[0])
    if bias is None or bias.data_type != TensorProto.FLOAT or list(bias.dims) != [outputs]:
        return None
    return uses[0]
