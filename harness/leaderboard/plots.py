"""All plots (PNG, matplotlib, byte-identical for the same inputs): each family's plot functions,
registered by its plugin, draw into one folder."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from harness.errors import HarnessError
from harness.leaderboard.families import plot_functions
from harness.leaderboard.figures import Plot
from harness.leaderboard.merge import Board


def write_plots(board: Board, folder: Path) -> list[Plot]:
    """Write every plot of the families present into ``folder``.

    A plot function that fails costs a warning naming its family and plugin; the other plots and
    the tables are still written. Two plots with one file name are an error.
    """
    folder.mkdir(parents=True, exist_ok=True)
    plots: list[Plot] = []
    for family, _ in board.families():
        try:
            functions = plot_functions(family)
        except HarnessError as exc:
            print(f"harness: warning: no plots for family {family.name!r}: {exc}", file=sys.stderr)
            continue
        for function in functions:
            try:
                drawn = list(function(board, folder))
            except Exception as exc:  # a plugin's plot must not cost the leaderboard
                print(
                    f"harness: warning: plot {getattr(function, '__name__', function)!r} of family {family.name!r} "
                    f"(plugin {family.plugin!r}) failed: {type(exc).__name__}: {exc}",
                    file=sys.stderr,
                )
                continue
            for plot in drawn:
                if any(p.file == plot.file for p in plots):
                    raise HarnessError(
                        f"two plots write plots/{plot.file} (family {family.name!r}); each plot needs its own file name"
                    )
                plots.append(replace(plot, family=family.name))
    return plots
