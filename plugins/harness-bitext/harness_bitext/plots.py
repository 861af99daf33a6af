"""The ``bitext`` family's plot: mining accuracy per model, one figure per language pair."""

from __future__ import annotations

from pathlib import Path

from harness.leaderboard.figures import Plot, figure, file_names, grouped_bars, legend_outside, save
from harness.leaderboard.merge import Board
from harness.leaderboard.tables import family_tables

FAMILY = "bitext"


def accuracy_bars(board: Board, folder: Path) -> list[Plot]:
    """A bar per model and column of the family's tables (error bars: the interval over items, when recorded)."""
    tables = [t for t in family_tables(board) if t.family.name == FAMILY]
    plots = []
    for table, name in zip(tables, file_names("bitext_accuracy", [t.title for t in tables])):
        keys = [k for k in board.labels if any((k, c) in board.cells for c in table.columns)]
        with figure(max(6.0, 2.5 + 0.8 * len(keys)), 4.0) as fig:
            axes = fig.subplots()
            grouped_bars(axes, board, keys, table.columns, table.headers)
            axes.set_ylim(0, 1.12)
            axes.set_ylabel("accuracy (value above each bar)")
            fig.suptitle(f"Bitext mining: {table.title}", fontsize=9)
            legend_outside(fig, axes, title="metric")
            save(fig, folder / name)
        plots.append(Plot(FAMILY, f"Bitext mining accuracy: {table.title}", name))
    return plots


PLOTS = (accuracy_bars,)
