"""What every plot shares: the figure (default style), PNG saving without a version stamp,
file names, one colour per model, and a column's description."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.leaderboard.merge import Board, Column

MAX_INCHES = 30.0  # at 100 dpi; many models make wide figures, capped here


@dataclass(frozen=True)
class Plot:
    """A written plot: the family it illustrates, a title for links, the file name in ``plots/``."""

    family: str
    title: str
    file: str


def describe(column: Column, board: Board) -> str:
    """The dataset (its loader), direction, split and language of a column, from any of its records."""
    example = board.example(column)
    args = example.task_args
    direction = f"{args['src']}-{args['tgt']}" if "src" in args and "tgt" in args else None
    parts = [example.dataset.get("loader") or args.get("dataset"), direction, args.get("split"), args.get("lang")]
    return " ".join(str(p) for p in parts if p is not None) or column.task


def file_names(prefix: str, descriptions: Sequence[str]) -> list[str]:
    """``prefix_<slug>.png`` per description, unique (``_2``, ``_3`` on repeats)."""
    names: list[str] = []
    for description in descriptions:
        slug = re.sub(r"[^A-Za-z0-9.+-]+", "_", description).strip("_") or "all"
        name, count = f"{prefix}_{slug}", 1
        while f"{name}.png" in names:
            count += 1
            name = f"{prefix}_{slug}_{count}"
        names.append(f"{name}.png")
    return names


@contextmanager
def figure(width: float, height: float) -> Iterator[Any]:
    """A figure under matplotlib's default style, whatever the user's matplotlibrc says."""
    import matplotlib.style
    from matplotlib.figure import Figure

    with matplotlib.style.context("default"):
        yield Figure(figsize=(min(width, MAX_INCHES), min(height, MAX_INCHES)), layout="constrained")


def save(figure: Any, path: Path) -> None:
    """Write a PNG with no ``Software`` entry (it would carry matplotlib's version)."""
    figure.savefig(path, format="png", dpi=100, metadata={"Software": None})


def colours(board: Board) -> dict[str, str]:
    """One colour per model, the same in every plot."""
    return {key: f"C{index % 10}" for index, key in enumerate(board.labels)}


def models_with(board: Board, *columns: Column) -> list[str]:
    """The models (keys) with a cell in every one of the columns."""
    return [key for key in board.labels if all((key, c) in board.cells for c in columns)]
