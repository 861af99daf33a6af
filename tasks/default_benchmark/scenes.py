"""Scenes of the built-in benchmark: their attributes, and seeded sampling of distinct scenes.

A scene is a background colour and one or two groups of identical objects. A group is a count
(1-3), a size, a colour and a shape. One group stands at a position (left, right, top, bottom,
centre); two groups stand in a relation (the first left of, or above, the second). Everything a
caption says comes from these attributes; the jitter of the layout is drawn too but never told.

Random numbers come from the raw 64-bit stream of NumPy's PCG64 bit generator, which NumPy
keeps identical across versions and machines (the distribution methods of ``Generator`` are not
promised to stay the same), so a (size, seed) pair always gives the same items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

GENERATOR_VERSION = 2  # bump on any change that can alter an image, a caption or an image feature

SHAPES = ("circle", "square", "triangle", "star", "cross", "diamond", "hexagon", "ring")
COLOURS = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "brown")
SIZES = ("small", "large")
COUNTS = (1, 2, 3)
BACKGROUNDS = ("white", "grey", "black")
POSITIONS = ("left", "right", "top", "bottom", "centre")  # where a single group stands
RELATIONS = ("left_of", "above")  # how the first of two groups stands to the second
TEMPLATES = 3  # sentence templates per language and layout kind
MAX_SIZE = 100_000  # well below the number of distinct scenes (about 890,000)
T = TypeVar("T")


@dataclass(frozen=True)
class Group:
    """``count`` identical objects: size, colour and shape."""

    count: int
    size: str
    colour: str
    shape: str


@dataclass(frozen=True)
class Scene:
    """A background and one group at ``place`` (a position), or two groups in ``place`` (a relation)."""

    background: str
    groups: tuple[Group, ...]
    place: str


@dataclass(frozen=True)
class Placed:
    """One object as drawn: shape, colour, centre and radius as fractions of the image side."""

    shape: str
    colour: str
    x: float
    y: float
    radius: float


@dataclass(frozen=True)
class Item:
    """A scene, the template chosen for each language, and its objects as drawn."""

    scene: Scene
    templates: dict[str, int]
    objects: tuple[Placed, ...]


class Stream:
    """Integers and floats from the raw output of PCG64 (stable across NumPy versions)."""

    def __init__(self, seed: int):
        self._bits = np.random.PCG64(seed)

    def below(self, n: int) -> int:
        """An integer in [0, n)."""
        return int(self._bits.random_raw()) % n

    def pick(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        return options[self.below(len(options))]

    def uniform(self, low: float, high: float) -> float:
        """A float in [low, high)."""
        return low + (high - low) * ((int(self._bits.random_raw()) >> 11) * 2.0**-53)


RADIUS = {"small": 0.07, "large": 0.12}
ANCHORS = {  # group centre and the direction its objects line up in: (x, y, "row" | "column")
    "left": (0.27, 0.5, "column"),
    "right": (0.73, 0.5, "column"),
    "top": (0.5, 0.27, "row"),
    "bottom": (0.5, 0.73, "row"),
    "centre": (0.5, 0.5, "row"),
}
PAIR_ANCHORS = {"left_of": ("left", "right"), "above": ("top", "bottom")}


def sample_group(stream: Stream) -> Group:
    """A uniformly drawn group."""
    return Group(stream.pick(COUNTS), stream.pick(SIZES), stream.pick(COLOURS), stream.pick(SHAPES))


def sample_scene(stream: Stream) -> Scene:
    """A scene: one group (half of the time) or two different groups."""
    background = stream.pick(BACKGROUNDS)
    if stream.below(2) == 0:
        return Scene(background, (sample_group(stream),), stream.pick(POSITIONS))
    first, second = sample_group(stream), sample_group(stream)
    while second == first:
        second = sample_group(stream)
    return Scene(background, (first, second), stream.pick(RELATIONS))


def layout(scene: Scene, stream: Stream) -> tuple[Placed, ...]:
    """The objects of ``scene`` placed with a little jitter of group, object position and size."""
    anchors = PAIR_ANCHORS[scene.place] if len(scene.groups) == 2 else (scene.place,)
    placed = []
    for group, anchor in zip(scene.groups, anchors):
        x, y, direction = ANCHORS[anchor]
        x, y = x + stream.uniform(-0.02, 0.02), y + stream.uniform(-0.02, 0.02)
        radius = RADIUS[group.size]
        for i in range(group.count):
            offset = (i - (group.count - 1) / 2) * 2.4 * radius
            ox, oy = (offset, 0.0) if direction == "row" else (0.0, offset)
            placed.append(
                Placed(
                    group.shape,
                    group.colour,
                    x + ox + stream.uniform(-0.01, 0.01),
                    y + oy + stream.uniform(-0.01, 0.01),
                    radius * stream.uniform(0.92, 1.0),
                )
            )
    return tuple(placed)


def sample_items(size: int, seed: int, languages: tuple[str, ...]) -> list[Item]:
    """``size`` items with pairwise distinct scenes, each with a template per language."""
    stream = Stream(seed)
    items: list[Item] = []
    seen: set[Scene] = set()
    while len(items) < size:
        scene = sample_scene(stream)
        if scene in seen:
            continue
        seen.add(scene)
        templates = {lang: stream.below(TEMPLATES) for lang in languages}
        items.append(Item(scene, templates, layout(scene, stream)))
    return items
