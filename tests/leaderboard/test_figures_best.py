"""Figures of one mark per model past ``PLOTTED_MODELS`` models: the best 20 by what the figure shows, controls
never among them, equal scores by label, the title saying so; at 20 models or fewer, every model and no word of it.

The boards: m00..m23 score (i + 1) / 100 but m03 and m04, both 0.05, and a control scores 0.99. The best 20 are
m23..m05 (19) and, of the tie at 0.05, m03 (its label first)."""

from __future__ import annotations

from pathlib import Path

from leaderboard.builders import record

from harness.leaderboard import figures
from harness.leaderboard.figures import PLOTTED_MODELS, best_models, mean_score
from harness.leaderboard.merge import merge
from harness.results.load import Entry

RANKED = [f"m{i:02d}" for i in range(24)]
BEST = ["m03", *RANKED[5:]]
CONTROL = "noise"
NOTE = "best 20 of 25 models by {} (controls left out); every model is in the tables"


def value(model: str) -> float:
    return 0.99 if model == CONTROL else 0.05 if model == "m03" else (int(model[1:]) + 1) / 100


def controlled(item):
    """The line with a card that makes its model a control."""
    item.model = {**item.model, "card": {"control": "random on purpose"}}
    return item


def lines(make, models=(*RANKED, CONTROL)) -> list:
    return [controlled(found) if model == CONTROL else found for model in models for found in make(model)]


def board_of(records):
    return merge([Entry(r, Path("results.jsonl")) for r in records])


def tc(model: str, temperatures=(1.0,)) -> list:
    return [
        record("commute_tc", model, value(model), args={"lang": "de", "ties": "wrong", "temperature": t})
        for t in temperatures
    ]


def bkr(model: str, targets=("de",)) -> list:
    return [
        record("backretrieval", model, value(model), args={"src": "en", "tgt": t, "dataset": "ikea", "k": 10})
        for t in targets
    ]


def captured(module, monkeypatch) -> list:
    drawn: list = []
    monkeypatch.setattr(module, "save", lambda fig, path, **_: drawn.append(fig))
    return drawn


def names(axes) -> list[str]:
    return [t.get_text() for t in axes.get_xticklabels()]


def test_a_bar_figure_of_25_models_shows_the_best_20_in_board_order_never_a_control(tmp_path, monkeypatch):
    board = board_of(lines(tc))
    drawn = captured(figures, monkeypatch)
    figures.bar_figure(board, list(board.labels), board.columns, ["TC"], tmp_path / "b.png", title="t", ylabel="y")
    (fig,) = drawn
    assert names(fig.axes[0]) == [label for label in board.labels.values() if label in BEST]
    assert fig._suptitle.get_text() == "t\n" + NOTE.format("TC")
    assert {t.get_rotation() for t in fig.axes[0].get_xticklabels()} == {20.0}  # slanted, as at 20 models


def test_at_20_models_every_model_is_shown_control_too_and_the_title_says_nothing_of_best(tmp_path, monkeypatch):
    board = board_of(lines(tc, (*RANKED[5:], CONTROL)))
    assert len(board.labels) == PLOTTED_MODELS
    drawn = captured(figures, monkeypatch)
    figures.bar_figure(board, list(board.labels), board.columns, ["TC"], tmp_path / "b.png", title="t", ylabel="y")
    (fig,) = drawn
    assert names(fig.axes[0]) == list(board.labels.values()) and fig._suptitle.get_text() == "t"


def test_a_lower_is_better_metric_keeps_the_lowest_and_the_title_says_so():
    def error(model: str) -> list:
        found = record("commute_tc", model, value(model), args={"lang": "de", "ties": "wrong", "temperature": 1.0})
        found.metric_info = {"tc": {"higher_is_better": False}}
        return [found]

    board = board_of(lines(error, RANKED + [f"z{i}" for i in range(3)]))  # z0..z2: 0.01, m00..m23 by their value
    shown, note = best_models(board, list(board.labels), *mean_score(board, board.columns, ["error rate"]))
    lowest = sorted(
        board.labels, key=lambda k: (board.cells[k, board.columns[0]].record.metrics["tc"], board.labels[k])
    )
    assert sorted(shown) == sorted(lowest[:20])
    assert note == "best 20 of 27 models by error rate (lower is better); every model is in the tables"


