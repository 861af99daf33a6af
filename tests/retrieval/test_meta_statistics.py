"""The statistics of ``harness meta`` and the leaderboard's retrieval section: Table 2's claim that the best model
differs significantly from the others (Wilcoxon signed-rank, Holm), and a bootstrap over models whose interval does
not depend on the order the models come in."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from retrieval.test_retrieval_meta import hand_records

from harness_tasks.retrieval.analysis.aggregations import (
    best_vs_others,
    format_best_vs_others,
    holm,
    pair_table,
    wilcoxon_p,
)
from harness_tasks.retrieval.analysis.meta import aggregate_pairs, format_aggregation, group_models, meta_evaluate


def test_holm_by_hand():
    # sorted 0.01, 0.02, 0.04 (m = 3): 3 x .01 = .03, 2 x .02 = .04, 1 x .04 = .04 (monotone); None stays None
    assert holm([0.04, None, 0.01, 0.02]) == [pytest.approx(0.04), None, pytest.approx(0.03), pytest.approx(0.04)]
    assert holm([0.5, 0.4]) == [pytest.approx(0.8), pytest.approx(0.8)]  # 2 x .4 = .8, then max(.8, .5)
    assert holm([0.9, 0.8]) == [1.0, 1.0]  # capped at 1


def test_best_vs_others_by_hand():
    scores = {"best": {"p": 0.5, "q": 0.5}, "mid": {"p": 0.4, "q": 0.4}, "same": {"p": 0.5, "q": 0.5}}
    per_seed = {
        "best": {"p": [0.5, 0.6, 0.7], "q": [0.4, 0.5, 0.3]},
        # best - mid: 0.1, 0.2, 0.3, 0.4, 0.5 and one undefined seed: 5 positive differences
        "mid": {"p": [0.4, 0.4, 0.4], "q": [0.0, None, -0.2]},
        # best - same: +0.1, -0.1 and four zeros (dropped): W+ = W- = 1.5, the exact two-sided p is 1
        "same": {"p": [0.4, 0.6, 0.7], "q": [0.5, 0.5, 0.3]},
    }
    result = best_vs_others(pair_table(scores), per_seed)
    assert result["best"] == "best"
    same, mid = result["others"]  # by average: same (0.5, after best by name), then mid (0.4)
    # Wilcoxon signed-rank, n = 5, all positive: W- = 0, exact two-sided p = 2 / 2^5
    assert (mid["model"], mid["n"], mid["better"], mid["worse"]) == ("mid", 5, 5, 0)
    assert mid["mean_difference"] == pytest.approx(0.3) and mid["p"] == pytest.approx(2 / 32)
    assert (same["n"], same["better"], same["worse"]) == (6, 1, 1) and same["p"] == pytest.approx(1.0)
    # Holm over the two: 2 x 0.0625 = 0.125, then max(0.125, 1) = 1
    assert mid["p_holm"] == pytest.approx(0.125) and same["p_holm"] == 1.0
    assert not mid["significant"] and not same["significant"]
    lines = format_best_vs_others(result)
    assert lines[3].split() == ["mid", "5", "+0.3000", "5/0", "0.062", "0.125"]


def test_all_zero_differences_leave_p_undefined_and_one_model_is_not_tested():
    scores = {"a": {"p": 0.5}, "b": {"p": 0.5}}
    result = best_vs_others(pair_table(scores), {"a": {"p": [0.5, 0.5]}, "b": {"p": [0.5, 0.5]}})
    assert result["others"][0]["p"] is None and result["others"][0]["p_holm"] is None
    assert "skipped" in best_vs_others(pair_table({"a": {"p": 0.5}}), {"a": {"p": [0.5]}})


def test_the_aggregation_over_pairs_tests_the_best_model():
    records = [r for r in hand_records(("en", "de")) + hand_records(("de", "en")) if r.task == "backretrieval"]
    aggregation = aggregate_pairs(records)
    tested = aggregation["best_vs_others"]
    # BkR per seed (both pairs alike): m3 [5, 4], m4 [4, 5] (average 4.5, m3 first by name), m2 [3, 3], ...
    assert tested["best"] == "m3" and [row["model"] for row in tested["others"]] == ["m4", "m2", "m0", "m1"]
    m4 = tested["others"][0]
    assert (m4["n"], m4["better"], m4["worse"], m4["mean_difference"]) == (4, 2, 2, 0.0)
    assert "best model m3 against each other" in format_aggregation(aggregation)
    untested = aggregate_pairs(records, test=False)  # what a plot of the scores reads: the same, without the test
    assert "best_vs_others" not in untested and untested == {k: v for k, v in aggregation.items() if k in untested}


def test_the_bootstrap_over_models_does_not_depend_on_their_order():
    records = hand_records()
    reference = meta_evaluate(group_models(records), resamples=300, bootstrap_seed=1)["significance"]
    rng = random.Random(0)
    for _ in range(3):
        shuffled = records[:]
        rng.shuffle(shuffled)
        tested = meta_evaluate(group_models(shuffled), resamples=300, bootstrap_seed=1)["significance"]
        for method in ("pearson", "spearman"):
            assert tested[method]["bootstrap"] == reference[method]["bootstrap"]
            assert tested[method]["per_seed"] == reference[method]["per_seed"]
        assert tested["models"] == reference["models"] == ["m0", "m1", "m2", "m3", "m4"]  # by identity


def test_the_leaderboard_section_shows_the_test():
    from harness_tasks.retrieval.plots import _best_section

    records = [r for r in hand_records(("en", "de")) + hand_records(("de", "en")) if r.task == "backretrieval"]
    section = _best_section("ikea test", aggregate_pairs(records)["best_vs_others"])
    assert section.header[2] == "m3 − model" and section.rows[0][:4] == ("m4", "4", "+0.0000", "2/2")
    assert "SIGIR 2021 Table 2" in section.note
    assert "not tested" in _best_section("x", {"skipped": "needs two"}).note


def test_the_spearman_variant_says_it_divides_by_sqrt_1_06_where_it_is_printed():
    from harness_tasks.retrieval.analysis.meta import format_table

    result = meta_evaluate(group_models(hand_records()), resamples=50)
    spearman = result["significance"]["spearman"]["test"]
    assert spearman == (
        "Steiger (1980) Z, two-sided, divided by sqrt(1.06) for Spearman's rho (Fieller, Hartley and Pearson 1957)"
    )
    assert result["significance"]["pearson"]["test"] == "Steiger (1980) Z, two-sided"
    assert f"spearman: {spearman}" in format_table(result)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from([-3.0, -1.0, -0.5, 0.5, 1.0, 2.0, 2.5]), min_size=1, max_size=80),
    st.floats(-0.4, 0.4),
)
def test_wilcoxon_p_is_scipys_on_either_side_of_the_exact_limits(differences, shift):
    """Ties galore, and without ties (a shift makes most |d| distinct): SciPy's p to 1e-12 whether it enumerates
    the sign patterns (ties, up to 13), uses the exact distribution (no ties, up to 50) or the normal one."""
    from scipy.stats import wilcoxon

    for d in (differences, [v + shift * (i + 1) / 1000 for i, v in enumerate(differences)]):
        d = [v for v in d if v != 0]
        if d:
            expected = float(wilcoxon(d, alternative="two-sided").pvalue)
            assert wilcoxon_p(d) == pytest.approx(expected, rel=1e-12)
