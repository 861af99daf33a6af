"""The ``dtype`` model argument of the encoders: float32, or half precision where it is honest.

``float16`` and ``bfloat16`` are meant for GPUs. On a CPU, ``bfloat16`` is allowed (PyTorch's
CPU kernels run it, with native instructions on CPUs that have AVX512-BF16 or AMX) and its
vectors differ from float32 ones by about 1e-2, which is why the dtype is part of the model
identity (cache key and signature). ``float16`` on a CPU is refused: most CPU kernels emulate
it, slower than float32, so it would be neither fast nor the numbers a GPU run gives. ``int8``
(the text encoders only, in ONNX Runtime on a CPU) is in ``onnx_int8``.
"""

from __future__ import annotations

from typing import Any

from harness.errors import HarnessError
from harness.params import Param

DTYPES = ("float32", "float16", "bfloat16")
DTYPE_PARAM = Param(
    "float32",
    "weights and activations dtype: float32, or float16 / bfloat16 on a GPU (bfloat16 also on a CPU)",
    str,
    choices=DTYPES,
)


def checked_dtype(model: str, dtype: str, device: str) -> str:
    """``dtype`` if the device can run it honestly, else a ``HarnessError`` saying what to use."""
    if dtype == "int8":  # ONNX Runtime's (onnx_int8), checked with the backend (onnx_encoder.check_backend)
        if str(device).split(":")[0] != "cpu":
            raise HarnessError(f"model {model!r}: dtype=int8 runs in ONNX Runtime on a CPU only (--device cpu)")
        return dtype
    if dtype not in DTYPES:
        raise HarnessError(f"model {model!r}: dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if dtype == "float16" and str(device).split(":")[0] == "cpu":
        raise HarnessError(
            f"model {model!r}: dtype=float16 needs a GPU (--device cuda); on a CPU use dtype=bfloat16 or float32"
        )
    return dtype


def torch_dtype(dtype: str) -> Any:
    """The torch dtype called ``dtype``."""
    import torch

    return getattr(torch, dtype)