def test_the_mean_of_several_columns_ranks_and_is_named_each_turned_to_higher_is_better():
    def two(model: str) -> list:
        args = {"lang": "de", "ties": "wrong", "temperature": 1.0}
        ic = record("commute_ic", model, 1.0 - value(model), args=args)  # lower is better: the same order as tc
        ic.metric_info = {"ic": {"higher_is_better": False}}
        return [record("commute_tc", model, value(model), args=args), ic]

    board = board_of(lines(two))
    tc_column, ic_column = sorted(board.columns, key=lambda c: c.role, reverse=True)
    shown, note = best_models(board, list(board.labels), *mean_score(board, [tc_column, ic_column], ["TC", "IC"]))
    assert sorted(board.labels[k] for k in shown) == BEST
    assert note == NOTE.format("the mean of TC, IC (IC: lower is better)")


def test_each_box_panel_of_25_models_shows_the_best_20_medians_first(tmp_path, monkeypatch):
    from harness_tasks.retrieval import plots

    board = board_of(lines(bkr))
    drawn = captured(plots, monkeypatch)
    plots.box_plots(board, tmp_path)
    (fig,) = drawn
    assert names(fig.axes[0]) == BEST[::-1]  # best median first
    assert fig.axes[0].get_title().endswith("ikea en-de\n" + NOTE.format("median"))


def test_the_box_per_model_over_language_pairs_of_25_models_shows_the_best_20(tmp_path, monkeypatch):
    from harness_tasks.retrieval import plots
    from harness_tasks.retrieval.analysis import aggregations

    board = board_of(lines(lambda model: bkr(model, ("de", "fr"))))
    drawn: list = []
    monkeypatch.setattr(aggregations, "pair_boxplot", lambda scores, path, **kw: drawn.append((scores, kw["title"])))
    plots.pair_plots(board, tmp_path)
    ((scores, title),) = drawn
    assert sorted(scores) == BEST and scores["m03"] == {"en-de": 0.05, "en-fr": 0.05}
    assert title.endswith("\n" + NOTE.format("median over the language pairs"))


def test_the_temperature_sweep_of_25_models_draws_the_best_20_in_their_colours_and_markers(tmp_path, monkeypatch):
    from harness_tasks.commute import plots

    board = board_of(lines(lambda model: tc(model, (0.5, 1.0))))
    drawn = captured(plots, monkeypatch)
    plots.sweep_plots(board, tmp_path)
    (fig,) = drawn
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [label for label in board.labels.values() if label in BEST]
    assert fig._suptitle.get_text().endswith("\n" + NOTE.format("their mean over the temperatures and metrics"))
    palette, shapes = figures.colours(board), figures.markers(board)  # 25 models: colours repeat, markers tell apart
    keys = [key for key, label in board.labels.items() if label in BEST]
    assert [(line.get_color(), line.get_marker()) for line in fig.axes[0].get_lines()] == [
        (palette[key], shapes[key]) for key in keys
    ]


def test_a_sweep_of_20_models_draws_every_model_with_circles_each_in_its_own_colour(tmp_path, monkeypatch):
    from harness_tasks.commute import plots

    board = board_of(lines(lambda model: tc(model, (0.5, 1.0)), RANKED[:PLOTTED_MODELS]))
    drawn = captured(plots, monkeypatch)
    plots.sweep_plots(board, tmp_path)
    (fig,) = drawn
    palette = figures.colours(board)
    assert [(line.get_color(), line.get_marker()) for line in fig.axes[0].get_lines()] == [
        (palette[key], "o") for key in board.labels
    ]
    assert "best" not in fig._suptitle.get_text() and len(fig.legends[0].get_texts()) == PLOTTED_MODELS


def test_a_plugins_own_figure_crops_by_its_own_score_through_the_public_api():
    import harness

    board = board_of(lines(tc))
    keys = list(board.labels)
    shown, note = harness.best_models(board, keys, lambda key: -abs(value(board.labels[key]) - 0.1), "closeness")
    assert len(shown) == PLOTTED_MODELS and [k for k in keys if k in shown] == shown  # the order given
    assert board.key_of(CONTROL) not in shown and board.key_of("m09") in shown  # 0.1 exactly: the closest
    assert note == NOTE.format("closeness")
