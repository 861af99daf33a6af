"""The plots: which are drawn from which results, and the meta-correlation in the scatter's title."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from leaderboard.builders import record

from harness.leaderboard.load import Entry
from harness.leaderboard.merge import merge
from harness.leaderboard.plots import write_plots
from harness.leaderboard.retrieval_plots import meta_correlation


def test_meta_correlation_by_hand():
    # three models, two seeds: seed 0 perfectly correlated, seed 1 perfectly anti-correlated
    x = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    y = np.array([[0.1, 0.3], [0.2, 0.2], [0.3, 0.1]])
    pearson, spearman = meta_correlation(x, y)
    assert (pearson.mean, pearson.std, pearson.seeds) == pytest.approx((0.0, np.sqrt(2.0), 2))
    assert (spearman.mean, spearman.std) == pytest.approx((0.0, np.sqrt(2.0)))
    # Pearson and Spearman part ways on a monotone but non-linear relation
    pearson, spearman = meta_correlation(np.array([[1.0], [2.0], [3.0], [4.0]]), np.array([[1.0], [2.0], [3.0], [100.0]]))
    assert spearman.mean == pytest.approx(1.0) and pearson.mean == pytest.approx(np.corrcoef([1, 2, 3, 4], [1, 2, 3, 100])[0, 1])


def test_meta_correlation_leaves_out_undefined_seeds_and_needs_three_models():
    x = np.array([[1.0, 1.0, 5.0], [2.0, np.nan, 5.0], [3.0, 2.0, 5.0]])  # seed 1 undefined, seed 2 constant
    y = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0], [4.0, 3.0, 3.0]])
    pearson, _ = meta_correlation(x, y)
    assert pearson.seeds == 1 and pearson.std == 0.0
    assert meta_correlation(x[:2], y[:2]) == (None, None)


def board_of(*records):
    return merge([Entry(r, Path("results.jsonl")) for r in records])


def retrieval(model: str, xlr: list[float], bkr: list[float], k: int = 10) -> list:
    args = {"src": "en", "tgt": "de", "dataset": "ikea", "k": k}
    return [record("xlr", model, xlr, args=args), record("backretrieval", model, bkr, args={**args})]


def commute(model: str, temperature: float, value: float) -> list:
    args = {"lang": "de", "ties": "wrong", "temperature": temperature}
    return [record(task, model, value, args=args) for task in ("commute_tc", "commute_ic", "commute_gtc", "commute_gic")]


def test_which_plots_are_drawn(tmp_path):
    board = board_of(*retrieval("a", [0.9, 0.8], [0.7, 0.6]), *retrieval("b", [0.5, 0.4], [0.5, 0.3]),
                     *retrieval("c", [0.2, 0.3], [0.1, 0.2]), *commute("vgamt", 1.0, 0.6))
    plots = write_plots(board, tmp_path)
    assert [(p.family, p.file) for p in plots] == [
        ("retrieval", "bkr_vs_xlr_ikea_en-de.png"), ("retrieval", "bkr_boxplots.png"), ("commute", "commute_bars_de.png")]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.file for p in plots)


def test_no_scatter_without_twin_signatures_and_a_sweep_only_over_two_temperatures(tmp_path):
    board = board_of(record("xlr", "a", [0.9, 0.8], args={"src": "en", "tgt": "de", "dataset": "ikea", "k": 10}),
                     record("backretrieval", "a", [0.7, 0.6], args={"src": "en", "tgt": "de", "dataset": "ikea", "k": 5}),
                     *commute("vgamt", 0.5, 0.4), *commute("vgamt", 2.0, 0.7))
    assert [p.file for p in write_plots(board, tmp_path)] == ["bkr_boxplots.png", "commute_temperature_de.png"]  # no T = 1: no bars
