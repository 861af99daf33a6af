"""ONNX Runtime as the backend of the Hugging Face text encoders and token embedders (``backend`` argument).

The transformers encoder (truncated to its layer for a token embedder) is exported to ONNX
once, with dynamic batch and sequence axes, inputs ``input_ids`` and ``attention_mask`` and output
the last hidden states; the file is kept with the converted models (``HARNESS_MODELS_DIR``), named
by a hash of the source, its content revision, the number of layers, whether the weights were
loaded with ``strict`` and the exporter's version, so a changed model is exported again. Once the
file exists the PyTorch model is not loaded at all (``load_model`` is called only to export): a
strict export exists only if its checkpoint loaded strictly, and the content revision names the weights. Pooling, Dense layers and normalisation stay in PyTorch.
A session runs one thread per call; the adapters run ``onnx_workers()`` batches at once
(``batching.map_batches``), the same numbers as one call at a time. Hidden states equal PyTorch's
within 1e-5 (float32 both); speed against PyTorch in benchmarks/offline-models.md. ``auto``
(the default) takes ONNX Runtime where ``onnxruntime`` and ``onnx`` are installed and it can serve
(float32 on a CPU; ``dtype=int8`` runs only here, see ``onnx_int8``), else PyTorch; the backend is resolved when the adapter is built, so the
model identity names the one that runs: ``backend=onnxruntime`` enters it, ``torch`` does not (a PyTorch
run keeps the identity, cache key and signature it had before the argument existed).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.params import Param
from harness_models.encoders.onnx_int8 import INT8, quantized_folder

EXPORT_VERSION = 2  # bump when the exported graph changes (2: weights in an external data file)
BACKENDS = ("auto", "torch", "onnxruntime")
BACKEND_PARAM = Param(
    "auto",
    "torch, onnxruntime (pip install onnxruntime onnx), or auto: onnxruntime where it is installed "
    "and can serve (float32 on a CPU)",
    str,
    choices=BACKENDS,
)
ONNX_FILE = "encoder.onnx"
WEIGHTS_FILE = "encoder.onnx.data"
# onnx's save_model(size_threshold=1024) moves a tensor out when sys.getsizeof of its bytes object is >= 1024
SMALLEST_MOVED_OUT = 1024 - sys.getsizeof(b"")
ONNX_DTYPES = ("float32", INT8)


def resolve_backend(args: Mapping[str, Any], device: str) -> str:
    """The backend that runs: ``args["backend"]`` unless it is ``auto``, then onnxruntime where it can serve."""
    backend = str(args.get("backend", "auto"))
    if backend != "auto":
        return backend
    serves = (
        args.get("dtype", "float32") in ONNX_DTYPES
        and str(device).startswith("cpu")
        and args.get("pooling") != "pooler"
    )
    installed = all(importlib.util.find_spec(module) is not None for module in ("onnxruntime", "onnx"))
    return "onnxruntime" if serves and installed else "torch"


def backend_identity(args: Mapping[str, Any]) -> dict[str, Any]:
    """``args`` as the identity keeps them: ``backend`` only when it is not ``torch``."""
    return {key: value for key, value in args.items() if key != "backend" or value != "torch"}


def check_backend(model: str, args: Mapping[str, Any], device: str) -> None:
    """A ``HarnessError`` when ``backend=onnxruntime`` is asked for what it does not run, or ``dtype=int8`` of
    another backend."""
    if args.get("dtype") == INT8 and args.get("backend") != "onnxruntime":
        raise HarnessError(
            f"model {model!r}: dtype=int8 runs in ONNX Runtime on a CPU only (pip install onnxruntime onnx; "
            f"backend=auto or onnxruntime, --device cpu)"
        )
    if args.get("backend") != "onnxruntime":
        return
    if args.get("dtype", "float32") not in ONNX_DTYPES or not str(device).startswith("cpu"):
        raise HarnessError(
            f"model {model!r}: backend=onnxruntime runs float32 on a CPU only (or int8); use backend=torch for "
            f"dtype={args.get('dtype')} on {device}"
        )
    if args.get("pooling") == "pooler":
        raise HarnessError(f"model {model!r}: backend=onnxruntime does not run the pooler; use backend=torch")


def onnx_workers() -> int:
    """How many batches run at once in ONNX Runtime, one thread each: PyTorch's thread count.

    One thread per session call and batches side by side keep every core on whole matrix products;
    splitting each small operation of a short text across threads spends much of the time waiting.
    """
    import torch

    return max(1, torch.get_num_threads())


def export_folder(name: str, source: str, revision: str, layers: int | None, strict: bool = True) -> Path:
    """Where an export is kept: ``<models dir>/<name>-onnx-<key>``, the key a hash of the source, its content
    revision, the layers kept (None: all), ``strict`` (when false) and the exporter's version."""
    from harness_models.packaged.converted import converted_folder

    kept = "all" if layers is None else layers
    text = f"{source}\0{revision}\0{kept}\0{EXPORT_VERSION}" + ("" if strict else "\0lenient")
    return converted_folder(f"{name}-onnx", hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:20])


