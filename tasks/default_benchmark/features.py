"""The default image similarity g of the benchmark: pixel statistics, no learned model.

Used by ``backretrieval`` and ``corr`` when no ``--image-model`` is given. From the pixels alone
(never from the scene attributes, which would leak the answer): the image's median colour (its
background, since objects cover less than half of it) is subtracted, then

- a thumbnail: the mean colour of each 16x16 block (8x8x3 values), which carries colour and place;
- a colour histogram: the share of pixels in each of 4x4x4 colour cells, square-rooted, which
  carries colour, size and count;

each scaled to unit length and concatenated (192 + 64 values). g is their cosine.
"""

from __future__ import annotations

import numpy as np

THUMBNAIL_BLOCK = 16
LEVEL_BITS = 2  # 4 levels per channel


def pixel_features(pixels: np.ndarray) -> np.ndarray:
    """The float32 feature vector of one (side, side, 3) uint8 image."""
    side = pixels.shape[0]
    flat = pixels.reshape(-1, 3)
    background = np.median(flat, axis=0)
    cells = side // THUMBNAIL_BLOCK
    rows = pixels.reshape(cells, THUMBNAIL_BLOCK, side * 3).sum(axis=1, dtype=np.int64)
    blocks = rows.reshape(cells, cells, THUMBNAIL_BLOCK, 3).sum(axis=2)
    thumbnail = blocks.reshape(-1, 3) / THUMBNAIL_BLOCK**2 - background
    shift = 8 - LEVEL_BITS
    cell = ((flat[:, 0] >> shift).astype(np.int64) << 2 * LEVEL_BITS) | ((flat[:, 1] >> shift) << LEVEL_BITS) | (flat[:, 2] >> shift)
    histogram = np.sqrt(np.bincount(cell, minlength=1 << 3 * LEVEL_BITS) / len(cell))
    return np.concatenate([_unit(thumbnail.ravel()), _unit(histogram)]).astype(np.float32)


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(vector)
    return vector / norm if norm > 0 else vector
