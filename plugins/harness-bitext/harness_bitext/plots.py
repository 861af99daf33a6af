"""The ``bitext`` family's plot: mining accuracy per model, one figure per data set and language pair."""

from __future__ import annotations

from pathlib import Path

from harness import Board, Plot, table_bar_plots


def accuracy_bars(board: Board, folder: Path) -> list[Plot]:
    """A bar per model and column of the family's tables (error bars: the interval over items, when recorded)."""
    return table_bar_plots(board, folder, "bitext", "bitext_accuracy", "Bitext mining", "accuracy")


PLOTS = (accuracy_bars,)