def onnx_hidden_states(
    load_model: Callable[[], Any], name: str, target: Path, dtype: str = "float32"
) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``f(input_ids, attention_mask) -> last hidden states`` (int64 arrays in, float32 (N, T, D) out) of
    the model ``load_model()`` returns, exported to ONNX once into ``target`` (``export_folder``; sealed and
    verified at every open by ``harness.artefacts``, so a damaged export is exported again; ``load_model`` is
    called only then; ``dtype=int8``: that export quantised once, ``onnx_int8``) and run in ONNX Runtime."""
    import torch

    from harness.artefacts import ensure_built, sealed_digest

    try:
        import onnx
        import onnxruntime as runtime
    except ImportError:
        raise HarnessError(
            f"model {name!r} with backend=onnxruntime needs onnxruntime and onnx: pip install onnxruntime onnx"
        ) from None

    class Hidden(torch.nn.Module):
        def __init__(self, model: Any) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            return self.model(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    def export(folder: Path) -> None:
        example = torch.ones(2, 8, dtype=torch.long)
        axes = {0: "texts", 1: "tokens"}
        graph = Captured()
        with warnings.catch_warnings():  # the exporter's notes on tracing and constant folding
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Hidden(loaded if loaded is not None else load_model()).eval(),
                (example, example),
                graph,  # type: ignore[arg-type]  # the TorchScript exporter (dynamo=False) writes to a file object
                dynamo=False,
                input_names=["input_ids", "attention_mask"],
                output_names=["hidden"],
                opset_version=17,
                dynamic_axes={"input_ids": axes, "attention_mask": axes, "hidden": axes},
            )
        # the weights in a file beside the graph: ONNX Runtime maps it instead of copying it (10x faster to open)
        save_with_external_weights(onnx.load_model_from_string(graph.take()), folder)

    # weights that cannot be loaded fail here, before the export announces itself: a refused model is one error line
    loaded = None if sealed_digest(target) is not None else load_model()
    folder = ensure_built(target, export, f"exporting {name} to ONNX ({target.name.rsplit('-', 1)[1]})")
    if dtype == INT8:
        folder = quantized_folder(folder / ONNX_FILE, name)
    options = runtime.SessionOptions()
    # parallel over batches (onnx_workers): one thread per call, so no thread of a call ever waits on another
    # (nothing spins when other processes hold the cores: benchmarks/native_under_load.md)
    options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
    options.graph_optimization_level = runtime.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = runtime.InferenceSession(str(folder / ONNX_FILE), options, providers=["CPUExecutionProvider"])
    inputs = {node.name for node in session.get_inputs()}  # layer 0 (the embeddings) does not read the mask

    def hidden_states(input_ids: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
        feeds = {"input_ids": input_ids.astype(np.int64), "attention_mask": attention_mask.astype(np.int64)}
        return np.asarray(session.run(None, {k: v for k, v in feeds.items() if k in inputs})[0], dtype=np.float32)

    return hidden_states


class Captured:
    """A file object for the exporter that keeps the bytes it is given (``io.BytesIO`` copies them)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []

    def write(self, data: bytes) -> int:
        """Keep ``data`` (not a copy)."""
        self.chunks.append(data)
        return len(data)

    def flush(self) -> None:
        """Nothing to flush."""

    def take(self) -> bytes:
        """Everything written, given up: one write is handed back as it is (joining one item copies nothing)."""
        data = b"".join(self.chunks)
        self.chunks.clear()
        return data


def save_with_external_weights(model: Any, folder: Path) -> None:
    """``model`` (an ``onnx.ModelProto``) as ``ONNX_FILE`` with its large initializers in ``WEIGHTS_FILE``.

    The same two files as onnx's ``save_model(model, ONNX_FILE, save_as_external_data=True,
    location=WEIGHTS_FILE, size_threshold=1024)`` for a graph without subgraphs (the exporter's), where
    one tensor at least is moved out; onnx copies each tensor's bytes out of the message twice, this once.
    """
    import onnx

    with open(folder / WEIGHTS_FILE, "wb") as weights:
        for tensor in model.graph.initializer:
            if tensor.HasField("raw_data"):
                _move_out(tensor, weights)
    onnx.save_model(model, str(folder / ONNX_FILE))


def _move_out(tensor: Any, weights: Any) -> None:
    """Append the bytes of ``tensor`` (a ``TensorProto``) to ``weights`` and point it there, unless it is small."""
    from onnx.external_data_helper import set_external_data

    data = tensor.raw_data  # a copy out of the message: taken once
    if len(data) < SMALLEST_MOVED_OUT:
        return
    offset = weights.tell()
    weights.write(data)
    set_external_data(tensor, WEIGHTS_FILE, offset, len(data))
    tensor.ClearField("raw_data")
