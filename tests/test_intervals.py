"""Intervals over items, metric metadata, warnings and the run table, on hand-computed cases."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from harness.cli.summary import print_summary
from harness.errors import HarnessError
from harness.results.bootstrap import SUM_BLOCK_CELLS, Units, interval, unit_sums
from harness.results.intervals import item_intervals
from harness.results.samples import sample_values, to_units
from harness.results.statistic import Statistic
from harness.run.runner import choose_seeds, evaluate
from harness.run.task import Metric, TaskOutput
from harness_bitext.mining import BitextMining
from harness_tasks.commute.tasks import CommuteConsistency, CommuteGIC, CommuteGTC, CommuteIC, CommuteOracle, CommuteTC
from harness_tasks.retrieval.metrics import rank_moments
from harness_tasks.retrieval.tasks import BackRetrieval, Corr, Xlr
from harness_tasks.yisi.tasks import BertSumFilter, BertSumSts, Yisi2Filter, Yisi2Sts


def direct_quantiles(statistic, units: int, resamples: int, seed: int) -> np.ndarray:
    """The percentile interval written out: draw all index rows at once, apply, take the 2.5/97.5 % quantiles."""
    index = np.random.default_rng(seed).integers(0, units, size=(resamples, units))
    values = np.array([statistic(row) for row in index])
    values = values[np.isfinite(values)]
    return np.quantile(values, [0.025, 0.975])


def test_interval_of_a_mean_on_four_items_matches_numpy():
    hits = np.array([1.0, 0.0, 1.0, 1.0])
    found = interval(Units("mean", hits, np.ones(4)), resamples=7, seed=3)
    assert found.value == 0.75 and found.units == 4 and found.defined == 7
    assert (found.low, found.high) == pytest.approx(tuple(direct_quantiles(lambda row: hits[row].mean(), 4, 7, 3)))
    assert found.low <= found.value <= found.high


def test_all_equal_items_give_a_zero_width_interval():
    found = interval(Units("mean", np.ones(5), np.ones(5)), resamples=50)
    assert (found.value, found.low, found.high) == (1.0, 1.0, 1.0)


def test_interval_moves_all_samples_of_an_item_together():
    # item a: hits 1 (seed 0) and 1 (seed 1); b: 0, 1; c: 0 (seed 0 only)
    samples = [
        {"seed": 0, "id": "a", "hit": 1.0},
        {"seed": 1, "id": "a", "hit": 1.0},
        {"seed": 0, "id": "b", "hit": 0.0},
        {"seed": 1, "id": "b", "hit": 1.0},
        {"seed": 0, "id": "c", "hit": 0.0},
    ]
    units = to_units(sample_values(enumerate(samples), ("hit",), "sample"), Statistic("mean", ("hit",)))
    assert units.values.tolist() == [2.0, 1.0, 0.0] and units.reference.tolist() == [2.0, 2.0, 1.0]
    sums, counts = np.array([2.0, 1.0, 0.0]), np.array([2.0, 2.0, 1.0])
    found = interval(units, resamples=9, seed=1)
    assert found.value == pytest.approx(3 / 5)
    assert (found.low, found.high) == pytest.approx(
        tuple(direct_quantiles(lambda r: sums[r].sum() / counts[r].sum(), 3, 9, 1))
    )


@pytest.mark.parametrize(
    ("kind", "direct"),
    [
        ("pearson", lambda s, g: stats.pearsonr(s, g).statistic if np.ptp(s) and np.ptp(g) else np.nan),
        ("spearman", lambda s, g: stats.spearmanr(s, g).statistic if np.ptp(s) and np.ptp(g) else np.nan),
        (
            "auc",
            lambda s, y: (
                stats.mannwhitneyu(s[y == 1], s[y == 0]).statistic / ((y == 1).sum() * (y == 0).sum())
                if 0 < y.sum() < len(y)
                else np.nan
            ),
        ),
    ],
)
def test_correlation_and_auc_intervals_match_scipy_resample_by_resample(kind, direct):
    score = np.array([0.1, 0.4, 0.35, 0.8, 0.7, 0.2])
    reference = np.array([0.0, 0.0, 1.0, 1.0, 1.0, 0.0]) if kind == "auc" else np.array([0.0, 1.0, 0.5, 2.0, 1.5, 0.3])
    found = interval(Units(kind, score, reference), resamples=40, seed=2)
    assert found.value == pytest.approx(direct(score, reference))
    expected = direct_quantiles(lambda row: direct(score[row], reference[row]), 6, 40, 2)
    assert (found.low, found.high) == pytest.approx(tuple(expected))


def test_rank_moments_give_spearman_of_the_block_and_of_resampled_rows():
    rng = np.random.default_rng(0)
    text, image = rng.normal(size=(4, 3)), rng.normal(size=(4, 3))
    image[0, 0] = image[1, 1]  # a tie
    moments = rank_moments(text, image)
    assert moments[:, 0].tolist() == [3.0] * 4
    units = Units("moments", moments[:, None, :], np.zeros(4))
    assert units.statistic(np.arange(4)[None, :])[0] == pytest.approx(
        stats.spearmanr(text.ravel(), image.ravel()).statistic
    )
    # a resample keeps the block's ranks: rows 0, 0, 2, 3 -> Pearson of those rows' ranks
    x = stats.rankdata(text, axis=None).reshape(4, 3)
    y = stats.rankdata(image, axis=None).reshape(4, 3)
    rows = np.array([0, 0, 2, 3])
    assert units.statistic(rows[None, :])[0] == pytest.approx(
        stats.pearsonr(x[rows].ravel(), y[rows].ravel()).statistic
    )


def test_moments_average_the_per_seed_correlations():
    rng = np.random.default_rng(1)
    blocks = [(rng.normal(size=(3, 3)), rng.normal(size=(3, 3))) for _ in range(2)]
    samples = [
        {"seed": seed, "id": f"i{seed * 2 + row}", **dict(zip(("n", "sx", "sy", "sxx", "syy", "sxy"), m))}
        for seed, (t, i) in enumerate(blocks)
        for row, m in enumerate(rank_moments(t, i))
    ]
    statistic = Statistic.parse("moments:n,sx,sy,sxx,syy,sxy")
    units = to_units(sample_values(enumerate(samples), statistic.fields, "sample"), statistic)
    expected = np.mean([stats.spearmanr(t.ravel(), i.ravel()).statistic for t, i in blocks])
    assert units.statistic(np.arange(len(units))[None, :])[0] == pytest.approx(expected)


@pytest.mark.parametrize("shape", [(7, 2, 6), (50, 25, 6), (40, 3000), (5, 1)])
def test_unit_sums_are_numpys_sums_of_the_gathered_units_bit_for_bit(shape):
    rng = np.random.default_rng(len(shape))
    values = rng.normal(size=shape) * 10.0 ** rng.integers(-8, 8, size=shape)  # magnitudes that round differently
    values[0] = -0.0
    index = rng.integers(0, shape[0], size=(300, shape[0]))
    index[0] = 0  # a resample of the one all -0.0 unit: NumPy's sums of it are 0.0
    expected = values[index].sum(axis=1)
    found = unit_sums(values, index)
    assert found.shape == expected.shape and found.view(np.int64).tolist() == expected.view(np.int64).tolist()
    assert shape[1] < SUM_BLOCK_CELLS or len(index) > SUM_BLOCK_CELLS // shape[1]  # several blocks for (40, 3000)


def test_unit_sums_of_other_arrays_are_numpys_sums():
    index = np.array([[0, 1, 1], [2, 2, 0]])
    assert unit_sums(np.array([1.5, 2.0, 4.0]), index).tolist() == [5.5, 9.5]  # 1-d: NumPy's own (pairwise) sum
    assert unit_sums(np.arange(6).reshape(3, 2), index).tolist() == [[4, 7], [8, 11]]  # integers


def test_a_moments_interval_equals_the_interval_over_materialised_sums():
    rng = np.random.default_rng(5)
    values = rng.normal(size=(300, 25, 6)) * rng.integers(1, 1000, size=(300, 1, 1))
    units = Units("moments", values, np.zeros(300))
    assert units.width == 1  # summed in place: a resample row holds only its indices
    found = interval(units, 200, 3)
    index = np.random.default_rng(3).integers(0, 300, size=(200, 300))
    from harness.results.bootstrap import _moments

    resampled = _moments(values[index].sum(axis=1))
    tail = (1 - 0.95) / 2  # as interval() writes it (not exactly 0.025)
    low, high = np.quantile(resampled[np.isfinite(resampled)], [tail, 1 - tail])
    assert (found.low, found.high) == (low, high)
    assert found.value == _moments(values.sum(axis=0)[None])[0]


def test_item_intervals_from_samples_skip_undefined_and_report_a_mismatch():
    samples = [{"id": i, "hit": h, "x": 1.0} for i, h in enumerate([1.0, 0.0, 1.0, 1.0])]
    info = {
        "a": {"statistic": "mean:hit"},
        "b": {"statistic": "mean:hit"},
        "c": {"statistic": None},
        "d": {"statistic": "mean:x"},
    }
    found, warnings = item_intervals(
        "t", samples, info, {"a": 0.75, "b": 0.5, "c": 1.0, "d": None}, resamples=7, seed=3
    )
    assert list(found) == ["a"] and found["a"]["units"] == 4 and found["a"]["over"] == "items"
    assert (found["a"]["low"], found["a"]["high"]) == pytest.approx(
        tuple(direct_quantiles(lambda r: np.array([1.0, 0.0, 1.0, 1.0])[r].mean(), 4, 7, 3))
    )
    assert warnings == ["t: no interval for b: mean:hit of the samples is 0.750000, not the recorded 0.500000"]
    assert item_intervals("t", samples, info, {"a": 0.75}, resamples=0) == ({}, [])
    with pytest.raises(HarnessError, match=r"task 't': a: sample 1: no field 'hit'"):
        item_intervals("t", [{"id": 0, "hit": 1.0}, {"id": 1}], info, {"a": 1.0})


def info_of(task, **extra):
    return task.metric_info(TaskOutput([{}], extra=extra))


def test_retrieval_display_names_carry_k_and_chance_is_k_over_the_candidates_used():
    xlr = info_of(Xlr("xlr", {"k": 5}), n_used=20)
    assert [v["display"] for v in xlr.values()] == ["R@5", "MRR", "median rank", "N5 skew", "anti-hubs"]
    assert xlr["recall@k"]["chance"] == 0.25 and xlr["recall@k"]["statistic"] == "mean:hit"
    assert xlr["mrr"]["chance"] == pytest.approx(sum(1 / r for r in range(1, 21)) / 20)
    assert xlr["median_rank"] == {**xlr["median_rank"], "chance": 10.5, "higher_is_better": False, "statistic": None}
    assert info_of(Xlr("xlr", {"k": 10}), n_used=4)["recall@k"]["chance"] == 1.0  # capped: k >= n
    bkr = info_of(BackRetrieval("backretrieval"), n_used=50)["recall@k"]
    assert (bkr["display"], bkr["chance"]) == ("R@10", 0.2)
    corr = info_of(Corr("corr"), n_used=50)["spearman"]
    assert (corr["chance"], corr["statistic"]) == (0.0, "moments:pairs,sx,sy,sxx,syy,sxy")


@pytest.mark.parametrize(
    ("task", "name", "display", "chance", "statistic"),
    [
        (CommuteTC("commute_tc"), "tc", "TC", 0.5, "mean:tc_ab,tc_ba"),
        (CommuteIC("commute_ic"), "ic", "IC", 0.5, "mean:ic_ab,ic_ba"),
        (CommuteGTC("commute_gtc"), "gtc", "GTC", 0.25, "mean:gtc"),
        (CommuteGIC("commute_gic"), "gic", "GIC", 0.25, "mean:gic"),
        (CommuteConsistency("commute_consistency"), "ipr", "IPR", None, "mean:ipr"),
        (CommuteOracle("commute_oracle"), "max_gic", "Max GIC", None, "mean:max_gic"),
        (Yisi2Sts("yisi2_sts"), "pearson", "Pearson r", 0.0, "pearson:yisi2,gold"),
        (BertSumSts("bert_sum_sts"), "pearson", "Pearson r", 0.0, "pearson:bert_sum,gold"),
        (Yisi2Filter("yisi2_filter"), "roc_auc", "ROC AUC", 0.5, "auc:yisi2,label"),
        (BertSumFilter("bert_sum_filter"), "roc_auc", "ROC AUC", 0.5, "auc:bert_sum,label"),
        (BitextMining("bitext_mining"), "accuracy", "accuracy", 0.01, "mean:hit"),
    ],
)
def test_main_metric_metadata_of_every_family(task, name, display, chance, statistic):
    info = info_of(task, items=100)
    assert task.main_metric == name and (info[name]["display"], info[name]["chance"], info[name]["statistic"]) == (
        display,
        chance,
        statistic,
    )
    assert info[name]["higher_is_better"] is True


def test_directions_of_non_scores_and_errors():
    assert info_of(CommuteTC("commute_tc"))["ties"]["higher_is_better"] is None
    assert info_of(BitextMining("bitext_mining"), items=3)["xsim"]["higher_is_better"] is False
    assert info_of(CommuteConsistency("commute_consistency"))["inr"]["higher_is_better"] is False


def test_a_malformed_declaration_fails_at_once():
    with pytest.raises(HarnessError, match="takes two fields"):
        Metric("m", statistic="auc:score")
    with pytest.raises(HarnessError, match=r"metric 'm': cannot fill 'R@\{kk\}'"):
        Metric("m", "R@{kk}").info({"k": 1})


def test_xlr_keeps_one_seed_only_when_every_seed_takes_every_item():
    assert choose_seeds(Xlr("xlr", {"n": 1000}), None, None, 367) == [0]
    assert choose_seeds(Xlr("xlr", {"n": 367}), 5, None, 367) == [0]
    assert choose_seeds(Xlr("xlr", {"n": 366}), None, None, 367) == list(range(25))
    assert choose_seeds(Xlr("xlr", {"n": 1000}), None, 7, 367) == [7]
    assert choose_seeds(BackRetrieval("backretrieval", {"n": 1000}), None, None, 367) == list(range(25))


def test_commute_warns_when_every_comparison_is_a_tie():
    task = CommuteTC("commute_tc")
    assert task.check(TaskOutput([{"tc": 0.0, "ties": 1.0}])) == [
        "every comparison is a tie: the values are fixed by ties=wrong (by construction), not by the model"
    ]
    assert task.check(TaskOutput([{"tc": 0.5, "ties": 0.5}])) == []
    one_way = [{"tc_ab": 1, "tc_ba": 0}, {"tc_ab": 0, "tc_ba": 1}]
    assert task.check(TaskOutput([{"tc": 0.5, "ties": 0.0}], one_way))[0].startswith(
        "every tuple is right under TC in exactly one direction: TC = 0.5 and GTC = 0, the values a scorer that "
        "ignores the image gets by construction"
    )
    # issue 36.6: a scorer that sees the image (gemma-270m+caption) is not said to ignore it
    task.undefined(SimpleNamespace(adapter=SimpleNamespace(uses_images=True)))
    (seeing,) = task.check(TaskOutput([{"tc": 0.5, "ties": 0.0}], one_way))
    assert "as for a scorer that ignores the image: the images never changed which translation" in seeing
    assert "gets by construction" not in seeing
    assert task.check(TaskOutput([{"tc": 0.75, "ties": 0.0}], [*one_way, {"tc_ab": 1, "tc_ba": 1}])) == []
    assert (
        CommuteIC("commute_ic").check(TaskOutput([{"ic": None, "ties": 1.0}], undefined={"ic": "image-blind"})) == []
    )  # undefined: the reason says why


class Letters:
    """A text encoder for the built-in benchmark: letter counts."""

    name = "letters"

    def encode(self, texts):
        out = np.zeros((len(texts), 26), dtype=np.float32)
        for row, text in enumerate(texts):
            for char in text.lower():
                if "a" <= char <= "z":
                    out[row, ord(char) - 97] += 1
        return out


@pytest.fixture(scope="module")
def xlr_runs():
    """xlr on 24 generated items: n >= items (one seed), k >= n, and --limit."""
    common = {"output": None, "use_cache": False, "resamples": 200}
    full = evaluate("xlr", Letters(), task_args="size=24", **common)[0]
    small = evaluate("xlr", Letters(), task_args="size=24,n=8,k=10", seeds=3, **common)[0]
    limited = evaluate("xlr", Letters(), task_args="size=24", limit=12, **common)[0]
    return full, small, limited


def test_xlr_with_n_at_least_the_items_runs_once_and_says_so(xlr_runs):
    full, small, _ = xlr_runs
    assert full.seeds == [0] and full.per_seed["recall@k"] == [full.metrics["recall@k"]] and full.task_version == 2
    assert full.warnings == [
        "xlr: every seed would evaluate the same 24 items, so it ran once (seed 0); the spread over "
        "seeds is undefined; the interval over items is shown instead."
    ]
    interval_ = full.intervals["recall@k"]
    assert interval_["low"] <= full.metrics["recall@k"] <= interval_["high"] and interval_["units"] == 24
    assert interval_["resamples"] == 200 and full.metric_info["recall@k"]["chance"] == pytest.approx(10 / 24)
    assert (
        small.seeds == [0, 1, 2]
        and "xlr: k = 10 >= n = 8 candidates: R@10 is 1 for every model by construction" in small.warnings
    )
    assert small.metrics["recall@k"] == 1.0 and small.metric_info["recall@k"]["chance"] == 1.0


def test_limit_is_in_the_signature_and_warned(xlr_runs):
    full, _, limited = xlr_runs
    assert "|limit:12|" in limited.task_signature and "limit:" not in full.task_signature
    assert limited.dataset["size"] == 12 and limited.intervals["recall@k"]["units"] == 12
    assert (
        limited.warnings[0]
        == "xlr: --limit 12: 12 items evaluated (not comparable with a run on the full data; 'limit:12' is in the signature)"
    )


def test_run_table_shows_display_names_interval_chance_and_each_warning_once(xlr_runs, capsys, tmp_path):
    full, small, _ = xlr_runs
    print_summary([full, full, small], tmp_path)
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0].split("\t") == ["task", "metric", "value", "95% CI (items)", "chance", "n", "seeds", "time"]
    low, high = full.intervals["recall@k"]["low"], full.intervals["recall@k"]["high"]
    assert lines[1].split("\t")[:7] == [
        "xlr",
        "R@10 *",
        f"{full.metrics['recall@k']:.4f}",
        f"[{low:.4f}, {high:.4f}]",
        f"{10 / 24:.4f}",
        "24",
        "1",
    ]
    assert lines[3].split("\t")[1] == "median rank" and lines[3].split("\t")[3] == ""  # no statistic: no interval
    assert err.count("warning: xlr: every seed would evaluate") == 1 and err.count("warning: xlr: k = 10 >= n = 8") == 1


def test_mean_and_std_over_seeds_is_one_definition_for_runner_and_meta():
    import math

    from harness.results.seedstats import mean_and_std
    from harness.run.runner import aggregate
    from harness_tasks.retrieval.analysis.correlation import summarize

    assert mean_and_std([1.0, None, 3.0, float("nan")]) == (2.0, math.sqrt(2))
    assert mean_and_std([5.0]) == (5.0, 0.0) and mean_and_std([None, float("nan")]) == (None, None)
    means, stds, _ = aggregate([{"m": 1.0}, {"m": None}, {"m": 3.0}])
    meta = summarize(np.array([1.0, np.nan, 3.0]))
    assert (means["m"], stds["m"]) == (meta["mean"], meta["std"]) == (2.0, math.sqrt(2)) and meta["seeds_defined"] == 2
