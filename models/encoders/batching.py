"""Batched inference shared by model adapters: length-sorted batches, results in input order.

Sorting inputs by length before batching keeps padding (and wasted compute) small; the
results are written back at each input's own position, so callers never see the order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """Index batches of at most ``batch_size``, longest inputs first (ties keep input order)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


def run_batches(count: int, batches: Iterable[np.ndarray], compute: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Call ``compute(indices)`` per batch under ``torch.inference_mode()``; row i of the result is input i's.

    ``compute`` returns one row per index, as a NumPy array or a torch tensor.
    """
    import torch

    out: np.ndarray | None = None
    with torch.inference_mode():
        for indices in batches:
            rows = compute(indices)
            rows = rows.detach().float().cpu().numpy() if isinstance(rows, torch.Tensor) else np.asarray(rows, dtype=np.float32)
            if out is None:
                out = np.empty((count, rows.shape[1]), dtype=np.float32)
            out[indices] = rows
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)
