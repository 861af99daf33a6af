"""A test plugin with two tiny image encoders for the g-sweep ladder: block means of the pixels, and a constant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter
from harness.params import Param
from harness.plugins.hookspecs import hookimpl


@hookimpl
def register_models(register: Any) -> None:
    register("block-means", "retrieval.fake_images:BlockMeans", "Mean colour per block of a grid, minus the median.")
    register("constant-image", "retrieval.fake_images:ConstantImage", "The same vector for every image (chance g).")


class BlockMeans(ModelAdapter):
    """Mean colour of each block of a ``blocks`` x ``blocks`` grid minus the image's median colour."""

    capabilities = frozenset({Capability.IMAGE_ENCODER})
    params = {"blocks": Param(4, "grid side", min=1)}

    def load(self) -> None:
        """No weights."""

    def encode_images(self, images: Sequence[Any]) -> np.ndarray:
        """One vector per PIL image."""
        side = self.args["blocks"]
        rows = []
        for image in images:
            pixels = np.asarray(image.convert("RGB"), dtype=np.float64)
            cells = pixels.shape[0] // side
            blocks = pixels[: cells * side, : cells * side].reshape(side, cells, side, cells, 3).mean(axis=(1, 3))
            rows.append((blocks - np.median(pixels.reshape(-1, 3), axis=0)).ravel())
        return np.stack(rows).astype(np.float32)


class ConstantImage(ModelAdapter):
    """A constant vector: every image ties with every other, g carries nothing."""

    capabilities = frozenset({Capability.IMAGE_ENCODER})

    def load(self) -> None:
        """No weights."""

    def encode_images(self, images: Sequence[Any]) -> np.ndarray:
        """Ones, one row per image."""
        return np.ones((len(images), 3), dtype=np.float32)
