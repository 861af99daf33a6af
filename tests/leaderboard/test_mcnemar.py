"""McNemar's exact test of paired 0/1 decisions, and ``harness compare`` with it: two models on one
task, and one model's TC against its IC (``--versus-task``), paired by example."""

from __future__ import annotations

import json
from math import comb

import numpy as np
import pytest
from leaderboard.builders import record, with_samples, write_results

from harness.cli import main
from harness.leaderboard.mcnemar import binomial_two_sided, mcnemar
from harness.results.signature import Signature
from harness.run.task import TaskOutput
from harness_tasks.commute.tasks import CommuteIC, CommuteTC

ARGS = {"lang": "fr", "ties": "wrong", "prefix_removal": False, "temperature": 1.0}
TUPLES = ["t1", "t2", "t3", "t4", "t5"]


def two_sided(b: int, c: int) -> float:
    """The exact McNemar p-value by the binomial formula: 2 P(X <= min(b, c)), X ~ Bin(b + c, 1/2), at most 1."""
    n = b + c
    return min(1.0, 2 * sum(comb(n, i) for i in range(min(b, c) + 1)) / 2**n)


def test_a_2x2_table_by_hand():
    # pairs (A, B): 3 x (1, 1), 5 x (1, 0), 1 x (0, 1), 2 x (0, 0)
    a = np.array([1, 1, 1] + [1] * 5 + [0] + [0, 0])
    b = np.array([1, 1, 1] + [0] * 5 + [1] + [0, 0])
    test = mcnemar(a, b)
    assert (test.both_right, test.a_only, test.b_only, test.both_wrong, test.examples) == (3, 5, 1, 2, 11)
    assert test.p_value == pytest.approx(2 * (comb(6, 0) + comb(6, 1)) / 64) == pytest.approx(0.21875)
    assert test.p_value == pytest.approx(two_sided(5, 1))


@pytest.mark.parametrize(("b", "c"), [(0, 0), (2, 2), (0, 7), (12, 30)])
def test_p_values_follow_the_binomial_formula(b, c):
    a = np.array([1] * b + [0] * c + [1, 0])
    other = np.array([0] * b + [1] * c + [1, 0])
    assert mcnemar(a, other).p_value == pytest.approx(two_sided(b, c))


