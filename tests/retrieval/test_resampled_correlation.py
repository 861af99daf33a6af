"""``resampled_correlations``: correlations of every bootstrap resample from draw counts, equal to correlating the drawn rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness_tasks.retrieval.analysis.correlation import per_seed, resampled_correlations
from harness_tasks.retrieval.analysis.significance import bootstrap_difference

NAN = math.nan


def test_counts_by_hand_with_ties():
    # 4 models, one seed; resample 0 draws model 0 twice, models 2 and 3 once: rows x = (1, 1, 2, 3), y = (10, 10, 30, 40)
    x = np.array([[1.0], [2.0], [2.0], [3.0]])
    y = np.array([[10.0], [20.0], [30.0], [40.0]])
    counts = np.array([[2, 0, 1, 1], [0, 2, 2, 0], [1, 1, 1, 1]])
    # Spearman of resample 0: both sides rank (1.5, 1.5, 3, 4), rho = 1; resample 1: x constant (all 2): undefined;
    # resample 2 is the original data: 3 / sqrt(10) (average ranks (1, 2.5, 2.5, 4) against (1, 2, 3, 4))
    rho = resampled_correlations(x, [y], counts, "spearman")[0][:, 0]
    assert rho[0] == pytest.approx(1.0) and np.isnan(rho[1]) and rho[2] == pytest.approx(3 / math.sqrt(10))
    # Pearson of resample 0: x centred (-0.75, -0.75, 0.25, 1.25), y centred (-12.5, -12.5, 7.5, 17.5):
    # sum xy = 9.375 + 9.375 + 1.875 + 21.875 = 42.5; sum xx = 2.75; sum yy = 675; r = 42.5 / sqrt(2.75 * 675)
    r = resampled_correlations(x, [y], counts, "pearson")[0][:, 0]
    assert r[0] == pytest.approx(42.5 / math.sqrt(2.75 * 675)) and np.isnan(r[1])


@pytest.mark.parametrize("method", ["pearson", "spearman"])
@pytest.mark.parametrize(("models", "seeds"), [(3, 2), (7, 3), (40, 5)])
def test_equal_to_correlating_the_drawn_rows(method, models, seeds):
    rng = np.random.default_rng(models)
    x = rng.integers(0, 4, (models, seeds)).astype(float)  # many ties, constant resamples
    y, z = rng.random((models, seeds)), rng.integers(0, 3, (models, seeds)).astype(float)
    x[0, 0] = NAN  # a seed undefined whenever model 0 is drawn
    index = rng.integers(0, models, (300, models))
    counts = np.stack([np.bincount(row, minlength=models) for row in index])
    found = resampled_correlations(x, [y, z], counts, method)
    for other, got in zip((y, z), found, strict=True):
        expected = per_seed(x[index], other[index], method)
        assert np.array_equal(np.isnan(expected), np.isnan(got))
        assert got[~np.isnan(got)] == pytest.approx(expected[~np.isnan(expected)], abs=1e-12)


def test_fewer_than_three_models_is_undefined():
    found = resampled_correlations(np.ones((2, 1)), [np.ones((2, 1))], np.array([[1, 1]]))[0]
    assert found.shape == (1, 1) and np.isnan(found).all()


@pytest.mark.parametrize("method", ["pearson", "spearman"])
def test_bootstrap_interval_equals_the_interval_over_drawn_rows(method):
    # the interval the bootstrap reported before it used counts: correlate x[index] directly
    rng = np.random.default_rng(3)
    xlr, bkr, corr = (rng.random((30, 4)) for _ in range(3))
    index = np.random.default_rng(5).integers(0, 30, size=(500, 30))
    difference = per_seed(xlr[index], bkr[index], method) - per_seed(xlr[index], corr[index], method)
    low, high = np.percentile(difference.mean(axis=-1), [2.5, 97.5])
    boot = bootstrap_difference(xlr, bkr, corr, method, resamples=500, seed=5)
    assert (boot["low"], boot["high"]) == pytest.approx((low, high), abs=1e-12)
