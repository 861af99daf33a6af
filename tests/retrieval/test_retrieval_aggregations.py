"""The SIGIR 2021 aggregations over language pairs: the per-model average table and the box plot over pairs."""

from __future__ import annotations

import math

import pytest

from harness_tasks.retrieval.analysis.aggregations import format_pair_table, pair_boxplot, pair_table

SCORES = {
    "a": {"en-de": 0.30, "de-en": 0.50},
    "b": {"en-de": 0.40, "de-en": 0.20},
    "c": {"en-de": 0.90},  # lacks de-en: no average over a missing cell
    "d": {"en-de": math.nan, "de-en": 0.10},  # an undefined score is missing too
}


def test_pair_table_by_hand():
    table = pair_table(SCORES)
    assert table.pairs == ["de-en", "en-de"]
    # a: (.5 + .3) / 2 = .4; b: (.2 + .4) / 2 = .3; c and d undefined, after the defined ones, by name
    assert [(r.model, r.average) for r in table.rows] == [
        ("a", pytest.approx(0.4)),
        ("b", pytest.approx(0.3)),
        ("c", None),
        ("d", None),
    ]
    assert table.rows[2].scores == {"de-en": None, "en-de": 0.9} and table.rows[3].scores == {
        "de-en": 0.1,
        "en-de": None,
    }
    text = format_pair_table(table).splitlines()
    assert text[2].split() == ["a", "0.5000", "0.3000", "0.4000"]
    assert text[4].split() == ["c", "-", "0.9000", "n/a"]
    assert table.to_dict()["rows"][1] == {
        "model": "b",
        "scores": {"de-en": 0.2, "en-de": 0.4},
        "average": pytest.approx(0.3),
    }


def test_pair_table_ties_and_empty():
    tied = pair_table({"y": {"p": 0.2}, "x": {"p": 0.2}})
    assert [r.model for r in tied.rows] == ["x", "y"]
    assert pair_table({}).rows == [] and pair_table({}).pairs == []


def test_pair_boxplot_one_box_per_model_by_median(tmp_path):
    from matplotlib.image import imread

    scores = {
        "low": {"p1": 0.1, "p2": 0.2, "p3": 0.9},
        "high": {"p1": 0.5, "p2": 0.6, "p3": 0.4},
        "single": {"p1": 0.3},
        "none": {"p1": None},
    }
    path = tmp_path / "boxes.png"
    drawn = pair_boxplot(scores, path, chance={"p1": 0.05, "p2": 0.05, "p3": 0.05})
    # medians: high .5, single .3, low .2 (its mean .4 would order it second); "none" has no box
    assert drawn.models == ["high", "single", "low"] and drawn.medians == pytest.approx([0.5, 0.3, 0.2])
    assert [sorted(v) for v in drawn.values] == [[0.4, 0.5, 0.6], [0.3], [0.1, 0.2, 0.9]] and drawn.pairs == [
        "p1",
        "p2",
        "p3",
    ]
    image = imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100
    assert b"Software" not in path.read_bytes()  # no version stamp: the committed plot regenerates byte for byte
