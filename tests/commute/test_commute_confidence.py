"""CoMMuTE with confidence: TC, IC, GTC and GIC carry per-tuple values, so each gets a bootstrap
interval over tuples, a tuple's two directions resampled together (``harness.results.intervals``)."""

from __future__ import annotations

import pytest
from commute.fakes import RedScorer, run_task, solid_images
from commute.mmt_builders import write_commute

from harness.results.intervals import item_intervals
from harness_tasks.commute.data import CommuteLoader
from harness_tasks.commute.tasks import CommuteGIC, CommuteGTC, CommuteIC, CommuteTC


@pytest.fixture
def two_tuples(tmp_path):
    """The red-scorer data of test_commute_tasks: IC (1, 1) and (0, 0); TC (1, 1) and (0, 1)."""
    lines = [
        ("s", "x#10", "y#200", "a.png"),
        ("s", "y#200", "x#10", "b.png"),
        ("t", "x#100", "y#150", "c.png"),
        ("t", "y#150", "x#100", "d.png"),
    ]
    images = solid_images(tmp_path / "images", {"a.png": 20, "b.png": 190, "c.png": 160, "d.png": 140})
    return (
        CommuteLoader("commute")
        .load(str(write_commute(tmp_path / "data", lines)), {"lang": "fr"}, images_dir=str(images))
        .data
    )


@pytest.mark.parametrize(
    ("task_class", "name", "value", "confidence", "bounds"),
    [
        # IC: tuples (1, 1) and (0, 0). Over 2 tuple units a resample's IC is 0, 1/2 or 1 with probability 1/4, 1/2, 1/4,
        # so the 0.3 and 0.7 quantiles are both 1/2; over 4 direction units they would be 1/4 and 3/4.
        (CommuteIC, "ic", 0.5, 0.4, (0.5, 0.5)),
        (CommuteGIC, "gic", 0.5, 0.4, (0.5, 0.5)),  # GIC per tuple: 1 and 0
        # TC: tuples (1, 1) and (0, 1): a resample's TC is 1/2, 3/4 or 1 with probability 1/4, 1/2, 1/4
        (CommuteTC, "tc", 0.75, 0.4, (0.75, 0.75)),
        (CommuteGTC, "gtc", 0.5, 0.6, (0.0, 1.0)),  # GTC per tuple: 1 and 0; quantiles 0.2 and 0.8 fall on 0 and 1
    ],
)
def test_each_rate_gets_an_interval_over_tuples(two_tuples, task_class, name, value, confidence, bounds):
    task = task_class(f"commute_{name}")
    out = run_task(task, two_tuples, RedScorer("r"))
    assert out.per_seed[0][name] == value
    intervals, warnings = item_intervals(
        task.name, out.samples, task.metric_info(out), out.per_seed[0], resamples=20000, confidence=confidence
    )
    assert warnings == [] and intervals[name]["units"] == 2
    assert (intervals[name]["low"], intervals[name]["high"]) == bounds
