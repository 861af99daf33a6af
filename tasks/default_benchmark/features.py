"""The default image similarity g of the benchmark: pixel statistics, no learned model.

Used by ``backretrieval`` and ``corr`` when no ``--image-model`` is given. From the pixels alone
(never from the scene attributes, which would leak the answer):

- a thumbnail: the mean colour of each 16x16 block (8x8x3 values) minus the image's median
  colour (its background, since objects cover less than half of it): colour and place;
- a colour histogram: the share of pixels in each of 4x4x4 colour cells, square-rooted:
  colours, sizes and counts;
- an edge-orientation histogram: in each cell of a 4x4 grid, the summed gradient magnitude of
  the brightness (R+G+B) per direction (horizontal, vertical, and the two diagonals),
  square-rooted: shapes (a square's edges are horizontal and vertical, a diamond's diagonal, a
  circle's all of them) and where they are.

Each part is scaled to unit length and the three are concatenated (192 + 64 + 64 values); g is
their cosine. Integer arithmetic up to the last steps keeps the values the same everywhere.
"""

from __future__ import annotations

import numpy as np

THUMBNAIL_BLOCK = 16
LEVEL_BITS = 2  # 4 levels per channel
ORIENTATION_CELLS = 4
FEATURE_SIZE = 192 + 64 + 64


def pixel_features(pixels: np.ndarray) -> np.ndarray:
    """The float32 feature vector of one (side, side, 3) uint8 image."""
    parts = (thumbnail(pixels), colour_histogram(pixels), orientation_histogram(pixels))
    return np.concatenate([_unit(part) for part in parts]).astype(np.float32)


def thumbnail(pixels: np.ndarray) -> np.ndarray:
    """Mean colour per block minus the median colour."""
    side = pixels.shape[0]
    cells = side // THUMBNAIL_BLOCK
    rows = pixels.reshape(cells, THUMBNAIL_BLOCK, side * 3).sum(axis=1, dtype=np.int64)
    blocks = rows.reshape(cells, cells, THUMBNAIL_BLOCK, 3).sum(axis=2)
    return (blocks.reshape(-1, 3) / THUMBNAIL_BLOCK**2 - np.median(pixels.reshape(-1, 3), axis=0)).ravel()


def colour_histogram(pixels: np.ndarray) -> np.ndarray:
    """Square-rooted share of pixels per colour cell."""
    flat = pixels.reshape(-1, 3) >> (8 - LEVEL_BITS)
    cell = (flat[:, 0].astype(np.int64) << 2 * LEVEL_BITS) | (flat[:, 1] << LEVEL_BITS) | flat[:, 2]
    return np.sqrt(np.bincount(cell, minlength=1 << 3 * LEVEL_BITS) / len(cell))


def orientation_histogram(pixels: np.ndarray) -> np.ndarray:
    """Square-rooted gradient magnitude per grid cell and direction (integer tests, no angles)."""
    brightness = pixels.sum(axis=2, dtype=np.int32)
    gx, gy = np.zeros_like(brightness), np.zeros_like(brightness)
    gx[:, 1:-1] = brightness[:, 2:] - brightness[:, :-2]
    gy[1:-1, :] = brightness[2:, :] - brightness[:-2, :]
    ax, ay = np.abs(gx), np.abs(gy)
    across_x, across_y = 12 * ay < 5 * ax, 12 * ax < 5 * ay  # within 22.6 degrees of an axis
    direction = np.where(across_x, 0, np.where(across_y, 1, np.where(gx * gy > 0, 2, 3)))
    side, cells = brightness.shape[0], ORIENTATION_CELLS
    cell = (np.arange(side) * cells // side)[:, None] * cells + (np.arange(side) * cells // side)[None, :]
    sums = np.bincount((cell * 4 + direction).ravel(), weights=(ax + ay).ravel(), minlength=cells * cells * 4)
    return np.sqrt(sums)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector
