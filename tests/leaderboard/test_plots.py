"""The plots: which are drawn from which results, by whose plot functions, and what they show
(the meta-correlation as ``harness meta`` computes it, intervals, chance, zero and n/a bars)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from leaderboard.builders import record

from harness.leaderboard.families import Families, Family
from harness.leaderboard.figures import chance_line, error_label, error_of, figure, grouped_bars, markers
from harness.leaderboard.merge import merge
from harness.leaderboard.plots import write_plots
from harness.results.load import Entry
from harness_tasks.retrieval.plots import best_first, meta_result, triples


def board_of(*records, families=None):
    return merge([Entry(r, Path("results.jsonl")) for r in records], families)


def retrieval(model: str, xlr: list[float], bkr: list[float], k: int = 10, tgt: str = "de") -> list:
    args = {"src": "en", "tgt": tgt, "dataset": "ikea", "k": k}
    return [record("xlr", model, xlr, args=args), record("backretrieval", model, bkr, args={**args})]


def commute(model: str, temperature: float, value: float | None) -> list:
    args = {"lang": "de", "ties": "wrong", "temperature": temperature}
    return [
        record(task, model, value, args=args) for task in ("commute_tc", "commute_ic", "commute_gtc", "commute_gic")
    ]


def test_which_plots_are_drawn(tmp_path):
    board = board_of(
        *retrieval("a", [0.9, 0.8], [0.7, 0.6]),
        *retrieval("b", [0.5, 0.4], [0.5, 0.3]),
        *retrieval("c", [0.2, 0.3], [0.1, 0.2]),
        *commute("vgamt", 1.0, 0.6),
    )
    plots = write_plots(board, tmp_path)
    assert [(p.family, p.file) for p in plots] == [  # retrieval compares three models, CoMMuTE one
        ("retrieval", "bkr_vs_xlr_ikea_en-de.png"),
        ("retrieval", "bkr_boxplots.png"),
        ("commute", "commute_bars_ikea_de.png"),
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.file for p in plots)


def test_commute_figures_show_the_setting_the_family_ranks(tmp_path):
    """Two settings of one language (ties at its default, and not): the bars are drawn for the default one only,
    the other stays in the tables."""
    other = [
        record(task, "vgamt", 0.3, args={"lang": "de", "ties": "correct", "temperature": 1.0})
        for task in ("commute_tc", "commute_ic", "commute_gtc", "commute_gic")
    ]
    board = board_of(*other, *commute("vgamt", 1.0, 0.6))
    assert len({column for column in board.columns if column.role == "commute_tc"}) == 2
    (plot,) = write_plots(board, tmp_path)
    assert plot.file == "commute_bars_ikea_de.png" and "ties=wrong" in plot.title


def test_no_scatter_without_twin_arguments_and_a_sweep_only_over_two_temperatures(tmp_path):
    board = board_of(
        record("xlr", "a", [0.9, 0.8], args={"src": "en", "tgt": "de", "dataset": "ikea", "k": 10}),
        record("backretrieval", "a", [0.7, 0.6], args={"src": "en", "tgt": "de", "dataset": "ikea", "k": 5}),
        *commute("vgamt", 0.5, 0.4),
        *commute("vgamt", 2.0, 0.7),
    )
    assert [p.file for p in write_plots(board, tmp_path)] == [  # one model each: in registration order
        "commute_temperature_ikea_de.png",
        "bkr_boxplots.png",
    ]  # no T = 1: no bars


def test_two_directions_add_the_papers_box_plot_over_language_pairs(tmp_path):
    board = board_of(
        *(
            r
            for m, v in (("a", 0.9), ("b", 0.5), ("c", 0.2))
            for tgt in ("de", "fr")
            for r in retrieval(m, [v, v], [v - 0.1, v], tgt=tgt)
        )
    )
    assert "bkr_over_pairs_ikea_test.png" in [p.file for p in write_plots(board, tmp_path)]


def test_the_scatter_title_is_harness_metas_correlation():
    # three models, two seeds: seed 0 perfectly correlated, seed 1 perfectly anti-correlated
    board = board_of(
        *retrieval("a", [1.0, 1.0], [0.1, 0.3]),
        *retrieval("b", [2.0, 2.0], [0.2, 0.2]),
        *retrieval("c", [3.0, 3.0], [0.3, 0.1]),
    )
    (triple,) = triples(board)
    pearson = meta_result(board, triple)["correlations"]["backretrieval"]["pearson"]
    assert (pearson["mean"], pearson["std"], pearson["seeds_defined"]) == pytest.approx((0.0, np.sqrt(2.0), 2))


def test_the_scatter_title_reads_the_correlations_without_the_bootstrap_unless_it_is_held(monkeypatch):
    from harness_tasks.retrieval import plots
    from harness_tasks.retrieval.analysis import meta

    calls = []
    evaluate = meta.meta_evaluate
    monkeypatch.setattr(meta, "meta_evaluate", lambda rows, **kw: calls.append(kw) or evaluate(rows, **kw))
    rows = [*retrieval("a", [1.0, 1.0], [0.1, 0.3]), *retrieval("b", [2.0, 2.0], [0.2, 0.2])]
    board = board_of(*rows, *retrieval("c", [3.0, 3.0], [0.3, 0.1]))
    (triple,) = triples(board)
    title = plots._meta_title(board, triple)
    assert calls == [{"resamples": 0}]  # in a plot worker: the correlations, no resamples
    assert meta_result(board, triple) and calls[1:] == [{}]  # the sections' evaluation, with its bootstrap
    again = board_of(*rows, *retrieval("c", [3.0, 3.0], [0.3, 0.1]))
    meta_result(again, triple)
    assert plots._meta_title(again, triple) == title and len(calls) == 3  # held: read, not computed again


def test_a_plugin_whose_plot_fails_costs_a_warning_not_the_other_plots(tmp_path, capsys):
    broken = Family("broken", "Broken", ("xlr",), plots="tests_missing_module:PLOTS", plugin="nowhere")
    board = board_of(*retrieval("a", [0.9], [0.7]), families=Families((broken,)))
    assert write_plots(board, tmp_path) == []
    assert "no plots for family 'broken'" in capsys.readouterr().err


def test_boxes_are_ordered_by_median_best_first_ties_by_label():
    values = {"k1": [0.1, 0.2, 0.9], "k2": [0.5, 0.5, 0.6], "k3": [0.4, 0.6, 0.5], "k4": []}
    labels = {"k1": "one", "k2": "two", "k3": "three", "k4": "four"}
    assert best_first(values, labels) == ["k3", "k2", "k1"]  # medians 0.5 (three), 0.5 (two), 0.2; empty left out


def test_error_bars_use_the_interval_else_the_seed_spread_else_nothing():
    seeded = record("xlr", "a", [0.4, 0.6])
    assert error_of(seeded, "recall@k") == pytest.approx((np.std([0.4, 0.6], ddof=1),) * 2)
    assert error_label([seeded], "recall@k") == "bars: std over seeds"
    seeded.intervals = {"recall@k": {"low": 0.45, "high": 0.58, "confidence": 0.95}}
    assert error_of(seeded, "recall@k") == pytest.approx((0.05, 0.08))
    assert error_label([seeded], "recall@k") == "bars: 95% interval over items"
    single = record("xlr", "a", 0.5)
    assert error_of(single, "recall@k") == (0.0, 0.0) and error_label([single], "recall@k") == "no interval recorded"


def test_chance_lines_come_from_the_results_line():
    old, new = record("xlr", "a", 0.5), record("xlr", "b", 0.5)
    new.metric_info = {"recall@k": {"display": "R@10", "higher_is_better": True, "chance": 0.01}}
    with figure(4, 3) as fig:
        axes = fig.subplots()
        chance_line(axes, old, "recall@k")
        assert axes.get_lines() == []  # an older line: no chance level known
        chance_line(axes, new, "recall@k")
        assert [tuple(line.get_ydata()) for line in axes.get_lines()] == [(0.01, 0.01)]


def test_bars_show_zero_as_a_line_with_its_value_and_mark_undefined_metrics():
    args = {"lang": "de", "ties": "wrong", "temperature": 1.0}
    board = board_of(record("commute_tc", "m", 0.0, args=args), record("commute_ic", "m", [None], args=args))
    columns = sorted(board.columns, key=lambda c: c.role, reverse=True)  # tc, ic
    with figure(4, 3) as fig:
        axes = fig.subplots()
        grouped_bars(axes, board, list(board.labels), columns, ["TC", "IC"])
        texts = [t.get_text() for t in axes.texts]
        bars = [p for p in axes.patches if p.get_height() == 0.0 and p.get_width() > 0]
    assert texts == ["0.00", "n/a"]
    assert len(bars) == 1 and bars[0].get_linewidth() > 0  # the zero bar keeps a visible edge


def test_every_model_has_its_own_colour_and_marker():
    board = board_of(*(record("xlr", f"m{i:02d}", 0.5) for i in range(30)))
    palette = {key: (f"C{i % 10}", shape) for i, (key, shape) in enumerate(markers(board).items())}
    assert len(set(palette.values())) == 30


def test_the_perplexity_plot_reads_the_tc_samples(tmp_path):
    """One figure per data set, language and setting, naming the logged models only (a model without a log has
    nothing to show)."""
    from leaderboard.builders import with_samples

    from harness_tasks.commute.plots import perplexity_plots

    args = {"lang": "de", "ties": "wrong", "temperature": 1.0}
    samples = [
        {"id": "1", "ppl": {"a|a": 2.0, "a|inc_a": 8.0, "b|b": 3.0, "b|inc_b": 1.5, "a|b": 9.0}},
        {"id": "2", "ppl": {"a|a": 4.0, "a|inc_a": 5.0, "b|b": None, "b|inc_b": 2.0}},  # an unscored slot is left out
    ]
    logged = [
        Entry(
            with_samples(tmp_path, record("commute_tc", name, 0.75, args=args), samples, f"s_{name}.jsonl"),
            tmp_path / "results.jsonl",
        )
        for name in ("m", "n")
    ]
    board = merge([*logged, Entry(record("commute_tc", "unlogged", 0.5, args=args), tmp_path / "results.jsonl")])
    plots = perplexity_plots(board, tmp_path)
    assert [p.file for p in plots] == ["commute_perplexity_ikea_de.png"]
    assert (tmp_path / plots[0].file).stat().st_size > 0
    (part,) = perplexity_plots.parts(board)
    assert part.inputs.splitlines()[-3:] == [
        "m",
        "n",
        "commute_perplexity_ikea_de.png",
    ]  # the unlogged model is not in it


def test_a_bar_figure_keeps_every_slanted_model_name_inside_it(tmp_path, monkeypatch):
    """Two long model names (as xling-shapes-mmt(blank_images=False) is): the first, slanted to the left of its
    bar, ended a few pixels outside the figure after constrained layout's two passes."""
    from harness.leaderboard import figures

    names = ["a-rather-long-model-name(blank_images=False)", "a-rather-long-model-name(blank_images=True)"]
    args = {"lang": "de", "ties": "wrong", "temperature": 1.0}
    board = board_of(*(record("commute_tc", n, v, args=args) for n, v in zip(names, (0.9, 0.5))))
    drawn = []
    monkeypatch.setattr(figures, "save", lambda fig, path, dpi=100: drawn.append(fig) or fig.savefig(path, dpi=dpi))
    figures.bar_figure(board, list(board.labels), board.columns, ["TC"], tmp_path / "bars.png", title="t", ylabel="y")
    (fig,) = drawn
    renderer = fig._get_renderer()
    left = min(label.get_window_extent(renderer).x0 for label in fig.axes[0].get_xticklabels())
    assert left >= 0


def test_each_box_panel_names_its_image_similarity_where_one_direction_has_two(tmp_path, monkeypatch):
    import harness_tasks.retrieval.plots as retrieval_plots

    args = {"src": "en", "tgt": "de", "dataset": "ikea", "k": 10}
    image = {"image": {"name": "effnet", "revision": "sha256:" + "ab" * 32}}
    records = [
        record("backretrieval", m, [v, v + 0.01], args=args, aux_models=aux, extra={"g": g})
        for m, v in (("a", 0.5), ("b", 0.3))
        for aux, g in ((image, {"model": {"name": "effnet"}}), (None, {"source": "image_features"}))
    ]
    drawn = []
    monkeypatch.setattr(retrieval_plots, "save", lambda fig, path: drawn.append(fig))
    retrieval_plots.box_plots(board_of(*records), tmp_path)
    (fig,) = drawn
    titles = sorted(axes.get_title() for axes in fig.axes)
    assert [t.split("best median first: ", 1)[1] for t in titles] == [
        "ikea en-de (g: effnet)",
        "ikea en-de (g: image_features)",
    ]
