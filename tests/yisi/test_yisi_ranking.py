"""ROC AUC, mean F-beta over cut-offs, Pearson and Spearman: hand-computed cases and properties."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score

from harness_tasks.yisi.ranking import mean_f_beta, pearson, roc_auc, spearman


def test_roc_auc_by_hand():
    # good {0.9, 0.7} vs bad {0.8, 0.6}: 3 of the 4 (good, bad) pairs are ordered right
    assert roc_auc([0.9, 0.8, 0.7, 0.6], [1, 0, 1, 0]) == pytest.approx(0.75)
    assert roc_auc([0.5, 0.5], [1, 0]) == pytest.approx(0.5)  # a tie counts one half
    assert roc_auc([0.5, 0.5, 0.9], [1, 0, 0]) == pytest.approx(0.25)  # duplicates: (tie 1/2 + lose 0) / 2


def test_roc_auc_undefined_without_both_classes():
    assert roc_auc([], []) is None
    assert roc_auc([0.1, 0.2], [1, 1]) is None and roc_auc([0.1, 0.2], [0, 0]) is None


def test_mean_f_by_hand():
    # ranked labels 1, 0, 1 with 2 good pairs: F1 at k=1,2,3 is 2/3, 1/2, 4/5
    assert mean_f_beta([3, 2, 1], [1, 0, 1], 1.0) == pytest.approx((2 / 3 + 1 / 2 + 4 / 5) / 3)
    # F2(k) = 5 TP / (4 * 2 + k): 5/9, 5/10, 10/11
    assert mean_f_beta([3, 2, 1], [1, 0, 1], 2.0) == pytest.approx((5 / 9 + 5 / 10 + 10 / 11) / 3)


def test_mean_f_with_a_tie_is_the_expectation_over_tie_orders():
    # orders (good, bad): F1 1, 2/3 -> mean 5/6; (bad, good): 0, 2/3 -> 1/3; expected 7/12
    assert mean_f_beta([1, 1], [1, 0], 1.0) == pytest.approx(7 / 12)
    # a tie is never better than ranking the good pair first
    assert mean_f_beta([1, 1], [1, 0], 1.0) < mean_f_beta([2, 1], [1, 0], 1.0)


def test_mean_f_undefined_without_good_pairs_or_input():
    assert mean_f_beta([], [], 1.0) is None
    assert mean_f_beta([0.3, 0.4], [0, 0], 1.0) is None


def _brute_mean_f(scores, labels, beta):
    """Average of the mean F over every order of the tied runs (independent of the implementation)."""
    groups = {}
    for s, y in zip(scores, labels):
        groups.setdefault(s, []).append(y)
    runs = [groups[s] for s in sorted(groups, reverse=True)]
    total_good, results = sum(labels), []
    for orders in itertools.product(*(set(itertools.permutations(run)) for run in runs)):
        ranked = [y for run in orders for y in run]
        tp, values = 0, []
        for k, y in enumerate(ranked, start=1):
            tp += y
            precision, recall = tp / k, tp / total_good
            values.append(0.0 if tp == 0 else (1 + beta**2) * precision * recall / (beta**2 * precision + recall))
        results.append(sum(values) / len(values))
    return sum(results) / len(results)


pairs = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1)), min_size=1, max_size=7)


@settings(max_examples=150, deadline=None)
@given(pairs, st.sampled_from([0.5, 1.0, 2.0]))
def test_mean_f_equals_brute_force_over_tie_orders(rows, beta):
    scores, labels = [float(s) for s, _ in rows], [y for _, y in rows]
    result = mean_f_beta(scores, labels, beta)
    if sum(labels) == 0:
        assert result is None
    else:
        assert result == pytest.approx(_brute_mean_f(scores, labels, beta))


@settings(max_examples=150, deadline=None)
@given(pairs)
def test_roc_auc_equals_pair_counting_and_sklearn(rows):
    scores, labels = [float(s) for s, _ in rows], [y for _, y in rows]
    result = roc_auc(scores, labels)
    if len(set(labels)) < 2:
        assert result is None
        return
    good = [s for s, y in zip(scores, labels) if y == 1]
    bad = [s for s, y in zip(scores, labels) if y == 0]
    counted = sum(1.0 if g > b else 0.5 if g == b else 0.0 for g in good for b in bad) / (len(good) * len(bad))
    assert result == pytest.approx(counted) and result == pytest.approx(roc_auc_score(labels, scores))


def test_pearson_and_spearman_by_hand():
    # dx = -1, 0, 1; dy = -7/3, -1/3, 8/3: r = 5 / sqrt(2 * 114/9)
    assert pearson([1, 2, 3], [2, 4, 7]) == pytest.approx(5 / math.sqrt(2 * 114 / 9))
    assert spearman([1, 2, 3], [2, 4, 7]) == pytest.approx(1.0)
    # ties get average ranks: x ranks 1, 2.5, 2.5, 4 against 1, 2, 3, 4 -> 4.5 / sqrt(4.5 * 5)
    assert spearman([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(4.5 / math.sqrt(4.5 * 5))


def test_correlations_undefined_for_constant_or_tiny_input():
    assert pearson([1, 1, 1], [1, 2, 3]) is None and spearman([1, 2, 3], [5, 5, 5]) is None
    assert pearson([1], [2]) is None and spearman([], []) is None
    assert pearson(np.array([1.0, 2.0]), np.array([2.0, 1.0])) == pytest.approx(-1.0)
