"""The bootstrap over items: resample units with replacement and recompute a statistic.

``interval`` gives one model's percentile interval (the runner's intervals over items);
``paired_bootstrap`` recomputes two models' statistic on the same resamples and reads the
confidence interval of the difference off the resampled differences (``harness compare``).

Statistics act on per-unit arrays and whole matrices of resamples at once (one row per resample):
``mean`` of fields (a unit is a sum and a count of values, so every sample of an id moves
together), ``pearson`` and ``spearman`` of a score with a reference, ``auc`` (ROC AUC) of a
score against 0/1 labels, and ``moments`` (per seed, Pearson's r from summed moments; the mean
over seeds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from harness.errors import HarnessError
from harness.results.statistic import KINDS, Statistic

__all__ = ["KINDS", "Bootstrap", "Interval", "Paired", "Statistic", "Units", "interval", "paired_bootstrap"]

CELLS_PER_CHUNK = 4_000_000  # resample matrix entries held in memory at once
SPARSE_SHARE = 0.2  # below this share of (unit, seed) entries present, seed_sums beats unit_sums (measured)
SUM_BLOCK_CELLS = 16_384  # float64 sums of resamples built at once by ``unit_sums`` (128 kB)


@dataclass(frozen=True)
class Units:
    """One model's per-unit arrays.

    ``mean``: ``values`` are per-unit sums and ``reference`` the per-unit counts. ``pearson``,
    ``spearman``, ``auc``: ``values`` are the scores and ``reference`` the gold values or labels.
    ``moments``: ``values`` has shape (units, seeds, 6), the per-seed sums (count, Σx, Σy, Σx²,
    Σy², Σxy) of each unit's samples; ``reference`` is unused.
    """

    kind: str
    values: np.ndarray
    reference: np.ndarray

    def __len__(self) -> int:
        return len(self.values)

    @property
    def width(self) -> int:
        """Array entries per unit (the memory a resample row takes per unit): 1 where ``unit_sums`` sums in place."""
        if self.kind == "moments" and _sums_in_place(self.values):
            return 1
        return max(1, int(np.prod(self.values.shape[1:])))

    def statistic(self, index: np.ndarray) -> np.ndarray:
        """The statistic on each resample (a row of unit indices)."""
        if self.kind == "moments":
            summed = seed_sums if _mostly_absent(self.values) else unit_sums  # the same bits, the faster way
            return _moments(summed(self.values, index))
        reference = self.reference[index]
        if self.kind == "mean":
            return np.asarray(self.values[index].sum(axis=1) / reference.sum(axis=1), dtype=float)
        return MEASURES[self.kind](self.values[index], reference)


@dataclass(frozen=True)
class Paired:
    """Per-unit arrays of two models on the same units (``a`` and ``b`` as ``Units.values``, a shared ``reference``)."""

    kind: str
    a: np.ndarray
    b: np.ndarray
    reference: np.ndarray

    def values(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Both models' statistic on each resample (a row of unit indices)."""
        return Units(self.kind, self.a, self.reference).statistic(index), Units(
            self.kind, self.b, self.reference
        ).statistic(index)


