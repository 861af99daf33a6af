"""Drawing a scene: anti-aliased shapes rasterised with NumPy (no fonts, no PIL drawing).

Each object's coverage of a pixel is the fraction of a 4x4 grid of sample points inside its
shape, tested with plain IEEE arithmetic (comparisons, +, -, *, /) on shape tables rounded to
six decimals; so the pixels are the same on every machine and with every Pillow version (PIL
only wraps the finished array). Objects are composited in order over the background.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from harness_tasks.default_benchmark.scenes import Placed

IMAGE_SIDE = 128
SUPERSAMPLING = 4

RGB = {
    "red": (220, 30, 30),
    "orange": (245, 140, 20),
    "yellow": (240, 220, 30),
    "green": (40, 170, 60),
    "blue": (30, 80, 220),
    "purple": (140, 50, 180),
    "pink": (245, 130, 190),
    "brown": (130, 80, 40),
    "white": (255, 255, 255),
    "grey": (128, 128, 128),
    "black": (0, 0, 0),
}


def _regular(corners: int, start_degrees: float, radii: tuple[float, ...] = (1.0,)) -> np.ndarray:
    """Polygon vertices on circles of ``radii`` (cycled), rounded to six decimals; y points down."""
    points = []
    for i in range(corners):
        angle = math.radians(start_degrees + 360.0 * i / corners)
        r = radii[i % len(radii)]
        points.append((round(r * math.cos(angle), 6), round(r * math.sin(angle), 6)))
    return np.array(points)


POLYGONS = {
    "triangle": _regular(3, -90.0),
    "hexagon": _regular(6, 0.0),
    "star": _regular(10, -90.0, (1.0, 0.45)),
}


def inside_polygon(u: np.ndarray, v: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """Even-odd rule: points (u, v) inside the polygon."""
    inside = np.zeros(np.broadcast_shapes(u.shape, v.shape), dtype=bool)
    for (x1, y1), (x2, y2) in zip(vertices, np.roll(vertices, -1, axis=0)):
        if y1 == y2:
            continue
        crosses = (y1 > v) != (y2 > v)
        x_cross = x1 + (v - y1) * (x2 - x1) / (y2 - y1)
        inside ^= crosses & (u < x_cross)
    return inside


SHAPE_TESTS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "circle": lambda u, v: u * u + v * v <= 1.0,
    "ring": lambda u, v: (u * u + v * v <= 1.0) & (u * u + v * v >= 0.3),
    "square": lambda u, v: (np.abs(u) <= 0.82) & (np.abs(v) <= 0.82),
    "diamond": lambda u, v: np.abs(u) + np.abs(v) <= 1.0,
    "cross": lambda u, v: ((np.abs(u) <= 0.3) & (np.abs(v) <= 0.95)) | ((np.abs(v) <= 0.3) & (np.abs(u) <= 0.95)),
    **{name: partial(inside_polygon, vertices=vertices) for name, vertices in POLYGONS.items()},
}


def coverage(obj: Placed, side: int) -> tuple[slice, slice, np.ndarray]:
    """The pixel rows and columns around ``obj`` and the fraction of each pixel it covers."""
    cx, cy, radius = obj.x * side, obj.y * side, obj.radius * side
    x0, x1 = max(math.floor(cx - radius) - 1, 0), min(math.ceil(cx + radius) + 1, side)
    y0, y1 = max(math.floor(cy - radius) - 1, 0), min(math.ceil(cy + radius) + 1, side)
    offsets = (np.arange(SUPERSAMPLING) + 0.5) / SUPERSAMPLING
    xs = (np.arange(x0, x1)[:, None] + offsets).ravel()
    ys = (np.arange(y0, y1)[:, None] + offsets).ravel()
    inside = SHAPE_TESTS[obj.shape]((xs[None, :] - cx) / radius, (ys[:, None] - cy) / radius)
    rows = inside.view(np.uint8).reshape(y1 - y0, SUPERSAMPLING, -1).sum(axis=1, dtype=np.uint8)
    share = rows.reshape(y1 - y0, x1 - x0, SUPERSAMPLING).sum(axis=2, dtype=np.uint8) / SUPERSAMPLING**2
    return slice(y0, y1), slice(x0, x1), share


def render(background: str, objects: tuple[Placed, ...], side: int = IMAGE_SIDE) -> np.ndarray:
    """The scene as a (side, side, 3) uint8 RGB array."""
    canvas = np.empty((side, side, 3))
    canvas[:] = RGB[background]
    for obj in objects:
        rows, cols, share = coverage(obj, side)
        patch = canvas[rows, cols]
        canvas[rows, cols] = patch + share[:, :, None] * (np.array(RGB[obj.colour], dtype=float) - patch)
    return np.rint(canvas).astype(np.uint8)
