"""BkR vs CORR: per-seed correlations, Steiger's Z by hand, Rüger's combination, and the bootstrap over models."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_tasks.retrieval.analysis.correlation import per_seed, summarize
from harness_tasks.retrieval.analysis.significance import (
    bootstrap_difference,
    compare,
    dependent_test,
    ruger_combination,
    significant_seeds,
    steiger_z,
)

# 5 models (rows) x 2 seeds (columns); XLR does not vary with the seed, as on IKEA.
XLR = np.array([[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]], dtype=float)
BKR = np.array([[1, 2], [2, 1], [3, 3], [5, 4], [4, 5]], dtype=float)
CORR = np.array([[2, 3], [1, 1], [4, 2], [3, 5], [5, 4]], dtype=float)
# Centred, XLR is (-2, -1, 0, 1, 2) with sum of squares 10, as is every column (each a permutation of 1..5):
#   seed 0: BkR (-2, -1, 0, 2, 1), CORR (-1, -2, 1, 0, 2): r(B,X) = 9/10, r(C,X) = 8/10, r(B,C) = 6/10
#   seed 1: BkR (-1, -2, 0, 1, 2), CORR (0, -2, -1, 2, 1): r(B,X) = 9/10, r(C,X) = 6/10, r(B,C) = 8/10
# The columns are their own ranks, so Spearman's rho equals Pearson's r here.


def steiger_by_hand(r_xb: float, r_xc: float, r_bc: float, n: int) -> float:
    """Steiger (1980) eq. 15, written out."""
    rbar2 = ((r_xb + r_xc) / 2) ** 2
    psi = r_bc * (1 - 2 * rbar2) - 0.5 * rbar2 * (1 - 2 * rbar2 - r_bc**2)
    c = psi / (1 - rbar2) ** 2
    return (
        (0.5 * math.log((1 + r_xb) / (1 - r_xb)) - 0.5 * math.log((1 + r_xc) / (1 - r_xc)))
        * math.sqrt(n - 3)
        / math.sqrt(2 - 2 * c)
    )


def test_per_seed_correlations_by_hand():
    assert per_seed(XLR, BKR) == pytest.approx([0.9, 0.9])
    assert per_seed(XLR, CORR) == pytest.approx([0.8, 0.6])
    assert per_seed(BKR, CORR, "spearman") == pytest.approx([0.6, 0.8])


def test_spearman_with_ties_uses_average_ranks():
    # x = (1, 2, 2, 3) ranks to (1, 2.5, 2.5, 4): centred (-1.5, 0, 0, 1.5); y ranks centred (-1.5, -.5, .5, 1.5)
    # rho = 4.5 / sqrt(4.5 * 5) = 3 / sqrt(10)
    x = np.array([[1.0], [2.0], [2.0], [3.0]])
    y = np.array([[10.0], [20.0], [30.0], [40.0]])
    assert per_seed(x, y, "spearman") == pytest.approx([3 / math.sqrt(10)])


def test_undefined_seeds_are_nan_and_left_out_of_the_summary():
    x = np.array([[1.0, 1.0, 1.0], [2.0, 1.0, 2.0], [3.0, 1.0, np.nan]])
    y = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [4.0, 3.0, 3.0]])
    values = per_seed(x, y)
    # seed 0: x centred (-1, 0, 1), y centred (-4/3, -1/3, 5/3): r = 3 / sqrt(2 * 14/3)
    assert values[0] == pytest.approx(3 / math.sqrt(2 * 14 / 3))
    assert np.isnan(values[1]) and np.isnan(values[2])  # constant XLR; a missing value
    assert np.isnan(per_seed(x[:2], y[:2])).all()  # fewer than three models
    summary = summarize(values)
    assert summary["seeds_defined"] == 1 and summary["std"] == 0.0 and summary["per_seed"][1:] == [None, None]


def test_steiger_z_by_hand():
    # seed 0: rbar = .85, rbar^2 = .7225; psi = .6 (1 - 1.445) - .5 * .7225 (1 - 1.445 - .36) = -.267 + .29080625 = .02380625
    # c = .02380625 / .2775^2 = .309146; Z = (atanh .9 - atanh .8) sqrt(2) / sqrt(2 - 2c) = .373607 * 1.414214 / 1.175461
    z, p = steiger_z(0.9, 0.8, 0.6, 5)
    assert z == pytest.approx(steiger_by_hand(0.9, 0.8, 0.6, 5)) and z == pytest.approx(0.449492, abs=1e-6)
    assert p == pytest.approx(2 * (1 - 0.5 * (1 + math.erf(z / math.sqrt(2)))))
    # seed 1: rbar^2 = .5625; psi = .8 (1 - 1.125) - .5 * .5625 (1 - 1.125 - .64) = .11515625; c = .11515625 / .4375^2 = .601633
    z1, p1 = steiger_z(0.9, 0.6, 0.8, 5)
    assert z1 == pytest.approx(steiger_by_hand(0.9, 0.6, 0.8, 5)) and z1 == pytest.approx(1.234343, abs=1e-6)
    assert p == pytest.approx(0.653076, abs=1e-6) and p1 == pytest.approx(0.217075, abs=1e-6)
    assert steiger_z(0.8, 0.9, 0.6, 5)[0] == pytest.approx(-z)  # antisymmetric


@pytest.mark.parametrize(
    "args", [(0.9, 0.8, 0.6, 3), (1.0, 0.8, 0.6, 10), (0.9, None, 0.6, 10), (0.9, 0.8, math.nan, 10)]
)
def test_steiger_z_undefined(args):
    assert steiger_z(*args) is None


def test_ruger_combination_by_hand():
    assert ruger_combination([]) is None
    assert ruger_combination([0.3]) == pytest.approx(0.3)
    assert ruger_combination([0.653076, 0.217075]) == pytest.approx(2 * 0.217075)  # K = 2, k = 1
    assert ruger_combination([0.04, 0.01, 0.5, 1.0, 0.02]) == pytest.approx(
        5 / 3 * 0.04
    )  # K = 5, k = 3: third smallest
    assert ruger_combination([0.9, 0.8, 1.0]) == 1.0  # capped


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30))
def test_ruger_combination_is_a_monotone_p_value_at_least_the_lower_median(pvalues):
    combined = ruger_combination(pvalues)
    lower_median = sorted(pvalues)[math.ceil(len(pvalues) / 2) - 1]
    assert 0.0 <= combined <= 1.0 and combined >= lower_median
    assert ruger_combination([min(1.0, p + 0.1) for p in pvalues]) >= combined


def test_dependent_test_over_two_seeds_by_hand():
    result = dependent_test(XLR, BKR, CORR)
    assert result["models"] == 5 and result["seeds_tested"] == 2
    assert [s["z"] for s in result["per_seed"]] == pytest.approx(
        [steiger_by_hand(0.9, 0.8, 0.6, 5), steiger_by_hand(0.9, 0.6, 0.8, 5)]
    )
    assert result["share_significant"] == 0.0
    assert result["median_p"] == pytest.approx((0.653076 + 0.217075) / 2, abs=1e-6)
    assert result["combined_p"] == pytest.approx(2 * 0.217075, abs=1e-6)
    # Spearman's rho equals r here, but its Fisher z has variance 1.06 / (n - 3): Z shrinks by sqrt(1.06)
    spearman = dependent_test(XLR, BKR, CORR, "spearman")["per_seed"]
    assert [s["z"] for s in spearman] == pytest.approx([s["z"] / math.sqrt(1.06) for s in result["per_seed"]])
    assert steiger_z(0.9, 0.8, 0.6, 5, 1.06)[0] == pytest.approx(0.449492 / math.sqrt(1.06), abs=1e-6)


def test_dependent_test_significant_seed_and_undefined_seed():
    # 12 models; seed 0: BkR = XLR + small noise, CORR = XLR + large noise (clearly different); seed 1: BkR = XLR
    # exactly (r = 1: Fisher's z infinite, counted as p = 0, the limit of Z)
    rng = np.random.default_rng(0)
    xlr = np.repeat(np.linspace(0, 1, 12)[:, None], 2, axis=1)
    bkr = np.column_stack([xlr[:, 0] + rng.normal(0, 0.02, 12), xlr[:, 1]])
    corr = xlr + rng.normal(0, 0.5, (12, 2))
    result = dependent_test(xlr, bkr, corr)
    assert result["per_seed"][1] == {"z": None, "p": 0.0, "degenerate": "r(BkR, XLR) = +1"}
    assert result["seeds_tested"] == 2 and result["seeds_degenerate"] == 1 and result["seeds_at_p0"] == 1
    assert result["per_seed"][0]["p"] < 0.05 and result["share_significant"] == 1.0 and result["per_seed"][0]["z"] > 0


def test_degenerate_seeds_are_counted_and_said():
    # seed 0 as in the hand-computed case (r = .9, .8, .6: p = 0.653076); seed 1: BkR = XLR (r(BkR, XLR) = 1): p = 0;
    # seed 2: BkR = CORR = XLR (both 1: no difference to test): untested
    xlr = np.repeat(XLR[:, :1], 3, axis=1)
    bkr = np.column_stack([BKR[:, 0], XLR[:, 0], XLR[:, 0]])
    corr = np.column_stack([CORR[:, 0], CORR[:, 0], XLR[:, 0]])
    for method in ("pearson", "spearman"):
        result = dependent_test(xlr, bkr, corr, method)
        assert result["per_seed"][1] == {"z": None, "p": 0.0, "degenerate": "r(BkR, XLR) = +1"}
        assert result["per_seed"][2] is None
        assert (result["seeds_tested"], result["seeds_degenerate"], result["seeds_at_p0"]) == (2, 2, 1)
        assert result["share_significant"] == 0.5 and result["combined_p"] == 0.0  # Rüger: 2 / 1 x p_(1) = 0
        assert result["median_p"] == pytest.approx(result["per_seed"][0]["p"] / 2)  # the median of p and 0
    assert dependent_test(xlr, bkr, corr)["per_seed"][0]["p"] == pytest.approx(0.653076, abs=1e-6)
    assert significant_seeds(result) == "1/2 (1 at p = 0, 1 untested)"
    assert significant_seeds(result, " of ") == (
        "1 of 2 seeds (2 with a correlation of +-1: 1 counted as p = 0, 1 untested)"
    )
    # r(CORR, XLR) = -1 is degenerate the other way; no degenerate seed leaves the count as it was
    flipped = dependent_test(
        xlr[:, :2], np.column_stack([BKR[:, 0], BKR[:, 0]]), np.column_stack([CORR[:, 0], -XLR[:, 0]])
    )
    assert flipped["per_seed"][1]["degenerate"] == "r(CORR, XLR) = -1" and flipped["seeds_at_p0"] == 1
    untested_only = dependent_test(xlr[:, 2:], bkr[:, 2:], corr[:, 2:])
    assert untested_only["seeds_tested"] == 0 and significant_seeds(untested_only) == "n/a"
    one_untested = {"share_significant": 0.0, "seeds_tested": 24, "seeds_degenerate": 1, "seeds_at_p0": 0}
    assert significant_seeds(one_untested) == "0/24 (1 untested)"
    plain = dependent_test(XLR, BKR, CORR)
    assert plain["seeds_degenerate"] == 0 and significant_seeds(plain) == "0/2"


def test_family_bootstrap_draws_families_then_members(monkeypatch):
    from harness_tasks.retrieval.analysis import significance

    # BkR = XLR (r = 1), CORR = -XLR (r = -1): the difference is 2 in every resample, however the models are drawn
    families = ["a", "b", "a", "b", "b"]
    boot = significance.family_bootstrap_difference(XLR, XLR.copy(), -XLR, families, resamples=300, seed=1)
    assert (boot["difference"], boot["low"], boot["high"], boot["families"]) == (2.0, 2.0, 2.0, 2)
    assert boot["over"] == "families, then models within them" and boot["resamples_used"] <= 300
    # the draws: per resample, a drawn family contributes as many draws as it has members (2 for a, 3 for b), and
    # two families are drawn, so a resample draws 4, 5 or 6 models, a family's models drawn k times its size
    seen = {}
    original = significance._percentile_interval

    def capture(x, b, c, counts, method, confidence):
        seen["counts"] = counts
        return original(x, b, c, counts, method, confidence)

    monkeypatch.setattr(significance, "_percentile_interval", capture)
    significance.family_bootstrap_difference(XLR, BKR, CORR, families, resamples=400, seed=3)
    counts = seen["counts"]
    per_family = np.stack([counts[:, [0, 2]].sum(axis=1), counts[:, [1, 3, 4]].sum(axis=1)], axis=1)
    assert np.all(per_family % [2, 3] == 0) and set((per_family // [2, 3]).sum(axis=1)) == {2}
    assert {4, 5, 6} == set(counts.sum(axis=1))


def test_bootstrap_of_a_fixed_difference():
    # BkR = XLR (r = 1) and CORR = -XLR (r = -1) in every resample where XLR varies: the difference is 2 in all of them
    boot = bootstrap_difference(XLR, XLR.copy(), -XLR, resamples=500, seed=1)
    assert (
        boot["difference"] == pytest.approx(2.0)
        and boot["low"] == pytest.approx(2.0)
        and boot["high"] == pytest.approx(2.0)
    )
    same = bootstrap_difference(XLR, BKR, BKR.copy(), resamples=200, seed=1)
    assert (same["difference"], same["low"], same["high"]) == pytest.approx((0.0, 0.0, 0.0))


def test_bootstrap_leaves_out_undefined_resamples():
    # 3 models, XLR = (1, 1, 2): a resample is defined only when it draws model 2 and one of models 0 or 1,
    # probability 1 - (2/3)^3 - (1/3)^3 = 2/3
    xlr = np.array([[1.0], [1.0], [2.0]])
    boot = bootstrap_difference(xlr, xlr.copy(), -xlr, resamples=3000, seed=0)
    assert abs(boot["resamples_used"] - 2000) < 5 * math.sqrt(3000 * 2 / 9)
    assert boot["low"] == pytest.approx(2.0) and boot["high"] == pytest.approx(2.0)


def test_bootstrap_is_seeded_and_brackets_the_observed_difference():
    first = bootstrap_difference(XLR, BKR, CORR, resamples=400, seed=7)
    assert first == bootstrap_difference(XLR, BKR, CORR, resamples=400, seed=7)
    assert first != bootstrap_difference(XLR, BKR, CORR, resamples=400, seed=8)
    assert first["difference"] == pytest.approx(0.2)  # mean of (.9 - .8, .9 - .6)
    assert first["low"] <= first["difference"] <= first["high"] and first["resamples"] == 400


def test_compare_holds_both_correlations():
    result = compare(XLR, BKR, CORR, resamples=100, seed=0)
    assert set(result) == {"pearson", "spearman"}
    assert result["pearson"]["bootstrap"]["resamples"] == 100 and result["spearman"]["seeds_tested"] == 2


def test_significant_seeds_and_an_undefined_observed_difference_read_as_n_a():
    from harness_tasks.retrieval.analysis.significance import significant_seeds
    from harness_tasks.retrieval.plots import _significance_rows

    values = {"share_significant": 0.28, "seeds_tested": 25, "combined_p": None, "median_p": 0.2}
    assert significant_seeds(values) == "7/25" and significant_seeds(values, " of ") == "7 of 25 seeds"
    assert significant_seeds({**values, "share_significant": None}) == "n/a"
    # CORR undefined on a seed of some model: the bootstrap has an interval but no observed difference
    boot = {"difference": None, "low": 0.1, "high": 0.4, "confidence": 0.95}
    (row,) = _significance_rows({"pearson": {**values, "bootstrap": boot}})
    assert "n/a [+0.100, +0.400]" in row
