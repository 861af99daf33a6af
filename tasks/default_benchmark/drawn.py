"""What a run reads of ``xling-shapes`` (size, seed): made when first asked for, kept in the harness cache.

Drawing the benchmark's 1,000 images and computing their pixel features takes seconds; a run whose
model outputs are all cached needs no pixel. So the captions, the images' content keys (what the
cache of an image model is keyed by, ``harness.adapters.capabilities.image_content_key``) and the
pixel features are each made when first asked for and stored in the harness cache
(``default_cache()``; none under ``--no-cache``) under the generator version, size and seed. An
image is drawn when it is read; the images drawn for the keys or the features are kept for the
process. A stored part that is missing, damaged or of the wrong shape is made again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from harness.adapters.cache import array_to_bytes, bytes_to_array, default_cache, make_key
from harness.adapters.capabilities import image_content_key
from harness_tasks.default_benchmark.features import FEATURE_SIZE, pixel_features
from harness_tasks.default_benchmark.grammar import LANGUAGES, captions_of
from harness_tasks.default_benchmark.render import render
from harness_tasks.default_benchmark.scenes import GENERATOR_VERSION, Item, sample_items

STORE_VERSION = 1  # bump when what a stored part holds, or how it is encoded, changes
PARTS = ("captions", "image_keys", "features")
T = TypeVar("T")


class Drawn:
    """The items of (size, seed) as a run reads them: captions, images, their keys and features."""

    def __init__(self, size: int, seed: int):
        self.size, self.seed = size, seed
        self._items: list[Item] | None = None
        self._pixels: list[np.ndarray] | None = None
        self._stored: dict[str, bytes] | None = None

    def items(self) -> list[Item]:
        """The scenes and their layouts (sampled once)."""
        if self._items is None:
            self._items = sample_items(self.size, self.seed, tuple(LANGUAGES))
        return self._items

    def pixels(self, row: int) -> np.ndarray:
        """The (side, side, 3) uint8 image of item ``row``."""
        if self._pixels is not None:
            return self._pixels[row]
        item = self.items()[row]
        return render(item.scene.background, item.objects)

    def image(self, row: int) -> Any:
        """The image of item ``row`` as a PIL image."""
        from PIL import Image

        return Image.fromarray(self.pixels(row))

    def captions(self) -> dict[str, list[str]]:
        """Language -> the caption of every item."""
        return self._part("captions", self._decode_captions, lambda: captions_of(self.items()), _json_bytes)

    def image_keys(self) -> list[str]:
        """The content key of every image (as ``image_content_key`` gives it for the PIL image)."""
        return self._part("image_keys", self._decode_keys, self._make_keys, _json_bytes)

    def features(self) -> np.ndarray:
        """The (size, FEATURE_SIZE) float32 pixel features of every image."""
        return self._part("features", self._decode_features, self._make_features, array_to_bytes)

    def _all_pixels(self) -> list[np.ndarray]:
        if self._pixels is None:
            self._pixels = [render(item.scene.background, item.objects) for item in self.items()]
        return self._pixels

    def _make_keys(self) -> list[str]:
        from PIL import Image

        return [image_content_key(Image.fromarray(pixels)) for pixels in self._all_pixels()]

    def _make_features(self) -> np.ndarray:
        return np.stack([pixel_features(pixels) for pixels in self._all_pixels()])

    def _key(self, part: str) -> str:
        return make_key("xling-shapes drawn", STORE_VERSION, GENERATOR_VERSION, self.size, self.seed, part)

    def _part(self, part: str, decode: Callable[[bytes], T], make: Callable[[], T], encode: Callable[[T], bytes]) -> T:
        """The stored part if it decodes to a valid value, else made now and stored."""
        data = self._read_stored().get(part)
        if data is not None:
            try:
                return decode(data)
            except ValueError:  # damaged or of another shape: made again, and replaced
                pass
        value = make()
        cache = default_cache()
        if cache is not None:
            cache.put_many({self._key(part): encode(value)})
        return value

    def _read_stored(self) -> dict[str, bytes]:
        """Every stored part, read from the cache in one query."""
        if self._stored is None:
            cache = default_cache()
            keys = {part: self._key(part) for part in PARTS}
            found = cache.get_many(keys.values()) if cache is not None else {}
            self._stored = {part: found[key] for part, key in keys.items() if key in found}
        return self._stored

    def _decode_captions(self, data: bytes) -> dict[str, list[str]]:
        value = json.loads(data)
        if not isinstance(value, dict) or list(value) != list(LANGUAGES):
            raise ValueError("not a caption list per language")
        for texts in value.values():
            self._check_strings(texts)
        return value

    def _decode_keys(self, data: bytes) -> list[str]:
        return self._check_strings(json.loads(data))

    def _decode_features(self, data: bytes) -> np.ndarray:
        array = bytes_to_array(data)
        if array.shape != (self.size, FEATURE_SIZE) or array.dtype != np.float32:
            raise ValueError(f"features of shape {array.shape}, {array.dtype}")
        return array

    def _check_strings(self, value: Any) -> list[str]:
        if not isinstance(value, list) or len(value) != self.size or not all(isinstance(v, str) for v in value):
            raise ValueError(f"not a list of {self.size} strings")
        return value


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()
