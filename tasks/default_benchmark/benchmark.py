"""The benchmark as data: ``generate(size, seed)``, and ``dataset(size, seed)``, the table in the retrieval schema."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.run.data import LazyColumn, Table
from harness_tasks.default_benchmark.drawn import Drawn
from harness_tasks.default_benchmark.grammar import LANGUAGES, captions_of
from harness_tasks.default_benchmark.render import render
from harness_tasks.default_benchmark.scenes import GENERATOR_VERSION, MAX_SIZE, Item, sample_items

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


def check_parameters(size: int, seed: int) -> None:
    """Refuse a size outside 1..MAX_SIZE or a negative seed."""
    if not 1 <= size <= MAX_SIZE:
        raise HarnessError(f"dataset {NAME!r}: size must be between 1 and {MAX_SIZE}, got {size}")
    if seed < 0:
        raise HarnessError(f"dataset {NAME!r}: seed must be a non-negative integer, got {seed}")


def generate(size: int, seed: int) -> Benchmark:
    """``size`` items drawn with ``seed``: the same on every machine."""
    check_parameters(size, seed)
    items = sample_items(size, seed, tuple(LANGUAGES))
    return Benchmark(items, captions_of(items), [render(item.scene.background, item.objects) for item in items])


@lru_cache(maxsize=4)
def dataset(size: int, seed: int) -> Table:
    """The benchmark in the retrieval schema: ``id``, ``text_<lang>`` for every language, ``image`` (PIL images,
    drawn when read; the column knows their content keys) and ``image_features``.

    Cached per process, so the tasks of one run share one; the captions, keys and features are kept across
    runs in the harness cache (``Drawn``), so a run whose model outputs are all cached draws no image.
    """
    check_parameters(size, seed)
    drawn = Drawn(size, seed)
    captions = drawn.captions()
    columns: dict[str, Any] = {"id": [f"{seed}-{i}" for i in range(size)]}
    columns.update({f"text_{lang}": captions[lang] for lang in LANGUAGES})
    columns["image"] = LazyColumn(drawn.image, range(size), keys=drawn.image_keys)
    columns["image_features"] = drawn.features
    return Table(columns, size)
