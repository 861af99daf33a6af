"""``hf-image-encoder``: a Hugging Face vision model as an image encoder (one vector per image).

Images are converted to RGB and preprocessed by the model's ``AutoImageProcessor`` with the
PIL/NumPy backend (no torchvision). The vector is:

- for CLIP checkpoints (``CLIPModel``): the projected image embedding (``get_image_features``);
- for models with a projection (``CLIPVisionModelWithProjection``): ``image_embeds``;
- otherwise the pooled output, flattened (``ResNetModel``: global average pool of the last
  stage, 2048-d for ResNet-50), or the first token's last hidden state when there is no pooler.

Speed on CPU (benchmarks/image.md): in a convolutional network, each batch norm that follows a
convolution (``convolution`` + ``normalization`` pairs: ResNet, RegNet) is folded into it at load
and the network runs channels-last; the next batch is decoded and preprocessed in a worker
thread while the model runs the current one (``run_prefetched``). ``dtype=bfloat16`` or
``float16`` (GPU) runs the model in half precision (models/encoders/precision.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.params import Param
from harness_models.encoders.batching import length_sorted_batches, run_prefetched
from harness_models.encoders.folding import fold_batch_norms
from harness_models.encoders.precision import DTYPE_PARAM, checked_dtype, torch_dtype
from harness_models.encoders.text import hf_identity, loading, pretrained_source
from harness_models.loading import STRICT_PARAM, from_pretrained


class HFImageEncoder(ModelAdapter):
    """ResNet, CLIP and other Hugging Face vision models, pooled to one vector per image."""

    capabilities = frozenset({Capability.IMAGE_ENCODER})
    params = {
        "pretrained": Param(None, "Hub id or local folder", str),
        "revision": Param(None, "Hub revision (branch, tag or commit)", str),
        "normalize": Param(False, "L2-normalise the vectors"),
        "strict": STRICT_PARAM,
        "dtype": DTYPE_PARAM,
    }

    def identity(self) -> ModelIdentity:
        """Source, revision, arguments and dtype (no weights are loaded)."""
        return hf_identity(self)

    def load(self) -> None:
        """Load the image processor (PIL backend) and the model; fold its batch norms."""
        import torch
        from transformers import AutoImageProcessor, AutoModel

        source, revision = pretrained_source(self.name, self.args), self.args["revision"]
        with loading(self.name, source):
            self.processor = AutoImageProcessor.from_pretrained(
                source, revision=revision, backend="pil", trust_remote_code=False
            )
            model, self.key_mismatch = from_pretrained(
                AutoModel.from_pretrained,
                source,
                source,
                self.args["strict"],
                revision=revision,
                trust_remote_code=False,
            )
            self.model = model.to(self.device).eval()
        self.dtype = torch_dtype(checked_dtype(self.name, self.args["dtype"], self.device))
        self.convolutional = fold_batch_norms(self.model) > 0
        self.model = self.model.to(self.dtype)
        if self.convolutional:
            self.model = self.model.to(memory_format=torch.channels_last)

    def forward(self, pixels: Any) -> Any:
        """Image vectors (float32) of a preprocessed pixel batch."""
        import torch

        pixels = pixels.to(self.device, self.dtype)
        if self.convolutional:
            pixels = pixels.contiguous(memory_format=torch.channels_last)
        return image_vectors(self.model, pixels).float()

    def encode_images(self, images: Sequence[Any]) -> np.ndarray:
        """One vector per PIL image, in input order; the next batch is preprocessed while this one runs."""
        import torch

        self.ensure_loaded()

        def prepare(indices: np.ndarray) -> Any:
            batch = [images[i].convert("RGB") for i in indices]
            return self.processor(images=batch, return_tensors="pt")["pixel_values"]

        def compute(pixels: Any) -> Any:
            vectors = self.forward(pixels)
            return torch.nn.functional.normalize(vectors, p=2, dim=1) if self.args["normalize"] else vectors

        return run_prefetched(len(images), length_sorted_batches([0] * len(images), self.batch_size), prepare, compute)


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
