"""One colour and marker per model (issue 24.4), the same in every plot of the page, distinct for eleven models."""

from __future__ import annotations

from pathlib import Path

from leaderboard.builders import record
from matplotlib.colors import to_hex

from harness.leaderboard.figures import PALETTE, colours, markers
from harness.leaderboard.merge import merge
from harness.results.load import Entry

MODELS = [f"model{index:02d}" for index in range(11)]


def board_of(*records):
    return merge([Entry(r, Path("results.jsonl")) for r in records])


def two_directions():
    lines = []
    for tgt in ("de", "fr"):
        args = {"src": "en", "tgt": tgt, "dataset": "ikea"}
        for index, model in enumerate(MODELS):
            if tgt == "fr" and index in (0, 4):  # two models missing from one direction: the others keep their colour
                continue
            value = 0.05 + 0.08 * index
            lines += [
                record("xlr", model, [value, value + 0.01], args=args),
                record("backretrieval", model, [value / 2, value / 2 + 0.01], args=args),
            ]
    return board_of(*lines)


def scatter_styles(board, folder, monkeypatch) -> list[dict[str, tuple[str, str]]]:
    """Per BkR-vs-XLR figure: model label -> (colour, marker) of its point."""
    from harness_tasks.retrieval import plots

    drawn = []
    monkeypatch.setattr(plots, "save", lambda figure, path: drawn.append(figure))
    plots.scatter_plots(board, folder)
    styles = []
    for figure in drawn:
        (axes,) = figure.axes
        points = {bars.get_label(): bars.lines[0] for bars in axes.containers}  # errorbar: (data line, caps, bars)
        styles.append({label: (to_hex(line.get_color()), line.get_marker()) for label, line in points.items()})
    return styles


def test_eleven_models_have_eleven_colours_and_keep_them_in_every_plot(tmp_path, monkeypatch):
    board = two_directions()
    palette, shapes = colours(board), markers(board)
    assert len(set(palette.values())) == 11 and len(PALETTE) == 20
    assert len({(palette[k], shapes[k]) for k in board.labels}) == 11
    first, second = scatter_styles(board, tmp_path, monkeypatch)
    assert len(first) == 11 and len(second) == 9
    expected = {board.labels[k]: (to_hex(palette[k]), shapes[k]) for k in board.labels}
    assert all(first[label] == expected[label] for label in first)
    assert all(second[label] == first[label] for label in second)  # the same in both figures


def test_a_models_colour_follows_the_board_not_the_plot():
    board = two_directions()
    fewer = board_of(*(r.record for r in board.results if r.record.model["name"] != "model00"))
    assert colours(board)[next(iter(board.labels))] == PALETTE[0]
    # a smaller board is another page: its models are numbered afresh, but within one page nothing moves
    assert list(colours(fewer).values()) == list(PALETTE[:10])
