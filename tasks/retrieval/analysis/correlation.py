"""Per-seed correlations across models: the one definition of the meta-correlation (SIGIR 2021, Table 1).

Inputs are arrays of scores with one row per model and one column per seed (NaN = missing).
For every seed, the scores of all models are correlated (Pearson's r, or Spearman's rho as the
Pearson correlation of average ranks); a seed is undefined when a model lacks a value there,
there are fewer than ``MIN_MODELS`` models, or either side is constant. The summary over seeds
is the mean and sample standard deviation of the defined seeds. ``harness meta`` and the
leaderboard both call these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from harness.results.seedstats import defined_values, mean_and_std

Method = Literal["pearson", "spearman"]
METHODS: tuple[Method, ...] = ("pearson", "spearman")
MIN_MODELS = 3


def average_ranks(values: np.ndarray) -> np.ndarray:
    """The 1-based ranks along the model axis (-2), tied values sharing the mean of their ranks: the numbers of
    ``scipy.stats.rankdata(values, axis=-2)`` (halves and integers, exact), without importing ``scipy.stats`` (most of
    a leaderboard build's start-up)."""
    moved = np.moveaxis(values, -2, -1)
    order = np.argsort(moved, axis=-1, kind="stable")
    ordered = np.take_along_axis(moved, order, axis=-1)
    opens = np.ones(moved.shape, dtype=bool)  # where a run of equal values starts, in sorted order
    opens[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    closes = np.ones(moved.shape, dtype=bool)
    closes[..., :-1] = opens[..., 1:]
    position = np.arange(moved.shape[-1])
    first = np.maximum.accumulate(np.where(opens, position, 0), axis=-1)
    last = np.flip(np.minimum.accumulate(np.flip(np.where(closes, position, moved.shape[-1] - 1), -1), axis=-1), -1)
    ranks = np.empty(moved.shape)
    np.put_along_axis(ranks, order, 0.5 * (first + last) + 1.0, axis=-1)
    return np.moveaxis(ranks, -1, -2)


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
        x, y = average_ranks(x), average_ranks(y)
    dx = x - x.mean(axis=-2, keepdims=True)
    dy = y - y.mean(axis=-2, keepdims=True)
    constant = (np.ptp(x, axis=-2) == 0) | (np.ptp(y, axis=-2) == 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (dx * dy).sum(axis=-2) / np.sqrt((dx * dx).sum(axis=-2) * (dy * dy).sum(axis=-2))
    r = np.clip(r, -1.0, 1.0)
    r[missing | constant] = np.nan
    return r


def resampled_correlations(
    x: np.ndarray, others: Sequence[np.ndarray], counts: np.ndarray, method: Method = "pearson"
) -> list[np.ndarray]:
    """``per_seed(x[index], y[index], method)`` for each ``y`` of ``others`` and every resample, from draw counts.

    A resample is the multiset of the models it drew, so each correlation is the count-weighted one,
    computed for all resamples at once: for Pearson from weighted sums (matrix products of the counts
    with the values); for Spearman from each drawn value's average rank among the drawn values (those
    below it, plus half of its ties, plus one half), read off cumulative counts in the seed's sorted
    order, so nothing is sorted per resample. NaN where a drawn model is missing or a side is constant
    among the drawn models. Equal to ``per_seed`` on the drawn rows up to floating-point rounding.
    """
    arrays = [np.asarray(a, dtype=float) for a in (x, *others)]
    weights = np.asarray(counts, dtype=float)
    if any(a.shape != arrays[0].shape for a in arrays) or arrays[0].ndim != 2:
        raise ValueError(f"expected equal (models, seeds) arrays, got shapes {[a.shape for a in arrays]}")
    if weights.ndim != 2 or weights.shape[1] != arrays[0].shape[0]:
        raise ValueError(f"expected (resamples, {arrays[0].shape[0]}) counts, got {weights.shape}")
    if method not in METHODS:
        raise ValueError(f"unknown correlation {method!r}: expected one of {', '.join(METHODS)}")
    (resamples, models), seeds = weights.shape, arrays[0].shape[1]
    if models < MIN_MODELS:
        return [np.full((resamples, seeds), np.nan) for _ in others]
    missing = [weights @ (np.isnan(arrays[0]) | np.isnan(a)) > 0 for a in arrays[1:]]
    arrays = [np.nan_to_num(a) for a in arrays]
    total = weights.sum(axis=1)[:, None]
    if method == "pearson":
        centred = [a - a.mean(axis=0) for a in arrays]  # smaller numbers, less cancellation in the moments
        sums = [weights @ a for a in centred]
        squares = [weights @ (a * a) for a in centred]
        crosses = [weights @ (centred[0] * a) for a in centred[1:]]
        constant = [_constant_draws(a, weights) for a in arrays]
    else:  # doubled average ranks are integers: the sums are exact in int64
        draws = np.asarray(counts, dtype=np.int32)  # doubled ranks and their products with counts stay below 2**31
        sums, squares, crosses = ([np.empty((resamples, seeds), dtype=np.int64) for _ in arrays] for _ in range(3))
        constant = [np.empty((resamples, seeds), dtype=bool) for _ in arrays]
        for s in range(seeds):
            ranked = []
            for index, a in enumerate(arrays):
                ranks, (sums[index][:, s], squares[index][:, s]), constant[index][:, s] = _drawn_ranks(a[:, s], draws)
                ranked.append(ranks)
            weighted = draws * ranked[0]
            for index, ranks in enumerate(ranked[1:]):
                crosses[index][:, s] = (weighted * ranks).sum(axis=1, dtype=np.int64)
    found = []
    for index in range(len(others)):
        covariance = crosses[index] - sums[0] * sums[index + 1] / total
        spread = (squares[0] - sums[0] ** 2 / total) * (squares[index + 1] - sums[index + 1] ** 2 / total)
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.clip(covariance / np.sqrt(spread), -1.0, 1.0)
        r[missing[index] | constant[0] | constant[index + 1]] = np.nan
        found.append(r)
    return found


def _constant_draws(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``(resamples, seeds)``: whether every model a resample drew has the same value on that seed."""
    single = ((weights > 0).sum(axis=1) == 1)[:, None]  # without ties, only a resample of one model is constant
    tied = [s for s in range(values.shape[1]) if len(np.unique(values[:, s])) < len(values)]
    constant = np.repeat(single, values.shape[1], axis=1)
    for s in tied:
        constant[:, s] = _drawn_groups(values[:, s], weights)[2]
    return constant


def _drawn_groups(values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per resample: the count drawn up to the end of each tie group of ``values`` (in sorted order) and within it,
    and whether one group holds every draw."""
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    ends = np.r_[np.flatnonzero(ordered[1:] != ordered[:-1]), len(values) - 1]  # last sorted position of each group
    through = np.cumsum(weights[:, order], axis=1)[:, ends]
    equal = np.diff(through, axis=1, prepend=0)
    return through, equal, equal.max(axis=1) == through[:, -1]


def _drawn_ranks(values: np.ndarray, draws: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray], np.ndarray]:
    """Each model's doubled average rank among the drawn values of every resample, the count-weighted sums of those
    and of their squares, and whether the drawn values are all equal.

    A model's rank is the count drawn below its value plus (the count drawn equal to it + 1) / 2, as
    ``rankdata`` ranks the rows of the resample (an undrawn model's rank is unused: its count is 0).
    """
    through, equal, constant = _drawn_groups(values, draws)
    doubled = 2 * through - equal + 1  # 2 * below + equal + 1
    _, group = np.unique(values, return_inverse=True)  # each model's tie group, numbered in sorted order
    product = equal * doubled
    sums = (product.sum(axis=1, dtype=np.int64), (product * doubled).sum(axis=1, dtype=np.int64))
    return doubled[:, group], sums, constant


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
