"""``hf-image-encoder``: a Hugging Face vision model as an image encoder (one vector per image).

Images are converted to RGB and preprocessed by the model's ``AutoImageProcessor`` with the
PIL/NumPy backend (no torchvision). The vector is:

- for CLIP checkpoints (``CLIPModel``): the projected image embedding (``get_image_features``);
- for models with a projection (``CLIPVisionModelWithProjection``): ``image_embeds``;
- otherwise the pooled output, flattened (``ResNetModel``: global average pool of the last
  stage, 2048-d for ResNet-50), or the first token's last hidden state when there is no pooler.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.capabilities import Capability
from harness.model import ModelAdapter, ModelIdentity
from harness.params import Param
from harness_models.encoders.batching import length_sorted_batches, run_batches
from harness_models.encoders.text import hf_identity, loading, pretrained_source


class HFImageEncoder(ModelAdapter):
    """ResNet, CLIP and other Hugging Face vision models, pooled to one vector per image."""

    capabilities = frozenset({Capability.IMAGE_ENCODER})
    params = {
        "pretrained": Param(None, "Hub id or local folder", str),
        "revision": Param(None, "Hub revision (branch, tag or commit)", str),
        "normalize": Param(False, "L2-normalise the vectors"),
    }

    def identity(self) -> ModelIdentity:
        """Source, revision and arguments (no weights are loaded)."""
        return hf_identity(self)

    def load(self) -> None:
        """Load the image processor (PIL backend) and the model."""
        from transformers import AutoImageProcessor, AutoModel

        source, revision = pretrained_source(self.name, self.args), self.args["revision"]
        with loading(self.name, source):
            self.processor = AutoImageProcessor.from_pretrained(source, revision=revision, backend="pil", trust_remote_code=False)
            self.model = AutoModel.from_pretrained(source, revision=revision, trust_remote_code=False).to(self.device).eval()

    def encode_images(self, images: Sequence[Any]) -> np.ndarray:
        """One vector per PIL image, in input order."""
        self.ensure_loaded()
        batches = length_sorted_batches([0] * len(images), self.batch_size)
        return run_batches(len(images), batches, lambda indices: self._encode_batch([images[i] for i in indices]))

    def _encode_batch(self, images: list[Any]) -> Any:
        import torch

        pixels = self.processor(images=[image.convert("RGB") for image in images], return_tensors="pt")["pixel_values"]
        vectors = image_vectors(self.model, pixels.to(self.device))
        return torch.nn.functional.normalize(vectors, p=2, dim=1) if self.args["normalize"] else vectors


def image_vectors(model: Any, pixels: Any) -> Any:
    """The image vectors a vision model gives for a batch of pixel values."""
    if hasattr(model, "get_image_features"):
        output = model.get_image_features(pixel_values=pixels)
        return output if not hasattr(output, "pooler_output") else output.pooler_output
    output = model(pixel_values=pixels)
    vectors = getattr(output, "image_embeds", None)
    if vectors is None:
        vectors = getattr(output, "pooler_output", None)
    if vectors is None:
        vectors = output.last_hidden_state[:, 0]
    return vectors.flatten(1)
