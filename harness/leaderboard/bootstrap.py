"""The paired bootstrap: resample units with replacement, recompute both models' statistic on the
same resample, and read the confidence interval of the difference off the resampled differences.

Statistics act on per-unit arrays and whole matrices of resamples at once (one row per resample):
``mean`` of fields (a unit is a sum and a count of values, so every sample of an id moves
together), ``pearson`` of a score with a reference, and ``auc`` (ROC AUC) of a score against 0/1
labels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from harness.errors import HarnessError

KINDS = ("mean", "pearson", "auc")
CELLS_PER_CHUNK = 4_000_000  # resample matrix entries held in memory at once


@dataclass(frozen=True)
class Statistic:
    """What is computed from the samples: ``mean`` of fields, or ``pearson``/``auc`` of (score, reference)."""

    kind: str
    fields: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise HarnessError(f"unknown statistic {self.kind!r}: use mean, pearson or auc")
        if not self.fields or (self.kind != "mean" and len(self.fields) != 2):
            raise HarnessError(f"statistic {self.kind!r} takes {'one or more fields' if self.kind == 'mean' else 'two fields: score,reference'}")

    @classmethod
    def parse(cls, text: str) -> Statistic:
        """``mean:hit``, ``mean:tc_ab,tc_ba``, ``pearson:yisi2,gold`` or ``auc:yisi2,label``."""
        kind, _, fields = text.partition(":")
        return cls(kind.strip(), tuple(f.strip() for f in fields.split(",") if f.strip()))

    def __str__(self) -> str:
        return f"{self.kind}:{','.join(self.fields)}"


@dataclass(frozen=True)
class Paired:
    """Per-unit arrays of two models on the same units.

    For ``mean``: ``a`` and ``b`` are per-unit sums and ``reference`` the per-unit counts. For
    ``pearson`` and ``auc``: ``a`` and ``b`` are the scores and ``reference`` the shared gold
    values or labels.
    """

    kind: str
    a: np.ndarray
    b: np.ndarray
    reference: np.ndarray

    def values(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Both models' statistic on each resample (a row of unit indices)."""
        reference = self.reference[index]
        if self.kind == "mean":
            counts = reference.sum(axis=1)
            return self.a[index].sum(axis=1) / counts, self.b[index].sum(axis=1) / counts
        measure = _pearson if self.kind == "pearson" else _auc
        return measure(self.a[index], reference), measure(self.b[index], reference)


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


def paired_bootstrap(paired: Paired, resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> Bootstrap:
    """Resample the units ``resamples`` times (``numpy.random.default_rng(seed)``).

    The interval is the percentile interval of the resampled differences A - B; the p-value is
    twice the smaller share of differences on either side of zero (at most 1). Resamples where a
    statistic is undefined (a constant or one-class resample) are left out; ``defined`` counts
    the rest.
    """
    if resamples < 1:
        raise HarnessError(f"--resamples must be at least 1, got {resamples}")
    if not 0 < confidence < 1:
        raise HarnessError(f"--confidence must be between 0 and 1, got {confidence}")
    units = len(paired.a)
    if units < 2:
        raise HarnessError(f"a paired bootstrap needs at least 2 units, found {units}")
    observed_a, observed_b = (float(v[0]) for v in paired.values(np.arange(units)[None, :]))
    rng = np.random.default_rng(seed)
    chunk = max(1, CELLS_PER_CHUNK // units)
    differences = []
    for start in range(0, resamples, chunk):
        a, b = paired.values(rng.integers(0, units, size=(min(chunk, resamples - start), units)))
        differences.append(a - b)
    delta = np.concatenate(differences)
    delta = delta[np.isfinite(delta)]
    if not delta.size or not np.isfinite(observed_a - observed_b):
        raise HarnessError("the statistic is undefined on these samples (constant values or a single class)")
    tail = (1 - confidence) / 2
    low, high = np.quantile(delta, [tail, 1 - tail])
    p_value = min(1.0, 2 * min(float(np.mean(delta <= 0)), float(np.mean(delta >= 0))))
    return Bootstrap(observed_a, observed_b, observed_a - observed_b, float(low), float(high), p_value, confidence,
                     resamples, int(delta.size), seed)
