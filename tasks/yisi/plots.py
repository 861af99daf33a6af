"""The YiSi-2 family on the leaderboard: one bar chart per data set and direction of each task's
main metric per model (error bars: the interval over items; dashed: chance where defined)."""

from __future__ import annotations

from pathlib import Path

from harness.leaderboard.figures import Plot, table_bar_plots
from harness.leaderboard.merge import Board


def bar_plots(board: Board, folder: Path) -> list[Plot]:
    """The main metrics of YiSi-2 and its baselines per model, one figure per data set and direction."""
    return table_bar_plots(board, folder, "yisi", "yisi_bars", "YiSi-2 and baselines per model", "score")


PLOTS = (bar_plots,)
