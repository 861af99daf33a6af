"""The benchmark as data: ``generate(size, seed)`` and its ``datasets.Dataset`` in the retrieval schema."""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from harness.errors import HarnessError
from harness_tasks.default_benchmark.features import pixel_features
from harness_tasks.default_benchmark.grammar import LANGUAGES, caption
from harness_tasks.default_benchmark.render import render
from harness_tasks.default_benchmark.scenes import GENERATOR_VERSION, MAX_SIZE, Item, sample_items

if TYPE_CHECKING:
    import datasets

NAME = "xling-shapes"


@dataclass
class Benchmark:
    """The items, their captions per language and their images ((side, side, 3) uint8 arrays)."""

    items: list[Item]
    captions: dict[str, list[str]]
    images: list[np.ndarray]


def revision(size: int, seed: int) -> str:
    """The dataset revision: a hash of the generator version and the parameters."""
    key = f"{NAME}|generator={GENERATOR_VERSION}|size={size}|seed={seed}"
    return "gen:" + hashlib.sha256(key.encode()).hexdigest()[:16]


def generate(size: int, seed: int) -> Benchmark:
    """``size`` items drawn with ``seed``: the same on every machine."""
    if not 1 <= size <= MAX_SIZE:
        raise HarnessError(f"dataset {NAME!r}: size must be between 1 and {MAX_SIZE}, got {size}")
    if seed < 0:
        raise HarnessError(f"dataset {NAME!r}: seed must be a non-negative integer, got {seed}")
    items = sample_items(size, seed, tuple(LANGUAGES))
    captions = {lang: [caption(item.scene, lang, item.templates[lang]) for item in items] for lang in LANGUAGES}
    return Benchmark(items, captions, [render(item.scene.background, item.objects) for item in items])


def png(pixels: np.ndarray) -> bytes:
    """The image as PNG bytes (fast compression: the pixels, not the bytes, are what is reproducible)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG", compress_level=1)
    return buffer.getvalue()


@lru_cache(maxsize=4)
def dataset(size: int, seed: int) -> datasets.Dataset:
    """The benchmark as a ``datasets.Dataset``: ``id``, ``text_<lang>`` for every language, ``image``, ``image_features``.

    Cached per process, so the tasks of one run share one generation.
    """
    import datasets

    bench = generate(size, seed)
    features = np.stack([pixel_features(pixels) for pixels in bench.images])
    columns: dict[str, Any] = {"id": [f"{seed}-{i}" for i in range(size)]}
    columns.update({f"text_{lang}": texts for lang, texts in bench.captions.items()})
    columns["image"] = [{"bytes": png(pixels), "path": None} for pixels in bench.images]
    columns["image_features"] = features
    schema = datasets.Features(
        {
            "id": datasets.Value("string"),
            **{f"text_{lang}": datasets.Value("string") for lang in LANGUAGES},
            "image": datasets.Image(),
            "image_features": datasets.List(datasets.Value("float32"), length=features.shape[1]),
        }
    )
    return datasets.Dataset.from_dict(columns, features=schema)
