"""Monotone maps from BackRetrieval to XLR Recall@k, their cross-validation and prediction intervals.

Plain arrays in, plain numbers out (``calibrate`` reads the results files). Two maps:

- ``isotonic``: the non-decreasing step-linear fit of XLR on BkR (pool-adjacent-violators,
  scikit-learn's ``IsotonicRegression``, clipped to [0, 1] and constant beyond the fitted range);
- ``logistic``: XLR = sigmoid(a + b logit(BkR)) with b >= 0, fitted by minimising the binomial
  deviance of the fractions (a fractional logit, Papke and Wooldridge 1996), by L-BFGS-B.

Errors are out-of-fold: every point is predicted by the map fitted without its group (a model,
or a language pair). Prediction intervals add, on the logit scale, the out-of-fold residuals to
the map's values at the input's sampling spread (the standard error of the mean BkR over seeds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.special import expit, logit
from scipy.stats import norm

Floats = Sequence[float] | npt.NDArray[np.float64]  # what the functions below accept as a list of numbers

METHODS = ("isotonic", "logistic")
EPSILON = 1e-3  # Recall values are clipped to [EPSILON, 1 - EPSILON] before a logit
INPUT_QUANTILES = 21  # points of the normal grid that represents the input's sampling spread


def clipped_logit(values: Any) -> np.ndarray:
    """logit of values clipped to [EPSILON, 1 - EPSILON]."""
    return logit(np.clip(np.asarray(values, dtype=float), EPSILON, 1 - EPSILON))


@dataclass(frozen=True)
class MonotoneMap:
    """A fitted map: ``isotonic`` (knots x, y, linear in between, constant outside) or ``logistic`` (a, b)."""

    method: str
    params: dict[str, list[float]]

    def __call__(self, bkr: Any) -> np.ndarray:
        """The estimated XLR at each BkR value."""
        x = np.asarray(bkr, dtype=float)
        if self.method == "isotonic":
            return np.interp(x, self.params["x"], self.params["y"])
        a, b = self.params["ab"]
        return expit(a + b * clipped_logit(x))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the method and its parameters."""
        return {"method": self.method, "params": self.params}


def fit(bkr: Floats, xlr: Floats, method: str) -> MonotoneMap:
    """Fit ``method`` (isotonic or logistic) to the points (BkR, XLR)."""
    x, y = np.asarray(bkr, dtype=float), np.asarray(xlr, dtype=float)
    if x.shape != y.shape or x.size < 2:
        raise ValueError(f"need at least two (BkR, XLR) points of equal length, got {x.size} and {y.size}")
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        model = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip").fit(x, y)
        return MonotoneMap("isotonic", {"x": model.X_thresholds_.tolist(), "y": model.y_thresholds_.tolist()})
    if method == "logistic":
        return MonotoneMap("logistic", {"ab": _fractional_logit(clipped_logit(x), np.clip(y, 0.0, 1.0)).tolist()})
    raise ValueError(f"unknown method {method!r}: expected one of {', '.join(METHODS)}")


def _fractional_logit(z: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(a, b >= 0) minimising the mean binomial deviance of y against sigmoid(a + b z)."""
    from scipy.optimize import minimize

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        eta = theta[0] + theta[1] * z
        # -[y log p + (1 - y) log(1 - p)] = log(1 + e^eta) - y eta; its gradient in eta is p - y
        value = np.mean(np.logaddexp(0.0, eta) - y * eta)
        residual = expit(eta) - y
        return float(value), np.array([residual.mean(), (residual * z).mean()])

    result = minimize(loss, np.array([0.0, 1.0]), jac=True, method="L-BFGS-B", bounds=[(None, None), (0.0, None)])
    return result.x


def out_of_fold(bkr: Floats, xlr: Floats, groups: Sequence[str], method: str) -> np.ndarray:
    """Each point's prediction by the map fitted on the points of every other group (NaN when too few remain)."""
    x, y, labels = np.asarray(bkr, dtype=float), np.asarray(xlr, dtype=float), np.asarray(groups)
    predicted = np.full(x.shape, np.nan)
    for group in np.unique(labels):
        held = labels == group
        if (~held).sum() >= 2:
            predicted[held] = fit(x[~held], y[~held], method)(x[held])
    return predicted


def errors(predicted: np.ndarray, xlr: Floats) -> dict[str, float | int]:
    """Mean absolute error, root mean squared error and the largest absolute error, on the Recall scale."""
    error = np.asarray(predicted, dtype=float) - np.asarray(xlr, dtype=float)
    error = error[~np.isnan(error)]
    return {
        "mae": float(np.abs(error).mean()),
        "rmse": float(np.sqrt((error**2).mean())),
        "max": float(np.abs(error).max()),
        "points": int(error.size),
    }


def logit_residuals(predicted: np.ndarray, xlr: Floats) -> np.ndarray:
    """logit(XLR) - logit(prediction) where the prediction is defined."""
    residuals = clipped_logit(xlr) - clipped_logit(predicted)
    return residuals[~np.isnan(np.asarray(predicted, dtype=float))]


def interval(
    mapping: MonotoneMap, bkr_mean: float, bkr_se: float, residuals: Floats, confidence: float = 0.95
) -> tuple[float, float, float]:
    """(estimate, low, high): the map at the mean BkR, and the interval of map(BkR) + residual on the logit scale.

    The input's spread is a grid of ``INPUT_QUANTILES`` normal quantiles of N(mean, se^2) (the mean alone when se = 0); each
    mapped value is shifted by every residual; the interval is the (1 -/+ confidence) / 2
    quantiles of those sums, mapped back by the sigmoid.
    """
    probabilities = (np.arange(INPUT_QUANTILES) + 0.5) / INPUT_QUANTILES if bkr_se > 0 else np.array([0.5])
    inputs = np.clip(bkr_mean + bkr_se * norm.ppf(probabilities), 0.0, 1.0)
    sums = (clipped_logit(mapping(inputs))[:, None] + np.asarray(residuals, dtype=float)[None, :]).ravel()
    tail = (1 - confidence) / 2
    low, high = np.quantile(sums, [tail, 1 - tail])
    return float(mapping(bkr_mean)), float(expit(low)), float(expit(high))


def coverage(
    bkr: Floats,
    xlr: Floats,
    se: Floats,
    groups: Sequence[str],
    method: str,
    confidence: float = 0.95,
) -> dict[str, float | int | None]:
    """Nested check of the intervals: each group held out, intervals from the map and residuals of the other groups alone."""
    x, y, spread, labels = (np.asarray(v) for v in (bkr, xlr, se, groups))
    inside = total = 0
    for group in np.unique(labels):
        held, rest = labels == group, labels != group
        if len(np.unique(labels[rest])) < 2:
            continue
        residuals = logit_residuals(out_of_fold(x[rest], y[rest], labels[rest], method), y[rest])
        if not residuals.size:  # no group of the rest could be predicted from the others: no interval to check
            continue
        mapping = fit(x[rest], y[rest], method)
        for value, truth, s in zip(x[held], y[held], spread[held]):
            _, low, high = interval(mapping, float(value), float(s), residuals, confidence)
            inside += int(low <= truth <= high)
            total += 1
    return {"inside": inside, "points": total, "share": inside / total if total else None}  # None: JSON, not NaN
