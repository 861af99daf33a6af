"""Is BackRetrieval significantly closer to XLR than CORR is? (SIGIR 2021, Table 1 and its claim of significance.)

Two complementary answers, for Pearson and for Spearman:

- per seed, Steiger's (1980) Z for two dependent correlations that share one variable:
  r(BkR, XLR) against r(CORR, XLR), given r(BkR, CORR), with n = the number of models
  (two-sided); the seeds are combined by Rüger's (1978) order-statistic rule (about twice the
  median p), valid under any dependence between the p-values, as there is here (every seed
  scores the same models, and XLR often does not vary with the seed); the share of significant
  seeds and the median p are reported beside it;
- a bootstrap over models: resample the models with replacement, recompute both per-seed
  correlations, average their difference over seeds; the 95 % percentile interval of that mean
  difference.

Inputs are ``(models, seeds)`` arrays of XLR, BackRetrieval and CORR scores (NaN = missing).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from harness_tasks.retrieval.analysis.correlation import METHODS, Method, per_seed, resampled_correlations

ALPHA = 0.05
RESAMPLES = 2000
CONFIDENCE = 0.95
MIN_MODELS_TEST = 4  # Steiger's Z scales by sqrt(n - 3)
# Var(atanh rho) of Spearman's rho is about 1.06 / (n - 3) (Fieller, Hartley and Pearson 1957), not 1 / (n - 3)
VARIANCE_FACTOR: dict[str, float] = {"pearson": 1.0, "spearman": 1.06}


def steiger_z(
    r_xb: float | None, r_xc: float | None, r_bc: float | None, n: int, variance_factor: float = 1.0
) -> tuple[float, float] | None:
    """Steiger's (1980, eq. 15) Z and its two-sided p for H0: rho(x, b) = rho(x, c), with b and c correlated by ``r_bc``.

    Z = (atanh r_xb - atanh r_xc) sqrt(n - 3) / sqrt(f (2 - 2 c)), where, with rbar = (r_xb + r_xc) / 2,
    psi = r_bc (1 - 2 rbar^2) - rbar^2 (1 - 2 rbar^2 - r_bc^2) / 2 and c = psi / (1 - rbar^2)^2;
    f = ``variance_factor`` (1 for Pearson's r, 1.06 for Spearman's rho).
    None when undefined: n < 4, a correlation missing or of magnitude 1, or a non-positive variance.
    """
    if r_xb is None or r_xc is None or r_bc is None or n < MIN_MODELS_TEST:
        return None
    if any(not math.isfinite(v) or abs(v) >= 1 for v in (r_xb, r_xc, r_bc)):
        return None
    mean_sq = ((r_xb + r_xc) / 2) ** 2
    psi = r_bc * (1 - 2 * mean_sq) - 0.5 * mean_sq * (1 - 2 * mean_sq - r_bc**2)
    covariance = psi / (1 - mean_sq) ** 2
    if 2 - 2 * covariance <= 0:
        return None
    z = (math.atanh(r_xb) - math.atanh(r_xc)) * math.sqrt(n - 3) / math.sqrt(variance_factor * (2 - 2 * covariance))
    return z, math.erfc(abs(z) / math.sqrt(2))  # 2 P(N(0, 1) > |z|), without importing SciPy


def ruger_combination(pvalues: Sequence[float]) -> float | None:
    """Rüger's (1978) combination, valid under any dependence between the p-values: min(1, K / k * p_(k)), k = ceil(K / 2).

    p_(k) is the k-th smallest of the K p-values, so this is about twice the median p.
    """
    if not pvalues:
        return None
    ordered = sorted(pvalues)
    k = math.ceil(len(ordered) / 2)
    return min(1.0, len(ordered) / k * ordered[k - 1])


def dependent_test(xlr: np.ndarray, bkr: np.ndarray, corr: np.ndarray, method: Method = "pearson") -> dict[str, Any]:
    """Steiger's Z per seed for r(BkR, XLR) vs r(CORR, XLR), and its combination over the seeds where it is defined.

    A seed where a correlation is +-1 is degenerate (Fisher's z infinite): where exactly one of r(BkR, XLR) and
    r(CORR, XLR) is, Z is infinite in the limit and the seed counts as tested with p = 0 (``z`` None, ``degenerate``
    names the correlation); where both are, or only r(BkR, CORR), it is untested. ``seeds_degenerate`` counts
    them all, ``seeds_at_p0`` those counted as p = 0.
    """
    n = int(np.asarray(xlr).shape[0])
    series = [per_seed(a, b, method) for a, b in ((xlr, bkr), (xlr, corr), (bkr, corr))]
    seeds: list[dict[str, Any] | None] = []
    degenerate = 0
    for r_xb, r_xc, r_bc in zip(*series):
        values = (_defined(r_xb), _defined(r_xc), _defined(r_bc))
        result = steiger_z(*values, n, VARIANCE_FACTOR[method])
        unit = _unit_correlations(values, n)
        degenerate += bool(unit)
        if result is not None:
            seeds.append({"z": result[0], "p": result[1]})
        elif unit in ("r(BkR, XLR)", "r(CORR, XLR)"):  # Z's limit as that |r| -> 1: infinite, p = 0
            seeds.append({"z": None, "p": 0.0, "degenerate": f"{unit} = {values[unit == 'r(CORR, XLR)']:+.0f}"})
        else:
            seeds.append(None)
    pvalues = [s["p"] for s in seeds if s is not None]
    return {
        "test": "Steiger (1980) Z, two-sided"
        + (
            ", divided by sqrt(1.06) for Spearman's rho (Fieller, Hartley and Pearson 1957)"
            if method == "spearman"
            else ""
        ),
        "models": n,
        "alpha": ALPHA,
        "per_seed": seeds,
        "seeds_tested": len(pvalues),
        "seeds_degenerate": degenerate,
        "seeds_at_p0": sum(s is not None and "degenerate" in s for s in seeds),
        "degenerate_rule": "|r| = 1 makes Fisher's z infinite: a seed where exactly one of r(BkR, XLR) and "
        "r(CORR, XLR) is +-1 counts as p = 0 (the limit of Z), one where both are or only r(BkR, CORR) is untested",
        "share_significant": sum(p < ALPHA for p in pvalues) / len(pvalues) if pvalues else None,
        "median_p": float(np.median(pvalues)) if pvalues else None,
        "combined_p": ruger_combination(pvalues),
        "combination": "Rüger (1978), about 2 x median p, valid under dependence",
    }


def _unit_correlations(values: tuple[float | None, float | None, float | None], n: int) -> str:
    """Which correlation of a seed with all three defined (and n >= 4) is +-1: ``r(BkR, XLR)`` or ``r(CORR, XLR)``
    when only that one of the two is, ``both`` when both are, ``r(BkR, CORR)`` when only it is; "" when none is."""
    if n < MIN_MODELS_TEST or any(v is None for v in values):
        return ""
    r_xb, r_xc, r_bc = (abs(v) >= 1 for v in values if v is not None)
    if r_xb and r_xc:
        return "both"
    return "r(BkR, XLR)" if r_xb else "r(CORR, XLR)" if r_xc else "r(BkR, CORR)" if r_bc else ""


def _defined(value: float) -> float | None:
    """None for NaN (an undefined correlation), else the value as a float."""
    return None if np.isnan(value) else float(value)


def _mean_difference(xlr: np.ndarray, bkr: np.ndarray, corr: np.ndarray, method: Method) -> np.ndarray:
    """Mean over seeds of r(BkR, XLR) - r(CORR, XLR), over the seeds where both are defined (NaN if none)."""
    return _seed_mean(per_seed(xlr, bkr, method) - per_seed(xlr, corr, method))


def _resampled_difference(
    xlr: np.ndarray, bkr: np.ndarray, corr: np.ndarray, counts: np.ndarray, method: Method
) -> np.ndarray:
    """``_mean_difference`` on every resample of the models, given as draw counts (``resampled_correlations``)."""
    with_bkr, with_corr = resampled_correlations(xlr, [bkr, corr], counts, method)
    return _seed_mean(with_bkr - with_corr)


def _seed_mean(difference: np.ndarray) -> np.ndarray:
    """The mean over the last axis (seeds) of the defined values; NaN where none is."""
    defined = ~np.isnan(difference)
    with np.errstate(invalid="ignore"):
        return np.where(defined.any(axis=-1), np.nansum(difference, axis=-1) / defined.sum(axis=-1), np.nan)


def bootstrap_difference(
    xlr: np.ndarray,
    bkr: np.ndarray,
    corr: np.ndarray,
    method: Method = "pearson",
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> dict[str, Any]:
    """Percentile interval of the per-seed-mean difference r(BkR, XLR) - r(CORR, XLR) over models resampled with replacement.

    Resamples where the difference is undefined on every seed (e.g. all draws of one model) are
    left out; how many were used is reported. Resample r draws the rows
    ``default_rng(seed).integers(0, models, size=(resamples, models))[r]`` of the arrays in the order
    given (``harness meta`` passes the models sorted by identity, so the draws do not depend on the
    order of the results files); the correlations on all resamples come from the draw counts at once
    (``resampled_correlations``), equal to correlating the drawn rows up to floating-point rounding.
    """
    x, b, c = (np.asarray(a, dtype=float) for a in (xlr, bkr, corr))
    n = x.shape[0]
    indices = np.random.default_rng(seed).integers(0, n, size=(resamples, n))
    # how often each resample draws each model: all that a correlation over the drawn models needs
    counts = np.bincount((indices + n * np.arange(resamples)[:, None]).ravel(), minlength=resamples * n)
    return {
        **_percentile_interval(x, b, c, counts.reshape(resamples, n), method, confidence),
        "seed": seed,
        "over": "models",
        "method": "percentile",
    }


def family_bootstrap_difference(
    xlr: np.ndarray,
    bkr: np.ndarray,
    corr: np.ndarray,
    families: Sequence[str],
    method: Method = "pearson",
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
    confidence: float = CONFIDENCE,
) -> dict[str, Any]:
    """``bootstrap_difference`` with the models clustered by family (``families[i]``: model i's), two-stage: each
    resample draws as many families as there are with replacement, then, within each drawn family, as many of its
    members as it has, with replacement (Davison and Hinkley 1997, sect. 3.8, resampling both stages). Models of
    one family (layers, poolings, degradations of one network) are not independent draws: the interval is that of
    a sample of families. Resample r draws with ``default_rng(seed)``, family by family in the order of first
    appearance in ``families``."""
    x, b, c = (np.asarray(a, dtype=float) for a in (xlr, bkr, corr))
    names = list(dict.fromkeys(families))
    members = [np.flatnonzero(np.asarray(families) == name) for name in names]
    rng = np.random.default_rng(seed)
    counts = np.zeros((resamples, x.shape[0]), dtype=np.int64)
    for r in range(resamples):
        for f in rng.integers(0, len(names), size=len(names)):
            np.add.at(counts[r], rng.choice(members[f], size=len(members[f])), 1)
    interval = _percentile_interval(x, b, c, counts, method, confidence)
    over = "families, then models within them"
    return {**interval, "seed": seed, "over": over, "method": "percentile", "families": len(names)}


def _percentile_interval(
    x: np.ndarray, b: np.ndarray, c: np.ndarray, counts: np.ndarray, method: Method, confidence: float
) -> dict[str, Any]:
    """The observed mean difference and the percentile interval of its resamples (``counts``: the draws), those
    where it is undefined on every seed left out (``resamples_used``)."""
    observed = _mean_difference(x, b, c, method)
    draws = _resampled_difference(x, b, c, counts, method)
    draws = draws[~np.isnan(draws)]
    tail = (1 - confidence) / 2 * 100
    low, high = (float(v) for v in np.percentile(draws, [tail, 100 - tail])) if draws.size else (None, None)
    return {
        "difference": None if np.isnan(observed) else float(observed),
        "low": low,
        "high": high,
        "confidence": confidence,
        "resamples": len(counts),
        "resamples_used": int(draws.size),
    }


def compare(
    xlr: np.ndarray, bkr: np.ndarray, corr: np.ndarray, *, resamples: int = RESAMPLES, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """For Pearson and Spearman: the per-seed dependent-correlation test and the bootstrap interval of the difference.

    ``xlr``, ``bkr``, ``corr``: ``(models, seeds)`` arrays, rows in the same model order. Returns
    ``{method: {<dependent_test fields>, "bootstrap": <bootstrap_difference fields>}}``.
    """
    return {
        method: {
            **dependent_test(xlr, bkr, corr, method),
            "bootstrap": bootstrap_difference(xlr, bkr, corr, method, resamples=resamples, seed=seed),
        }
        for method in METHODS
    }


def format_rows(result: dict[str, dict[str, Any]]) -> list[str]:
    """The comparison as text lines: one row per correlation (share significant, median p, combined p, difference, interval)."""
    first = next(iter(result.values()))
    boot = first["bootstrap"]
    lines = [
        f"BkR vs CORR, per seed: {first['test']} (n = {first['models']} models); combined p: {first['combination']}",
        *(
            [f"spearman: {result['spearman']['test']}"]
            if "spearman" in result and result["spearman"]["test"] != first["test"]
            else []
        ),
        f"difference: mean over seeds, {boot['confidence']:.0%} percentile interval of a bootstrap over models "
        f"({boot['resamples']} resamples, seed {boot['seed']})",
    ]
    shares = {method: significant_seeds(values) for method, values in result.items()}
    width = max(10, *(len(share) + 2 for share in shares.values()))  # a degenerate seed's note widens the column
    lines.append(f"{'':<12}{'p<0.05':>{width}}{'median p':>12}{'combined p':>12}{'r(BkR)-r(CORR)':>17}{'interval':>20}")
    for method, values in result.items():
        b = values["bootstrap"]
        interval = "n/a" if b["low"] is None else f"[{b['low']:.3f}, {b['high']:.3f}]"
        lines.append(
            f"{method:<12}{shares[method]:>{width}}{_p(values['median_p']):>12}{_p(values['combined_p']):>12}"
            f"{_num(b['difference']):>17}{interval:>20}"
        )
    return lines


def significant_seeds(values: dict[str, Any], between: str = "/") -> str:
    """How many tested seeds reached p < 0.05 (``7/25``, or ``7 of 25 seeds`` with ``between=" of "``), or n/a;
    with degenerate seeds (``dependent_test``: |r| = 1) how many and how they were counted."""
    if values["share_significant"] is None:
        return "n/a"
    count = round(values["share_significant"] * values["seeds_tested"])
    share = f"{count}{between}{values['seeds_tested']}" + (" seeds" if between != "/" else "")
    degenerate, at_p0 = values.get("seeds_degenerate", 0), values.get("seeds_at_p0", 0)
    if not degenerate:
        return share
    counted = [f"{at_p0} {'at' if between == '/' else 'counted as'} p = 0"] if at_p0 else []
    counted += [f"{degenerate - at_p0} untested"] if degenerate > at_p0 else []
    if between == "/":
        return f"{share} ({', '.join(counted)})"
    return f"{share} ({degenerate} with a correlation of +-1: {', '.join(counted)})"


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.3f}"
