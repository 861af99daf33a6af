"""Plots of boards with more models than a legend names (issue 24.7): drawn as collections, each model in its
own colour and marker, no legend entry per model, boxes with ``boxplot``'s statistics. (The leaderboard's figures
of one mark per model show the best 20 instead: ``test_figures_best.py``.)"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from leaderboard.builders import record
from matplotlib.colors import to_hex

from harness.leaderboard.figures import LEGEND_MODELS, colours, figure, markers
from harness.leaderboard.merge import merge
from harness.results.load import Entry

MODELS = 25


def many():
    args = {"src": "en", "tgt": "de", "dataset": "ikea", "k": 10}
    lines = []
    for index in range(MODELS):
        value = 0.02 + 0.03 * index
        lines += [
            record("xlr", f"m{index:02d}", [value, value + 0.02], args=args),
            record("backretrieval", f"m{index:02d}", [value / 2, value / 2 + 0.02], args=args),
        ]
    return merge([Entry(r, Path("results.jsonl")) for r in lines])


def drawn(function, board, folder, monkeypatch):
    from harness_tasks.retrieval import plots

    figures = []
    monkeypatch.setattr(plots, "save", lambda fig, path: figures.append(fig))
    function(board, folder)
    return figures


def test_a_scatter_of_many_models_keeps_each_models_colour_and_marker_without_a_legend(tmp_path, monkeypatch):
    from harness_tasks.retrieval.plots import scatter_plots

    board = many()
    assert MODELS > LEGEND_MODELS
    (fig,) = drawn(scatter_plots, board, tmp_path, monkeypatch)
    (axes,) = fig.axes
    assert fig.legends == [] and "25 models (not named" in fig._suptitle.get_text()
    palette, shapes = colours(board), markers(board)
    points = {}  # (x, y) -> colour of the marker drawn there, per marker shape
    for collection in axes.collections[-len(set(shapes.values())) :]:  # the point collections come last
        for (x, y), colour in zip(collection.get_offsets(), collection.get_facecolors()):
            points[round(float(x), 6), round(float(y), 6)] = to_hex(colour)
    assert len(points) == MODELS
    for index, key in enumerate(board.labels):
        x, y = 0.03 + 0.03 * index, (0.02 + 0.03 * index) / 2 + 0.01  # the means of the two seeds
        assert points[round(x, 6), round(y, 6)] == to_hex(palette[key])


def test_boxes_have_boxplots_statistics():
    from harness_tasks.retrieval.plots import draw_boxes

    data = [[0.1, 0.2, 0.3, 0.4, 0.5], [0.5, 0.5, 0.5, 0.5, 2.0]]
    with figure(4, 3) as fig:
        axes = fig.subplots()
        draw_boxes(axes, data)
        lines, medians = axes.collections[0], axes.collections[1]
        fliers = axes.collections[2].get_offsets()
    box = lines.get_segments()[0]  # the first box: quartiles 0.2 and 0.4 (numpy's linear percentiles), width 0.5
    assert box[:, 0].tolist() == [0.75, 1.25, 1.25, 0.75, 0.75]
    assert box[:, 1].tolist() == pytest.approx([0.2, 0.2, 0.4, 0.4, 0.2])
    whiskers = [s for s in lines.get_segments()[:5] if len(s) == 2 and s[0, 0] == s[1, 0] == 1.0]
    assert [v for w in whiskers for v in w[:, 1]] == pytest.approx([0.2, 0.1, 0.4, 0.5])
    assert [s[0, 1] for s in medians.get_segments()] == pytest.approx([0.3, 0.5])
    assert np.asarray(fliers).tolist() == [[2.0, 2.0]]  # the second box's 2.0 lies beyond 1.5 IQR (IQR 0)
    with figure(4, 3) as fig:
        axes = fig.subplots()
        draw_boxes(axes, data, whis=(0, 100))  # whiskers from min to max: no fliers
        segments = axes.collections[0].get_segments()
        assert len(axes.collections) == 2 and [s[1, 1] for s in segments[6:10:2]] == pytest.approx([0.5, 2.0])


def test_bars_of_many_models_leave_the_values_to_the_tables_but_still_mark_na():
    from harness.leaderboard.figures import grouped_bars

    args = {"lang": "de", "ties": "wrong", "temperature": 1.0}
    lines = [record("commute_tc", f"m{i:02d}", 0.5, args=args) for i in range(MODELS)]
    lines.append(record("commute_ic", "m00", [None], args=args))
    board = merge([Entry(r, Path("results.jsonl")) for r in lines])
    columns = sorted(board.columns, key=lambda c: c.role, reverse=True)  # tc, ic
    with figure(8, 3) as fig:
        axes = fig.subplots()
        grouped_bars(axes, board, list(board.labels), columns, ["TC", "IC"])
        assert [t.get_text() for t in axes.texts] == ["n/a"]
        assert {t.get_rotation() for t in axes.get_xticklabels()} == {90.0}
        assert not axes.patches[:-2]  # no rectangle per bar: one collection per column (the patches: legend entries)
        tc = axes.collections[0]
        assert len(tc.get_paths()) == MODELS and to_hex(tc.get_facecolor()[0]) == to_hex("C0")
        first = tc.get_paths()[0].vertices  # model 0's TC bar: two bars a model, each 0.4 wide, drawn 0.36 wide
        assert first[:4].ravel().tolist() == pytest.approx([-0.38, 0.0, -0.38, 0.5, -0.02, 0.5, -0.02, 0.0])
        assert axes.get_ylim()[0] == 0.0  # no margin below the baseline, as bars have


def test_a_box_over_language_pairs_per_model_of_many_models_spans_min_to_max_in_a_capped_width(tmp_path):
    from matplotlib.image import imread

    from harness_tasks.retrieval.analysis.aggregations import pair_boxplot

    scores = {f"m{i:02d}": {"p1": 0.1 + i / 100, "p2": 0.5, "p3": 0.9 - i / 100} for i in range(2 * MODELS)}
    drawn = pair_boxplot(scores, tmp_path / "pairs.png")
    assert drawn.models[:2] == ["m00", "m01"] and drawn.medians == pytest.approx([0.5] * 2 * MODELS)
    assert imread(tmp_path / "pairs.png").shape[1] == 30 * 150  # 50 models would be 38.7 inches; capped at 30
