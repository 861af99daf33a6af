"""Issue 23.1: an image's content key is the key of what a model sees, in every image mode.

A palette image's bytes are palette indices: pictures that share indices but not palettes used to
get one key, so sixty different PNGs were encoded once and CORR/BkR silently collapsed to chance.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from harness.adapters.cache import Cache
from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability, image_content_key, model_view
from harness.adapters.model import ModelAdapter, ModelIdentity


def _palette_images(count: int) -> list[Image.Image]:
    """``count`` pictures with the same palette indices and different palettes (as PNG files decode them)."""
    indices = np.zeros((4, 4), dtype=np.uint8)
    indices[:2] = 1
    images = []
    for i in range(count):
        image = Image.fromarray(indices, mode="P")
        image.putpalette([0, 0, 0, (4 * i) % 256, (7 * i) % 256, 255 - i % 256] + [0] * 762)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        images.append(Image.open(io.BytesIO(buffer.getvalue())))
    return images


def _twins() -> list[tuple[str, Image.Image, Image.Image]]:
    """(mode, image in that mode, its RGB twin: the pixels a person sees)."""
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (5, 6, 3), dtype=np.uint8)
    grey = rng.integers(0, 256, (5, 6), dtype=np.uint8)
    la = Image.fromarray(np.dstack([grey, np.full_like(grey, 128)]), mode="LA")
    cmyk = Image.fromarray(rgb).convert("CMYK")
    sixteen = Image.fromarray(grey.astype(np.uint16) * 257)  # I;16 holding the 8-bit values at full range
    rotated = Image.fromarray(rgb)
    exif = rotated.getexif()
    exif[0x0112] = 6  # orientation: rotate 90 degrees clockwise to display
    buffer = io.BytesIO()
    rotated.save(buffer, format="JPEG", exif=exif.tobytes(), quality=100, subsampling=0)
    tagged = Image.open(io.BytesIO(buffer.getvalue()))
    upright = Image.fromarray(
        np.asarray(Image.open(io.BytesIO(buffer.getvalue())).transpose(Image.Transpose.ROTATE_270))
    )
    return [
        ("LA", la, Image.fromarray(np.dstack([grey] * 3))),
        ("CMYK", cmyk, cmyk.convert("RGB")),
        ("I;16", sixteen, Image.fromarray(np.dstack([grey] * 3))),
        ("EXIF-rotated", tagged, upright),
    ]


def test_palette_images_with_different_palettes_get_different_keys() -> None:
    images = _palette_images(60)
    assert len({image_content_key(image) for image in images}) == 60
    assert len({image_content_key(image.convert("RGB")) for image in images}) == 60
    assert image_content_key(images[3]) == image_content_key(images[3].convert("RGB"))


@pytest.mark.parametrize("mode, image, twin", _twins(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_mode_keys_and_shows_what_its_rgb_twin_shows(mode: str, image: Image.Image, twin: Image.Image) -> None:
    view = model_view(image)
    assert view.mode == "RGB" and view.size == twin.size
    assert np.array_equal(np.asarray(view), np.asarray(twin.convert("RGB")))
    assert image_content_key(image) == image_content_key(twin)


def test_sixteen_bit_greyscale_is_scaled_not_clipped_to_white() -> None:
    image = Image.fromarray(np.array([[0, 256, 32768, 65535]], dtype=np.uint16))
    assert np.asarray(model_view(image))[0, :, 0].tolist() == [0, 1, 128, 255]


class _MeanColour(ModelAdapter):
    """An image encoder that sees the RGB mean of each picture, counting how many it encodes."""

    capabilities = frozenset({Capability.IMAGE_ENCODER})

    def __init__(self) -> None:
        super().__init__("mean-colour", {})
        self.encoded = 0

    def identity(self) -> ModelIdentity:
        return ModelIdentity("mean-colour", "tests:MeanColour", "src", "rev1", {}, "float32", "pkg", "1.0", "abc")

    def encode_images(self, images: list[Image.Image]) -> np.ndarray:
        self.encoded += len(images)
        return np.stack([np.asarray(image.convert("RGB"), dtype=np.float32).mean((0, 1)) for image in images])


@pytest.mark.parametrize("use_cache", [True, False])
def test_sixty_palette_pictures_are_sixty_encodings(tmp_path, use_cache: bool) -> None:
    encoder = _MeanColour()
    cache = Cache(tmp_path / "cache") if use_cache else None
    model = CachedModel(encoder, cache)
    images = _palette_images(60)
    vectors = model.encode_images(images)
    assert encoder.encoded == 60
    expected = np.stack([np.asarray(image.convert("RGB"), dtype=np.float32).mean((0, 1)) for image in images])
    np.testing.assert_allclose(vectors, expected)
