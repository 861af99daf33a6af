"""All plots (PNG, matplotlib, byte-identical for the same inputs): see ``retrieval_plots`` and
``commute_plots``."""

from __future__ import annotations

from pathlib import Path

from harness.leaderboard.commute_plots import bar_plots, sweep_plots
from harness.leaderboard.figures import Plot
from harness.leaderboard.merge import Board
from harness.leaderboard.retrieval_plots import box_plots, scatter_plots

PREFIXES = ("bkr_vs_xlr", "bkr_boxplots", "commute_bars", "commute_temperature")


def write_plots(board: Board, folder: Path) -> list[Plot]:
    """Write every plot the board supports into ``folder``; remove earlier plots no longer produced."""
    folder.mkdir(parents=True, exist_ok=True)
    plots = scatter_plots(board, folder) + box_plots(board, folder) + bar_plots(board, folder) + sweep_plots(board, folder)
    keep = {p.file for p in plots}
    for old in folder.glob("*.png"):
        if old.name.startswith(PREFIXES) and old.name not in keep:
            old.unlink()
    return plots
