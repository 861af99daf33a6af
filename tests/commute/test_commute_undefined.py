"""IC, GIC and the image analyses are undefined for a scorer whose scores cannot depend on the image.

Kashani Motlagh et al. (WMT 2024, section 5.4): with P(s, i^a, t) = P(s, i^b, t) for every tuple, IC and
GIC are neither 0 (ties wrong) nor 1 (ties right) but undefined. TC and GTC stay defined.
"""

from __future__ import annotations

import json

import pytest
from commute.fakes import RedScorer, TextOnlyCharScorer, run_task, solid_images
from commute.mmt_builders import write_commute

from harness.cli import main
from harness.results.records import read_records
from harness.run.runner import evaluate
from harness_tasks.commute.data import CommuteExtendedLoader, CommuteLoader
from harness_tasks.commute.tasks import (
    IMAGE_BLIND,
    CommuteConsistency,
    CommuteGIC,
    CommuteGTC,
    CommuteIC,
    CommuteOracle,
    CommuteTC,
)

LINES = [
    ("s", "x#10", "y#200", "a.png"),
    ("s", "y#200", "x#10", "b.png"),
    ("t", "x#100", "y#150", "c.png"),
    ("t", "y#150", "x#100", "d.png"),
]
REDS = {"a.png": 20, "b.png": 190, "c.png": 160, "d.png": 140}


class BlindRedScorer(RedScorer):
    """RedScorer declaring that its scores cannot depend on the image: the harness must take it at its word."""

    uses_images = False


class DeclaredRedScorer(RedScorer):
    """RedScorer declaring explicitly that the image changes its scores."""

    uses_images = True


@pytest.fixture
def red_data(tmp_path):
    images = solid_images(tmp_path / "images", REDS)
    return (
        CommuteLoader("commute")
        .load(str(write_commute(tmp_path / "data", LINES)), {"lang": "fr"}, images_dir=str(images))
        .data
    )


@pytest.mark.parametrize("ties", ["wrong", "right"])
def test_ic_and_gic_are_undefined_for_a_text_only_scorer_whatever_the_tie_rule(red_data, ties):
    for task, metric in (
        (CommuteIC("commute_ic", {"ties": ties}), "ic"),
        (CommuteGIC("commute_gic", {"ties": ties}), "gic"),
    ):
        out = run_task(task, red_data, BlindRedScorer("r"))
        # before: IC 0.0 with ties=wrong and 1.0 with ties=right, for a model that never looks at the image
        assert out.per_seed == [{metric: None, "ties": 1.0}]
        assert out.undefined == {metric: IMAGE_BLIND}
        assert "uses_images = False" in IMAGE_BLIND and "WMT 2024, section 5.4" in IMAGE_BLIND
        assert [(s["ic_ab"], s["ic_ba"], s["gic"]) for s in out.samples] == [(None, None, None)] * 2


def test_tc_and_gtc_stay_defined_for_a_text_only_scorer(red_data):
    # the blind scorer is asked once per (source, target), under one of the tuple's images; the incorrect lines
    # are the swapped correct ones and no two perplexities tie, so exactly one direction of each tuple is right
    tc = run_task(CommuteTC("commute_tc"), red_data, BlindRedScorer("r"))
    gtc = run_task(CommuteGTC("commute_gtc"), red_data, BlindRedScorer("r"))
    assert tc.per_seed == [{"tc": 0.5, "ties": 0.0}] and tc.undefined == {}
    assert gtc.per_seed == [{"gtc": 0.0, "ties": 0.0}] and gtc.undefined == {}


def test_an_image_dependent_scorer_keeps_ic_and_gic_defined(red_data):
    # see test_ic_and_consistency_with_the_red_scorer_by_hand: IC decisions (1, 1) and (0, 0)
    for scorer in (RedScorer("r"), DeclaredRedScorer("r")):  # no declaration means the image matters
        ic = run_task(CommuteIC("commute_ic"), red_data, scorer)
        gic = run_task(CommuteGIC("commute_gic"), red_data, scorer)
        assert ic.per_seed == [{"ic": 0.5, "ties": 0.25}] and ic.undefined == {}
        assert gic.per_seed == [{"gic": 0.5, "ties": 0.25}] and gic.undefined == {}


def test_consistency_rates_are_undefined_when_the_mixed_image_cannot_change_anything(red_data):
    out = run_task(CommuteConsistency("commute_consistency"), red_data, TextOnlyCharScorer("c"))
    # mean cost per character (ord % 10 / 10): x#10 0.55 > y#200 0.44 and x#100 0.60 > y#150 0.52, so with any
    # image TC decisions are (0, 1) in both tuples: tc = tc_mix = 1/2, and IPR = INR = 0 by construction
    assert out.per_seed == [{"ipr": None, "inr": None, "cpr": None, "cnr": None, "tc": 0.5, "tc_mix": 0.5}]
    assert out.undefined == dict.fromkeys(("ipr", "inr", "cpr", "cnr"), IMAGE_BLIND)
    blind = run_task(CommuteConsistency("commute_consistency"), red_data, BlindRedScorer("r")).per_seed[0]
    assert blind["ipr"] is None and blind["tc"] == blind["tc_mix"]  # the declaration is what counts
    defined = run_task(CommuteConsistency("commute_consistency"), red_data, RedScorer("r"))
    assert defined.undefined == {} and defined.per_seed[0]["ipr"] == 0.5


