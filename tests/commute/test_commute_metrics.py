"""The CoMMuTE metrics on hand-made perplexity tables: every expected value is worked out by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_tasks.commute.metrics import (
    Pair,
    consistency_rates,
    failure_iou,
    ic_pair,
    joint_rate,
    mean_rate,
    oracle_choices,
    perplexity,
    prefers,
    replacement_rate,
    tc_pair,
)

# Perplexity tables of three tuples, P[(image, target)]; tuple 3 has ties.
TABLES = [
    {("a", "a"): 2.0, ("a", "inc_a"): 3.0, ("b", "b"): 4.0, ("b", "inc_b"): 5.0, ("b", "a"): 2.5, ("a", "b"): 3.5},
    {("a", "a"): 6.0, ("a", "inc_a"): 3.0, ("b", "b"): 4.0, ("b", "inc_b"): 5.0, ("b", "a"): 5.0, ("a", "b"): 3.0},
    {("a", "a"): 2.0, ("a", "inc_a"): 2.0, ("b", "b"): 4.0, ("b", "inc_b"): 9.0, ("b", "a"): 2.0, ("a", "b"): 4.0},
]


def tc(table, ties):
    return tc_pair(table["a", "a"], table["a", "inc_a"], table["b", "b"], table["b", "inc_b"], ties)


def ic(table, ties):
    return ic_pair(table["a", "a"], table["b", "a"], table["b", "b"], table["a", "b"], ties)


def test_perplexity_is_exp_of_the_mean_negative_log_probability():
    assert perplexity([-1.0, -3.0]) == pytest.approx(math.exp(2.0))
    assert perplexity([0.0]) == 1.0
    assert perplexity([-1000.0]) == math.inf  # beyond float range, not an exception
    with pytest.raises(ValueError):
        perplexity([])


def test_prefers_lower_perplexity_and_ties_both_ways():
    assert prefers(2.0, 3.0, "wrong") == 1 and prefers(3.0, 2.0, "right") == 0
    assert prefers(2.0, 2.0, "wrong") == 0 and prefers(2.0, 2.0, "right") == 1
    assert prefers(2.0, 2.0 * (1 + 1e-7), "wrong") == 0  # batching noise is a tie
    assert prefers(2.0, 2.001, "wrong") == 1
    with pytest.raises(ValueError):
        prefers(1.0, 2.0, "maybe")


def test_tc_and_gtc_by_hand():
    # tuple 1: 2<3, 4<5 -> (1, 1); tuple 2: 6>3, 4<5 -> (0, 1); tuple 3: 2=2 tie, 4<9 -> (tie, 1)
    wrong = [tc(t, "wrong") for t in TABLES]
    right = [tc(t, "right") for t in TABLES]
    assert wrong == [Pair(1, 1), Pair(0, 1), Pair(0, 1)] and right == [Pair(1, 1), Pair(0, 1), Pair(1, 1)]
    assert mean_rate(wrong) == pytest.approx(4 / 6) and mean_rate(right) == pytest.approx(5 / 6)
    assert joint_rate(wrong) == pytest.approx(1 / 3) and joint_rate(right) == pytest.approx(2 / 3)


def test_ic_and_gic_by_hand():
    # tuple 1: P(a,a)=2 < P(b,a)=2.5, P(b,b)=4 > P(a,b)=3.5 -> (1, 0)
    # tuple 2: 6 > 5, 4 > 3 -> (0, 0); tuple 3: 2 = 2 tie, 4 = 4 tie
    wrong = [ic(t, "wrong") for t in TABLES]
    right = [ic(t, "right") for t in TABLES]
    assert wrong == [Pair(1, 0), Pair(0, 0), Pair(0, 0)] and right == [Pair(1, 0), Pair(0, 0), Pair(1, 1)]
    assert mean_rate(wrong) == pytest.approx(1 / 6) and mean_rate(right) == pytest.approx(3 / 6)
    assert joint_rate(wrong) == 0 and joint_rate(right) == pytest.approx(1 / 3)


def test_duplicate_tuples_weigh_twice_and_empty_input_is_undefined():
    pairs = [Pair(1, 0), Pair(1, 0), Pair(1, 1)]
    assert mean_rate(pairs) == pytest.approx(4 / 6) and joint_rate(pairs) == pytest.approx(1 / 3)
    assert math.isnan(mean_rate([])) and math.isnan(joint_rate([]))
    assert all(math.isnan(v) for v in consistency_rates([], []).values())
    assert math.isnan(replacement_rate([]))


def test_consistency_rates_by_hand():
    image = [Pair(1, 0), Pair(1, 1), Pair(0, 0)]
    baseline = [Pair(0, 1), Pair(1, 0), Pair(0, 1)]
    # directions: (1 vs 0) IP, (0 vs 1) IN, (1 vs 1) CP, (1 vs 0) IP, (0 vs 0) CN, (0 vs 1) IN
    rates = consistency_rates(image, baseline)
    assert rates == {
        "ipr": pytest.approx(2 / 6),
        "inr": pytest.approx(2 / 6),
        "cpr": pytest.approx(1 / 6),
        "cnr": pytest.approx(1 / 6),
    }
    assert rates["cpr"] + rates["ipr"] == pytest.approx(mean_rate(image))  # = TC with the true images
    with pytest.raises(ValueError):
        consistency_rates(image, baseline[:2])


perplexities = st.floats(min_value=1.0, max_value=1000.0, allow_nan=False)


@given(
    st.lists(
        st.tuples(perplexities, perplexities, perplexities, perplexities, perplexities, perplexities), max_size=30
    ),
    st.sampled_from(["wrong", "right"]),
)
def test_consistency_identities_hold_for_any_scores(tuples, ties):
    """IPR + CNR = INR + CPR = 0.5 whenever the mixed-image baseline has no ties (swap pairs)."""
    image, baseline = [], []
    for p_aa, p_ab, p_bb, p_ba, mix_a, mix_b in tuples:
        if math.isclose(mix_a, mix_b, rel_tol=1e-4):
            continue  # the identities assume no baseline tie
        # exact swaps: the incorrect translation of each line is the other line's correct one
        image.append(tc_pair(p_aa, p_ab, p_bb, p_ba, ties))
        baseline.append(tc_pair(mix_a, mix_b, mix_b, mix_a, ties))
    if not image:
        return
    rates = consistency_rates(image, baseline)
    assert rates["ipr"] + rates["cnr"] == pytest.approx(0.5)
    assert rates["inr"] + rates["cpr"] == pytest.approx(0.5)
    assert sum(rates.values()) == pytest.approx(1.0)


def test_oracle_finds_the_gic_maximising_and_minimising_pairs_by_hand():
    # candidates a0 (original), a1; b0 (original), b1
    p_aa, p_ab = [3.0, 1.0], [2.0, 6.0]  # P(s, a_i, t^a), P(s, a_i, t^b)
    p_ba, p_bb = [2.0, 5.0], [4.0, 1.0]  # P(s, b_j, t^a), P(s, b_j, t^b)
    best, worst = oracle_choices(p_aa, p_ba, p_bb, p_ab, "wrong")
    # (a0,b0): 3<2 no, 4<2 no -> GIC 0, D = (3-2)+(4-2) = 3: the only GIC-0 pair, so the minimum.
    # GIC 1: (a0,b1) 3<5, 1<2, D = (3-5)+(1-2) = -3; (a1,b0) 1<2, 4<6, D = -3; (a1,b1) 1<5, 1<6, D = -9.
    assert (best.a, best.b, best.ic) == (1, 1, Pair(1, 1))
    assert best.margin == pytest.approx(-9.0)
    assert (worst.a, worst.b, worst.ic, worst.margin) == (0, 0, Pair(0, 0), pytest.approx(3.0))
    assert replacement_rate([best, worst]) == pytest.approx(2 / 4)


def test_oracle_tie_break_by_eq10_then_by_order():
    # every pair has GIC 1; D = (p_aa[i] - p_ba[j]) + (p_bb[j] - p_ab[i])
    p_aa, p_ab = [1.0, 1.0], [5.0, 9.0]
    p_ba, p_bb = [6.0, 6.0], [2.0, 2.0]
    best, worst = oracle_choices(p_aa, p_ba, p_bb, p_ab, "wrong")
    # D: (a0,b*) = -5 + -3 = -8; (a1,b*) = -5 + -7 = -12 -> max GIC picks smallest D: a1, then first b: b0
    assert (best.a, best.b, best.margin) == (1, 0, pytest.approx(-12.0))
    # min GIC (all 1) picks the largest D: a0, first b
    assert (worst.a, worst.b, worst.margin) == (0, 0, pytest.approx(-8.0))
    assert replacement_rate([best]) == pytest.approx(1 / 2) and replacement_rate([worst]) == 0.0


def test_oracle_with_single_candidates_keeps_the_originals_and_rejects_empty_sides():
    best, worst = oracle_choices([2.0], [3.0], [2.0], [3.0], "wrong")
    assert (best.a, best.b, worst.a, worst.b) == (0, 0, 0, 0) and best.ic == Pair(1, 1)
    with pytest.raises(ValueError):
        oracle_choices([], [1.0], [1.0], [], "wrong")


def test_failure_iou_by_hand():
    first = {("1", "ab"), ("2", "ab"), ("3", "ba")}
    second = {("2", "ab"), ("3", "ba"), ("4", "ab"), ("5", "ba")}
    assert failure_iou(first, second) == pytest.approx(2 / 5)
    assert failure_iou(first, first) == 1.0 and failure_iou(first, set()) == 0.0
    assert math.isnan(failure_iou(set(), set()))
