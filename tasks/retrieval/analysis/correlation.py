"""Per-seed correlations across models: the one definition of the meta-correlation (SIGIR 2021, Table 1).

Inputs are arrays of scores with one row per model and one column per seed (NaN = missing).
For every seed, the scores of all models are correlated (Pearson's r, or Spearman's rho as the
Pearson correlation of average ranks); a seed is undefined when a model lacks a value there,
there are fewer than ``MIN_MODELS`` models, or either side is constant. The summary over seeds
is the mean and sample standard deviation of the defined seeds. ``harness meta`` and the
leaderboard both call these functions.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from harness.results.seedstats import defined_values, mean_and_std

Method = Literal["pearson", "spearman"]
METHODS: tuple[Method, ...] = ("pearson", "spearman")
MIN_MODELS = 3


def per_seed(x: np.ndarray, y: np.ndarray, method: Method = "pearson") -> np.ndarray:
    """The correlation of ``x`` with ``y`` over the model axis (-2), one per seed (last axis); NaN where undefined.

    Leading axes are kept (a batch of bootstrap resamples is ``(resamples, models, seeds)``).
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim < 2:
        raise ValueError(f"expected two equal (..., models, seeds) arrays, got shapes {x.shape} and {y.shape}")
    shape = x.shape[:-2] + x.shape[-1:]
    if x.shape[-2] < MIN_MODELS:
        return np.full(shape, np.nan)
    missing = np.isnan(x).any(axis=-2) | np.isnan(y).any(axis=-2)
    if method not in METHODS:
        raise ValueError(f"unknown correlation {method!r}: expected one of {', '.join(METHODS)}")
    # a seed with a missing value is NaN in the end: zeros there keep every mean over a full column
    x, y = np.nan_to_num(x), np.nan_to_num(y)
    if method == "spearman":
        from scipy.stats import rankdata

        x, y = rankdata(x, axis=-2), rankdata(y, axis=-2)
    dx = x - x.mean(axis=-2, keepdims=True)
    dy = y - y.mean(axis=-2, keepdims=True)
    constant = (np.ptp(x, axis=-2) == 0) | (np.ptp(y, axis=-2) == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (dx * dy).sum(axis=-2) / np.sqrt((dx * dx).sum(axis=-2) * (dy * dy).sum(axis=-2))
    r = np.clip(r, -1.0, 1.0)
    r[missing | constant] = np.nan
    return r


def summarize(values: np.ndarray) -> dict[str, Any]:
    """Mean and sample std (ddof 1; 0 for one seed) of the defined per-seed values, their count, and every value (None = undefined)."""
    values = np.asarray(values, dtype=float)
    mean, std = mean_and_std(values.tolist())
    return {
        "mean": mean,
        "std": std,
        "seeds_defined": len(defined_values(values.tolist())),
        "per_seed": [None if np.isnan(v) else float(v) for v in values],
    }


def meta_correlation(xlr: np.ndarray, other: np.ndarray) -> dict[str, dict[str, Any]]:
    """Pearson and Spearman of ``other`` (BackRetrieval or CORR) with XLR across models, per seed, summarised over seeds."""
    return {method: summarize(per_seed(xlr, other, method)) for method in METHODS}