def test_text_only_ic_needs_no_images(tmp_path):
    data = CommuteLoader("commute").load(str(write_commute(tmp_path, LINES)), {"lang": "fr"}).data
    out = run_task(CommuteIC("commute_ic"), data, TextOnlyCharScorer("c"))
    assert out.per_seed == [{"ic": None, "ties": 1.0}] and out.undefined == {"ic": IMAGE_BLIND}
    rates = run_task(CommuteConsistency("commute_consistency"), data, TextOnlyCharScorer("c")).per_seed[0]
    assert rates["ipr"] is None and rates["tc"] == rates["tc_mix"]


def test_oracle_image_metrics_are_undefined_for_a_text_only_scorer(tmp_path):
    lines = [("s", "x#0", "y#100", "a.png"), ("s", "y#100", "x#0", "b.png")]
    images = solid_images(
        tmp_path / "images", {"a.png": 60, "b.png": 40, "extended/1/a/a1.png": 10, "extended/1/b/b1.png": 95}
    )
    data = (
        CommuteExtendedLoader("commute_extended")
        .load(str(write_commute(tmp_path / "data", lines)), {"lang": "fr"}, images_dir=str(images))
        .data
    )
    out = run_task(CommuteOracle("commute_oracle"), data, BlindRedScorer("r"))
    metrics = out.per_seed[0]
    image_metrics = ("max_ic", "max_gic", "rr_max", "min_ic", "min_gic", "rr_min")
    assert all(metrics[name] is None for name in image_metrics)
    assert out.undefined == dict.fromkeys(image_metrics, IMAGE_BLIND)
    # one perplexity per translation whatever the image, an exact swap and no tie: one direction right, at any choice
    assert (metrics["max_tc"], metrics["max_gtc"], metrics["min_tc"], metrics["min_gtc"]) == (0.5, 0.0, 0.5, 0.0)
    assert out.samples[0]["chosen"]["max"]["ic_ab"] is None


def test_results_line_summary_and_warning_for_a_real_text_only_model(
    mbart_dir, mini_commute, tmp_path, capsys, fresh_cache
):
    data_dir, images = mini_commute
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--tasks",
            "commute_tc,commute_ic,commute_gic",
            "--model",
            str(mbart_dir),
            "--data-dir",
            str(data_dir),
            "--images",
            str(images),
            "--output",
            str(out),
            "--log-samples",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    by_task = {line["task"]: line for line in lines}
    assert by_task["commute_ic"]["metrics"]["ic"] is None and by_task["commute_ic"]["undefined"] == {"ic": IMAGE_BLIND}
    assert by_task["commute_gic"]["metrics"]["gic"] is None and by_task["commute_gic"]["undefined"] == {
        "gic": IMAGE_BLIND
    }
    assert 0.0 <= by_task["commute_tc"]["metrics"]["tc"] <= 1.0 and by_task["commute_tc"]["undefined"] == {}
    assert "|v:2" in by_task["commute_ic"]["signature"] and "|v:1" in by_task["commute_tc"]["signature"]
    assert not any("fixed by ties" in w for w in by_task["commute_ic"]["warnings"])  # null, not a tie-rule value
    main_rows = {
        cells[0]: cells[2]
        for cells in (line.split("\t") for line in captured.out.splitlines())
        if cells[1].endswith("*")
    }
    assert main_rows["commute_ic"] == main_rows["commute_gic"] == "n/a" and main_rows["commute_tc"] != "n/a"
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: n/a")]
    assert warnings == [f"warning: n/a for commute_ic ic, commute_gic gic: {IMAGE_BLIND}"]
    records, problems = read_records(out / "results.jsonl")
    assert problems == [] and records[1].undefined == {"ic": IMAGE_BLIND}
    # the failure IoU of undefined IC decisions is refused with the reason
    assert main(["commute-iou", str(out), str(out), "--task", "commute_ic"]) == 2
    assert "IC decisions are undefined" in capsys.readouterr().err


def test_an_image_dependent_real_model_keeps_ic_defined(vgamt_dir, mini_commute, tmp_path, fresh_cache):
    data_dir, images = mini_commute
    (record,) = evaluate("commute_ic", str(vgamt_dir), data_dir=str(data_dir), images=str(images), output=tmp_path)
    assert record.undefined == {} and 0.0 <= record.metrics["ic"] <= 1.0
