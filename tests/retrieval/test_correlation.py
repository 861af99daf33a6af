"""``correlation.per_seed`` on seeds where every model is missing: NaN there, no warning, the other seeds unchanged."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from harness_tasks.retrieval.analysis.correlation import average_ranks, per_seed

NAN = math.nan


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        # (1, 2, 3) against (1, 2, 4): deviations (-1, 0, 1) and (-4/3, -1/3, 5/3): 3 / sqrt(2 * 14/3)
        ("pearson", 3 / math.sqrt(2 * 14 / 3)),
        ("spearman", 1.0),  # the same order
    ],
)
def test_a_seed_missing_for_every_model_is_undefined_without_a_warning(method, expected):
    x = np.array([[1.0, NAN, 1.0], [2.0, NAN, 2.0], [3.0, NAN, NAN]])
    y = np.array([[1.0, NAN, 3.0], [2.0, NAN, 2.0], [4.0, NAN, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Mean of empty slice" was a RuntimeWarning on the middle seed
        r = per_seed(x, y, method)
    assert r[0] == pytest.approx(expected)
    assert np.isnan(r[1]) and np.isnan(r[2])  # every model missing; one model missing


def test_a_batch_of_resamples_keeps_its_leading_axis_quietly():
    x = np.array([[[1.0, NAN], [2.0, NAN], [3.0, NAN]], [[3.0, NAN], [2.0, NAN], [1.0, NAN]]])
    y = np.array([[[1.0, NAN], [2.0, NAN], [3.0, NAN]]] * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = per_seed(x, y, "pearson")
    assert r.shape == (2, 2) and r[:, 0] == pytest.approx([1.0, -1.0]) and np.isnan(r[:, 1]).all()


@given(
    arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 7), st.integers(1, 4)), elements=st.integers(0, 3))
)
def test_average_ranks_are_scipys(values):
    """The ranks along the model axis, ties (many: values 0-3) sharing their mean rank, are rankdata's exactly."""
    from scipy.stats import rankdata

    assert np.array_equal(average_ranks(values), rankdata(values, axis=-2))


def test_average_ranks_by_hand():
    column = np.array([[3.0], [1.0], [3.0], [2.0]])  # ranks 3.5, 1, 3.5, 2
    assert average_ranks(column).ravel().tolist() == [3.5, 1.0, 3.5, 2.0]
