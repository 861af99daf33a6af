"""``dtype=int8`` of the text encoders: the float32 ONNX export quantised once, run in ONNX Runtime.

ONNX Runtime's dynamic quantisation (``onnxruntime.quantization.quantize_dynamic``) stores the
weights of the matrix products as signed 8-bit integers with one scale per output channel, and
quantises each batch's activations to unsigned 8 bits on the fly, one scale per batch; the products
then run on integer dot products (AVX-512 VNNI or AVX-VNNI where the CPU has them, AVX2 otherwise),
and layer norms, softmax and GELU stay float32. The feed-forward output projections stay float32
too: their input, the GELU's output, has the widest range of any product's, and one 8-bit scale
for a whole batch of it cost e5-small four times the error of every other product together (cosine
to float32 0.9962 against 0.9991 on IKEA descriptions). Because the scale is the batch's, a
vector depends slightly on the other texts of its batch, unlike float32's (with every product
quantised, minilm's vectors at batch sizes 1 and 32 differed by up to 3e-2 in a component): int8
runs reproduce to about that, not bitwise, when the cache hands the model other batches. The quantised graph is written beside the float32 export, named by the
same key (``<models dir>/<name>-onnx-int8-<key>``), and the dtype enters the model identity, so int8
vectors never share a cache entry or a signature with float32 ones. Agreement with float32 on IKEA
and speed: benchmarks/text_encoding.md.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from harness.errors import HarnessError
from harness.params import Param

INT8 = "int8"
QUANTISE_VERSION = 2  # bump when the settings change (2: FFN outputs kept float32); the identity dtype must say so too
# the feed-forward output projection of BERT, RoBERTa and XLM-R layers (".../layer.N/output/dense") and of
# DistilBERT's (".../ffn/lin2"), as the TorchScript exporter names their nodes
KEPT_FLOAT = re.compile(r"/layer\.\d+/output/dense/MatMul$|/ffn/lin2/MatMul$")
TEXT_DTYPES = ("float32", "float16", "bfloat16", INT8)
TEXT_DTYPE_PARAM = Param(
    "float32",
    "weights and activations dtype: float32, float16 / bfloat16 on a GPU (bfloat16 also on a CPU), or int8 "
    "(a CPU with ONNX Runtime: 8-bit weights and dynamically quantised activations)",
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
            from onnxruntime.quantization import QuantType, quantize_dynamic
        except ImportError as exc:  # onnxruntime without its quantisation tools (they need onnx)
            raise HarnessError(f"model {name!r} with dtype=int8 needs onnxruntime's quantization: {exc}") from None
        graph = onnx.load(str(float_graph), load_external_data=False).graph
        kept = [node.name for node in graph.node if node.op_type == "MatMul" and KEPT_FLOAT.search(node.name)]
        logging.disable(logging.WARNING)  # the tool's advice (on the root logger) to pre-process the graph first
        try:
            quantize_dynamic(
                float_graph,
                folder / float_graph.name,
                op_types_to_quantize=["MatMul"],  # the embeddings (Gather) stay float32: a lookup gains nothing
                nodes_to_exclude=kept,
                per_channel=True,
                weight_type=QuantType.QInt8,  # with uint8 activations: the u8 x s8 products VNNI runs
            )
        finally:
            logging.disable(logging.NOTSET)

    target = int8_folder(float_graph.parent)
    return ensure_built(target, quantise, f"quantising {name} to int8 ({target.name})")
