"""Image preparation for the multimodal scorers: PIL only, no torchvision.

``ImageSpec`` reads a vision model's ``preprocessor_config.json`` (local folder or Hub id) and
reproduces its recipe: resize (shortest edge, or to a fixed size; ``crop_pct`` as in ConvNeXt /
ResNet processors), center crop, then scale to [0, 1] and normalise with the mean and std.
A ``MixedImage`` goes through the same resize and crop for each of its images before the
pixel arrays are averaged, so the mix has exactly the model's input size.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.adapters.capabilities import MixedImage
from harness.errors import HarnessError

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
BICUBIC = 3


@dataclass(frozen=True)
class ImageSpec:
    """How one vision model wants its input: ``resize`` is a shortest edge (int) or (height, width)."""

    resize: int | tuple[int, int]
    crop: tuple[int, int] | None
    mean: tuple[float, float, float]
    std: tuple[float, float, float]
    resample: int = BICUBIC

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> ImageSpec:
        """The recipe of a Hugging Face image-processor configuration."""
        size = config.get("size", {"shortest_edge": 224})
        if isinstance(size, int):
            size = {"shortest_edge": size}
        crop = config.get("crop_size")
        if isinstance(crop, int):
            crop = {"height": crop, "width": crop}
        crop_box = (crop["height"], crop["width"]) if crop and config.get("do_center_crop", True) else None
        resize: int | tuple[int, int]
        if "shortest_edge" in size:
            resize = size["shortest_edge"]
            crop_pct = config.get("crop_pct")
            if crop_pct and crop_box is None:  # ConvNeXt / ResNet: resize to edge / crop_pct, crop to edge
                resize, crop_box = int(resize / crop_pct), (resize, resize)
        else:
            resize = (size["height"], size["width"])
        return cls(
            resize=resize,
            crop=crop_box,
            mean=tuple(config.get("image_mean", CLIP_MEAN)),
            std=tuple(config.get("image_std", CLIP_STD)),
            resample=int(config.get("resample", BICUBIC)),
        )

    @classmethod
    def from_pretrained(cls, source: str, revision: str | None = None) -> ImageSpec:
        """The recipe in ``preprocessor_config.json`` of a folder or Hub id."""
        from transformers.utils import cached_file

        try:
            path = cached_file(source, "preprocessor_config.json", revision=revision)
        except OSError as exc:  # a folder without the file, an unknown Hub id, no network
            raise HarnessError(f"cannot read the image preprocessing of {source!r}: {exc}") from None
        if path is None:
            raise HarnessError(f"cannot read the image preprocessing of {source!r}: no preprocessor_config.json")
        return cls.from_config(json.loads(Path(path).read_text(encoding="utf-8")))

    def pixels(self, image: Any) -> np.ndarray:
        """Resized and cropped RGB pixels, float32 (height, width, 3) in [0, 255]."""
        image = image.convert("RGB")
        if isinstance(self.resize, int):
            width, height = image.size
            scale = self.resize / min(width, height)
            target = (max(1, round(width * scale)), max(1, round(height * scale)))
        else:
            target = (self.resize[1], self.resize[0])
        image = image.resize(target, resample=self.resample)
        if self.crop is not None:
            crop_h, crop_w = self.crop
            left, top = (image.width - crop_w) // 2, (image.height - crop_h) // 2
            image = image.crop((left, top, left + crop_w, top + crop_h))
        return np.asarray(image, dtype=np.float32)

    def mixed_pixels(self, image: Any) -> np.ndarray:
        """Pixels of a PIL image, or the weighted average of a ``MixedImage``'s prepared pixels."""
        if not isinstance(image, MixedImage):
            return self.pixels(image)
        if not image.images or len(image.images) != len(image.weights):
            raise HarnessError("a MixedImage needs as many weights as images, and at least one image")
        if any(isinstance(part, np.ndarray) for part in image.images):
            raise HarnessError("a MixedImage mixes pixels: give PIL images, not precomputed features")
        return np.sum([weight * self.pixels(part) for part, weight in zip(image.images, image.weights)], axis=0)

    def batch(self, images: Sequence[Any]) -> Any:
        """A normalised float tensor (N, 3, height, width) for PIL images or mixes."""
        import torch

        arrays = np.stack([self.mixed_pixels(image) for image in images]) / 255.0
        normalised = (arrays - np.asarray(self.mean, dtype=np.float32)) / np.asarray(self.std, dtype=np.float32)
        return torch.from_numpy(normalised.astype(np.float32)).permute(0, 3, 1, 2).contiguous()


def image_features(images: Sequence[Any], spec: ImageSpec, encode: Callable[[Any], Any], dim: int, what: str) -> Any:
    """One feature vector per image: precomputed arrays as they are, pixels through ``encode``.

    ``encode`` maps a pixel batch (N, 3, H, W) to features (N, dim). ``what`` names the model in
    errors.
    """
    import torch

    if any(image is None for image in images):
        raise HarnessError(f"{what} scores need an image for every sentence (pass --images DIR)")
    rows: list[Any] = [None] * len(images)
    pixel_positions = [i for i, image in enumerate(images) if not isinstance(image, np.ndarray)]
    for i, image in enumerate(images):
        if isinstance(image, np.ndarray):
            vector = np.asarray(image, dtype=np.float32).reshape(-1)
            if vector.shape[0] != dim or not np.isfinite(vector).all():
                raise HarnessError(
                    f"{what}: a precomputed image feature must be {dim} finite numbers, got shape {image.shape}"
                )
            rows[i] = torch.from_numpy(vector)
    if pixel_positions:
        encoded = encode(spec.batch([images[i] for i in pixel_positions])).float().cpu()
        for position, vector in zip(pixel_positions, encoded):
            rows[position] = vector
    return torch.stack(rows)