@pytest.mark.parametrize("n", [*range(0, 60), 61, 200, 999, 5000, 100_000])
def test_the_binomial_test_is_scipys(n):
    """Every k at small n, both tails and the middle at large n: ``scipy.stats.binomtest(k, n, 0.5)`` to 1e-9."""
    from scipy.stats import binomtest

    for k in range(n + 1) if n < 60 else [0, 1, n // 3, n // 2 - 1, n // 2, n // 2 + 1, n - 1, n]:
        expected = binomtest(k, n, 0.5).pvalue if n else 1.0
        assert binomial_two_sided(k, n) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def commute_line(
    folder,
    task_class,
    task: str,
    model: str,
    decisions: dict[str, tuple[int | None, int | None]],
    undefined: str | None = None,
):
    instance = task_class(task)
    kind = instance.kind
    rows = [
        {"id": i, f"{kind}_ab": ab, f"{kind}_ba": ba, f"g{kind}": None if ab is None else ab * ba}
        for i, (ab, ba) in decisions.items()
    ]
    value = None if undefined else float(np.mean([d for pair in decisions.values() for d in pair]))
    item = record(task, model, [value], args=ARGS, size=len(decisions), version=instance.version)
    item.metric_info = instance.metric_info(TaskOutput([{}]))
    if undefined:
        item.undefined = {instance.main_metric: undefined}
    return with_samples(folder, item, rows, f"samples_{task}_{model}.jsonl")


TC_A = {"t1": (1, 1), "t2": (1, 0), "t3": (1, 1), "t4": (0, 1), "t5": (1, 1)}
TC_B = {"t1": (0, 1), "t2": (0, 0), "t3": (1, 1), "t4": (0, 0), "t5": (0, 1)}


def test_two_models_on_commute_tc(tmp_path, capsys):
    """Decisions (A, B) by tuple direction: both right t1ba t3ab t3ba t5ba (4); only A t1ab t2ab t4ba t5ab (4);
    only B none; both wrong t2ba t4ab (2). p = 2 * C(4, 0) / 2^4 = 0.125."""
    write_results(
        tmp_path,
        [
            commute_line(tmp_path, CommuteTC, "commute_tc", "A", TC_A),
            commute_line(tmp_path, CommuteTC, "commute_tc", "B", TC_B),
        ],
    )
    assert (
        main(["compare", "A", "B", "--task", "commute_tc", "--results", str(tmp_path), "--json", "--resamples", "200"])
        == 0
    )
    result = json.loads(capsys.readouterr().out)["mcnemar"]
    assert (result["both_right"], result["a_only"], result["b_only"], result["both_wrong"]) == (4, 4, 0, 2)
    assert result["p_value"] == pytest.approx(2 * comb(4, 0) / 2**4) and "binomial" in result["method"]
    assert main(["compare", "A", "B", "--task", "commute_tc", "--results", str(tmp_path), "--resamples", "200"]) == 0
    text = capsys.readouterr().out
    assert "McNemar over 10 paired decisions: both right 4, only A 4, only B 0, both wrong 2" in text
    assert "McNemar p = 0.125: exact two-sided binomial test (Binomial(b + c, 1/2)) on the 4 discordant" in text


def test_one_models_tc_against_its_ic(tmp_path, capsys):
    """TC (A) against IC by tuple direction: IC = t1 (1, 0), t2 (1, 1), t3 (0, 0), t4 (0, 1), t5 (1, 1).
    Pairs (TC, IC): t1ab (1,1) t1ba (1,0) t2ab (1,1) t2ba (0,1) t3ab (1,0) t3ba (1,0) t4ab (0,0) t4ba (1,1)
    t5ab (1,1) t5ba (1,1): both right 5, only TC 3, only IC 1, both wrong 1; p = 2 (1 + 4) / 16 = 0.625."""
    ic = {"t1": (1, 0), "t2": (1, 1), "t3": (0, 0), "t4": (0, 1), "t5": (1, 1)}
    write_results(
        tmp_path,
        [
            commute_line(tmp_path, CommuteTC, "commute_tc", "A", TC_A),
            commute_line(tmp_path, CommuteIC, "commute_ic", "A", ic),
        ],
    )
    assert (
        main(
            [
                "compare",
                "A",
                "--task",
                "commute_tc",
                "--versus-task",
                "commute_ic",
                "--results",
                str(tmp_path),
                "--json",
                "--resamples",
                "200",
                "--mcnemar",
            ]
        )
        == 0
    )
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert err == ""  # each side's statistic reproduces its own recorded metric (tc, ic)
    assert (result["model_a"], result["model_b"], result["task_b"], result["metric_b"]) == (
        "A commute_tc",
        "A commute_ic",
        "commute_ic",
        "ic",
    )
    assert result["bootstrap"]["difference"] == pytest.approx(0.8 - 0.6) and result["units"] == 5
    test = result["mcnemar"]
    assert (test["both_right"], test["a_only"], test["b_only"], test["both_wrong"]) == (5, 3, 1, 1)
    assert test["p_value"] == pytest.approx(2 * (comb(4, 0) + comb(4, 1)) / 2**4) == pytest.approx(two_sided(3, 1))


def test_undefined_ic_of_a_text_only_scorer_is_a_clear_message(tmp_path, capsys):
    reason = "the scorer ignores the image (uses_images=False): IC is undefined"
    write_results(
        tmp_path,
        [
            commute_line(tmp_path, CommuteTC, "commute_tc", "A", TC_A),
            commute_line(tmp_path, CommuteIC, "commute_ic", "A", dict.fromkeys(TUPLES, (None, None)), reason),
        ],
    )
    assert (
        main(["compare", "A", "--task", "commute_tc", "--versus-task", "commute_ic", "--results", str(tmp_path)]) == 2
    )
    err = capsys.readouterr().err
    assert f"A's ic on commute_ic is undefined: {reason}; there are no decisions to compare" in err
    assert err.count("\n") == 1


def test_mcnemar_is_refused_where_it_does_not_apply(tmp_path, capsys):
    seeded = []
    for model, hits in (("x", [1, 0, 1]), ("y", [0, 0, 1])):
        item = record("xlr", model, [float(np.mean(hits))] * 2)
        item.metric_info = {"recall@k": {"display": "R@10", "higher_is_better": True, "statistic": "mean:hit"}}
        rows = [{"seed": s, "id": f"i{n}", "hit": float(h)} for s in (0, 1) for n, h in enumerate(hits)]
        seeded.append(with_samples(tmp_path, item, rows, f"samples_{model}.jsonl"))
    write_results(tmp_path, seeded)
    assert main(["compare", "x", "y", "--task", "xlr", "--results", str(tmp_path), "--json", "--resamples", "50"]) == 0
    assert json.loads(capsys.readouterr().out)["mcnemar"] is None  # by default: left out, silently
    assert main(["compare", "x", "y", "--task", "xlr", "--results", str(tmp_path), "--mcnemar"]) == 2
    assert "McNemar's test does not apply: each id has several samples (seeds)" in capsys.readouterr().err
    assert main(["compare", "x", "--task", "xlr", "--results", str(tmp_path)]) == 2
    assert "give two models (A B), or one model with --versus-task TASK" in capsys.readouterr().err


def test_versus_needs_the_same_configuration_and_names_a_choice(tmp_path, capsys):
    other = commute_line(tmp_path, CommuteIC, "commute_ic", "A", TC_A)
    other.task_args = {**ARGS, "ties": "right"}
    signature = Signature.build("commute_ic", 2, other.task_args, other.dataset, None)
    other.task_signature, other.signature = str(signature), str(signature.with_model(other.model))
    write_results(tmp_path, [commute_line(tmp_path, CommuteTC, "commute_tc", "A", TC_A), other])
    assert (
        main(["compare", "A", "--task", "commute_tc", "--versus-task", "commute_ic", "--results", str(tmp_path)]) == 2
    )
    assert "A's commute_tc and commute_ic results differ in data, arguments or seeds" in capsys.readouterr().err
