"""The YiSi-2 family on the leaderboard: one bar chart per data set and direction of each task's
main metric per model (error bars: the interval over items; dashed: chance where defined)."""

from __future__ import annotations

from pathlib import Path

from harness.leaderboard.figures import Plot, figure, file_names, grouped_bars, legend_outside, save
from harness.leaderboard.merge import Board
from harness.leaderboard.tables import family_tables

FAMILY = "yisi"


def bar_plots(board: Board, folder: Path) -> list[Plot]:
    """The main metrics of YiSi-2 and its baselines per model, one figure per data set and direction."""
    tables = [t for t in family_tables(board) if t.family.name == FAMILY]
    plots = []
    for table, name in zip(tables, file_names("yisi_bars", [t.title for t in tables])):
        keys = [k for k in board.labels if any((k, c) in board.cells for c in table.columns)]
        with figure(max(6.5, 2.5 + 0.6 * len(keys) * len(table.columns)), 4.5) as fig:
            axes = fig.subplots()
            grouped_bars(axes, board, keys, table.columns, table.headers)
            axes.set_ylim(min(0.0, axes.get_ylim()[0]), 1.12)
            axes.set_ylabel("score (value above each bar)")
            fig.suptitle(f"YiSi-2 and baselines per model: {table.title}", fontsize=9)
            legend_outside(fig, axes, title="task, metric")
            save(fig, folder / name)
        plots.append(Plot(FAMILY, f"YiSi-2 and baselines: {table.title}", name))
    return plots


PLOTS = (bar_plots,)