def unit_sums(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``values[index].sum(axis=1)`` for float64 per-unit arrays of two or more dimensions, bit for bit, without
    holding ``values[index]``: NumPy adds a resample's units one after another there (the summed axis is not the
    last), and so does this, into a block of resamples small enough to stay in the CPU cache."""
    if not _sums_in_place(values) or index.ndim != 2 or index.shape[1] == 0:
        return np.asarray(values[index].sum(axis=1))
    flat = values.reshape(len(values), -1)
    sums = np.empty((len(index), flat.shape[1]))
    rows = max(1, SUM_BLOCK_CELLS // flat.shape[1])
    for start in range(0, len(index), rows):
        order = np.ascontiguousarray(index[start : start + rows].T)  # one row per position in the resample
        block = sums[start : start + rows]
        block[:] = 0.0  # NumPy's start too (a sum of -0.0 is 0.0)
        unit = np.empty_like(block)
        for positions in order:
            np.take(flat, positions, axis=0, out=unit)
            block += unit
    return sums.reshape(len(index), *values.shape[1:])


def seed_sums(values: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``unit_sums`` of per-seed sums (units, seeds, fields), bit for bit, adding only the seeds each unit has
    (a unit whose fields in a seed are all zero adds nothing there: the sums start at 0.0, to which adding
    0.0 or -0.0 changes no bit). Each resample's cells receive its units' values in the resample's order
    (``np.bincount`` adds its weights in the order given)."""
    if values.ndim != 3 or values.dtype != np.float64 or index.ndim != 2 or index.shape[1] == 0:
        return unit_sums(values, index)
    _, seeds, fields = values.shape
    has = values.any(axis=2)
    unit_of, seed_of = np.nonzero(has)  # the entries (unit, seed) a unit has, by unit
    entries = np.ascontiguousarray(values[unit_of, seed_of].T)  # (fields, entries)
    counts = has.sum(axis=1)
    starts = np.cumsum(counts) - counts
    sums = np.empty((len(index), seeds, fields))
    rows = max(1, CELLS_PER_CHUNK // (4 * max(1, index.shape[1])))
    for first in range(0, len(index), rows):
        block = index[first : first + rows]
        per = counts[block]  # entries each position of each resample adds
        flat, flat_per = block.ravel(), per.ravel()  # resample after resample, each in its order
        ends = np.cumsum(flat_per)
        taken = np.repeat(starts[flat] - (ends - flat_per), flat_per) + np.arange(ends[-1])
        cells = np.repeat(np.arange(len(block)) * seeds, per.sum(axis=1)) + seed_of[taken]
        for field in range(fields):
            sums[first : first + len(block), :, field] = np.bincount(
                cells, weights=entries[field][taken], minlength=len(block) * seeds
            ).reshape(len(block), seeds)
    return sums


def _mostly_absent(values: np.ndarray) -> bool:
    """Whether per-seed sums (units, seeds, fields) leave most (unit, seed) entries empty, as a large corr run's
    do (each item in one or two of 25 seeds): ``seed_sums`` then adds far fewer values; where most entries are
    there (every item in every seed) its scattered adds cost about ten times ``unit_sums``' contiguous ones."""
    if values.ndim != 3:
        return False
    present = np.count_nonzero(values.any(axis=2))
    return bool(present <= SPARSE_SHARE * values.shape[0] * values.shape[1])


def _sums_in_place(values: np.ndarray) -> bool:
    return values.dtype == np.float64 and values.ndim >= 2


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise Pearson correlation (NaN where a row is constant)."""
    xc = x - x.mean(axis=1, keepdims=True)
    yc = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt((xc * xc).sum(axis=1) * (yc * yc).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (xc * yc).sum(axis=1) / denominator, np.nan)


def _auc(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Row-wise ROC AUC by the rank-sum formula, ties counting half (NaN where a row has one class)."""
    from scipy.stats import rankdata

    ranks = rankdata(scores, axis=1)
    positives = labels.sum(axis=1)
    negatives = labels.shape[1] - positives
    u = (ranks * labels).sum(axis=1) - positives * (positives + 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(positives * negatives > 0, u / (positives * negatives), np.nan)


def _spearman(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Row-wise Spearman's rho: Pearson of average ranks (NaN where a row is constant)."""
    from scipy.stats import rankdata

    return _pearson(rankdata(x, axis=1), rankdata(y, axis=1))


def _moments(sums: np.ndarray) -> np.ndarray:
    """Pearson's r per seed from summed (count, Σx, Σy, Σx², Σy², Σxy) of shape (rows, seeds, 6); the mean over seeds."""
    n, sx, sy, sxx, syy, sxy = np.moveaxis(sums, -1, 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        covariance = sxy - sx * sy / n
        denominator = np.sqrt((sxx - sx * sx / n) * (syy - sy * sy / n))
        per_seed = np.where((n > 1) & (denominator > 0), covariance / denominator, np.nan)
    defined = np.isfinite(per_seed)
    counts = defined.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, np.where(defined, per_seed, 0.0).sum(axis=1) / counts, np.nan)


MEASURES = {"pearson": _pearson, "spearman": _spearman, "auc": _auc}


@dataclass(frozen=True)
class Bootstrap:
    """The observed statistics and difference, the percentile interval, and the two-sided p-value."""

    a: float
    b: float
    difference: float
    low: float
    high: float
    p_value: float
    confidence: float
    resamples: int
    defined: int
    seed: int


def _check_settings(resamples: int, confidence: float, units: int) -> None:
    if resamples < 1:
        raise HarnessError(f"--resamples must be at least 1, got {resamples}")
    if not 0 < confidence < 1:
        raise HarnessError(f"--confidence must be between 0 and 1, got {confidence}")
    if units < 2:
        raise HarnessError(f"a bootstrap needs at least 2 units, found {units}")


def resampled(
    statistic: Callable[[np.ndarray], np.ndarray], units: int, width: int, resamples: int, seed: int
) -> np.ndarray:
    """``statistic(index)`` on ``resamples`` rows of ``units`` indices drawn by ``default_rng(seed)``, in bounded chunks
    (the rows of up to ``KEPT_CELLS`` indices drawn once per process: a leaderboard resamples every result of
    a data set's items alike)."""
    if resamples * units <= KEPT_CELLS and resamples * units * width <= CELLS_PER_CHUNK:
        return statistic(_kept_rows(units, resamples, seed))
    rng = np.random.default_rng(seed)
    chunk = max(1, CELLS_PER_CHUNK // (units * width))
    parts = [
        statistic(rng.integers(0, units, size=(min(chunk, resamples - start), units)))
        for start in range(0, resamples, chunk)
    ]
    return np.concatenate(parts)


KEPT_CELLS = 1_000_000  # resample indices kept per (units, resamples, seed): 8 MB
_KEPT: dict[tuple[int, int, int], np.ndarray] = {}


def _kept_rows(units: int, resamples: int, seed: int) -> np.ndarray:
    """``default_rng(seed).integers(0, units, size=(resamples, units))``, drawn once (the last 8 kept, read-only)."""
    key = (units, resamples, seed)
    if key not in _KEPT:
        if len(_KEPT) >= 8:
            del _KEPT[next(iter(_KEPT))]
        rows = np.random.default_rng(seed).integers(0, units, size=(resamples, units))
        rows.flags.writeable = False
        _KEPT[key] = rows
    return _KEPT[key]


@dataclass(frozen=True)
class Interval:
    """One model's observed statistic and its percentile interval over resampled units."""

    value: float
    low: float
    high: float
    confidence: float
    resamples: int
    defined: int
    seed: int
    units: int


def interval(units: Units, resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> Interval:
    """The percentile bootstrap interval of the statistic over the units (``numpy.random.default_rng(seed)``).

    The resampled indices are ``rng.integers(0, len(units), size=(resamples, len(units)))`` (drawn
    in chunks of rows, which leaves the stream unchanged); the bounds are
    ``numpy.quantile(values, [(1 - confidence) / 2, (1 + confidence) / 2])`` over the resamples
    where the statistic is defined.
    """
    count = len(units)
    _check_settings(resamples, confidence, count)
    observed = float(units.statistic(np.arange(count)[None, :])[0])
    values = resampled(units.statistic, count, units.width, resamples, seed)
    values = values[np.isfinite(values)]
    if not values.size or not np.isfinite(observed):
        raise HarnessError("the statistic is undefined on these samples (constant values or a single class)")
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return Interval(observed, float(low), float(high), confidence, resamples, int(values.size), seed, count)


def paired_bootstrap(paired: Paired, resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> Bootstrap:
    """Resample the units ``resamples`` times (``numpy.random.default_rng(seed)``).

    The interval is the percentile interval of the resampled differences A - B; the p-value is
    twice the smaller share of differences on either side of zero (at most 1). Resamples where a
    statistic is undefined (a constant or one-class resample) are left out; ``defined`` counts
    the rest.
    """
    units = len(paired.a)
    _check_settings(resamples, confidence, units)
    observed_a, observed_b = (float(v[0]) for v in paired.values(np.arange(units)[None, :]))

    def difference(index: np.ndarray) -> np.ndarray:
        a, b = paired.values(index)
        return np.asarray(a - b, dtype=float)

    delta = resampled(difference, units, Units(paired.kind, paired.a, paired.reference).width, resamples, seed)
    delta = delta[np.isfinite(delta)]
    if not delta.size or not np.isfinite(observed_a - observed_b):
        raise HarnessError("the statistic is undefined on these samples (constant values or a single class)")
    tail = (1 - confidence) / 2
    low, high = np.quantile(delta, [tail, 1 - tail])
    p_value = min(1.0, 2 * min(float(np.mean(delta <= 0)), float(np.mean(delta >= 0))))
    return Bootstrap(
        observed_a,
        observed_b,
        observed_a - observed_b,
        float(low),
        float(high),
        p_value,
        confidence,
        resamples,
        int(delta.size),
        seed,
    )
