"""``harness commute-perplexity RESULTS... -o FILE.png``: per-tuple perplexities under each image.

In the manner of Kashani Motlagh et al. (WMT 2024, Figure 3), from the per-sample logs of the
CoMMuTE tasks (``--log-samples``; each record's ``ppl`` maps ``image|translation`` to the
perplexity of that translation given the source and that image). Each RESULTS is a samples file
or a results folder; in a folder the latest record of every CoMMuTE task with a samples file is
read and their tables are merged by tuple id (so a run of ``commute_tc`` and ``commute_ic``
gives both panels). One row of panels per RESULTS:

- *correct vs incorrect* (TC's comparisons): per tuple and image, the perplexity of that image's
  correct translation (x) against its incorrect one (y); above the diagonal TC is right.
- *own vs other image* (IC's comparisons; needs the ``b|a`` and ``a|b`` entries that ``commute_ic``
  logs): per tuple and translation, its perplexity with its own image (x) against the other
  image (y); above the diagonal IC is right. A scorer that ignores the image puts every point
  exactly on the diagonal, and the panel says how many points are identical.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import DataError, HarnessError
from harness.results.jsonl import BadLine, iter_json_lines
from harness.results.records import RESULTS_FILE, read_records

Tables = dict[str, dict[str, float]]  # tuple id -> "image|translation" -> perplexity
Points = list[tuple[float, float]]
TC_DIRECTIONS = (("a", "a", "inc_a"), ("b", "b", "inc_b"))  # (image, its correct translation, its incorrect one)
IC_DIRECTIONS = (("a", "a", "b"), ("b", "b", "a"))  # (translation, its own image, the other image)


def read_tables(path: Path, tables: Tables | None = None) -> Tables:
    """The finite, positive perplexities of every tuple in a samples file, merged into ``tables``."""
    tables = {} if tables is None else tables
    for item in iter_json_lines(path):
        if isinstance(item, BadLine):
            raise DataError(str(path), f"not a JSON line ({item})", row=item.line)
        line, sample = item
        ppl = sample.get("ppl") if isinstance(sample, dict) else None
        if not isinstance(ppl, dict) or "id" not in sample:
            raise DataError(str(path), "has no 'id' and 'ppl' (is it a CoMMuTE samples file?)", row=line)
        for slot, value in ppl.items():
            if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
                tables.setdefault(str(sample["id"]), {})[slot] = float(value)
    return tables


def run_tables(location: str) -> tuple[str, Tables]:
    """A label and the merged tables of a samples file, or of every CoMMuTE task's latest log in a results folder."""
    path = Path(location)
    if path.is_file():
        return path.stem, read_tables(path)
    if not path.is_dir():
        raise HarnessError(f"{location!r} is neither a samples file nor a results folder")
    records, _ = read_records(path / RESULTS_FILE)
    latest = {r.task: (r, r.samples_file) for r in records if r.samples_file and r.task.startswith("commute_")}
    if not latest:
        raise HarnessError(f"{path / RESULTS_FILE} has no CoMMuTE record with per-sample logs (run with --log-samples)")
    tables: Tables = {}
    for _, samples_file in latest.values():
        read_tables(path / samples_file, tables)
    models = sorted({str(r.model.get("name", "")) for r, _ in latest.values()} - {""})
    return ", ".join(models) or path.name, tables


Direction = tuple[str, str, str]


def pairs(tables: Tables, directions: Sequence[Direction], slot: Callable[[Direction], tuple[str, str]]) -> Points:
    """Per tuple (in id order) and direction, (x, y) where ``slot(direction)`` gives the two table keys; both must be present."""
    points = []
    for key in sorted(tables):
        table = tables[key]
        for direction in directions:
            x, y = slot(direction)
            if x in table and y in table:
                points.append((table[x], table[y]))
    return points


def tc_points(tables: Tables) -> Points:
    """(correct, incorrect) perplexity per tuple and image."""
    return pairs(tables, TC_DIRECTIONS, lambda d: (f"{d[0]}|{d[1]}", f"{d[0]}|{d[2]}"))


def ic_points(tables: Tables) -> Points:
    """(own image, other image) perplexity per tuple and translation."""
    return pairs(tables, IC_DIRECTIONS, lambda d: (f"{d[1]}|{d[0]}", f"{d[2]}|{d[0]}"))


def _scales(axes: Any, spread: float) -> None:
    """Log axes with plain tick labels (1, 2, 5, 10, ...; powers of 10 only over a wide range) when the
    perplexities span a factor of 10 or more."""
    from matplotlib import ticker

    if spread >= 10:
        axes.set_xscale("log")
        axes.set_yscale("log")
    for axis in (axes.xaxis, axes.yaxis):
        if spread >= 10:
            axis.set_major_locator(ticker.LogLocator(subs=(1.0,) if spread >= 300 else (1.0, 2.0, 5.0)))
            axis.set_minor_formatter(ticker.NullFormatter())
        axis.set_major_formatter(ticker.FormatStrFormatter("%g"))


def _panel(axes: Any, points: Points, xlabel: str, ylabel: str, verdict: str, title: str) -> None:
    """A scatter (log-log when the perplexities span a factor of 10 or more) with the diagonal, and how many
    points lie above it, on it and below it."""
    if not points:
        axes.text(
            0.5,
            0.5,
            f"no {verdict} comparisons in the logs\n(run commute_{verdict.lower()} with --log-samples)",
            ha="center",
            va="center",
            transform=axes.transAxes,
            color="grey",
        )
        axes.set_title(title, fontsize=9)
        axes.set_xticks([])
        axes.set_yticks([])
        return
    xs, ys = zip(*points)
    above, equal = sum(y > x for x, y in points), sum(y == x for x, y in points)
    low, high = min(xs + ys), max(xs + ys)
    axes.plot([low, high], [low, high], color="grey", linestyle="--", linewidth=0.9, label="equal perplexity")
    axes.scatter(xs, ys, s=14, alpha=0.6, color="C0", edgecolors="none")
    _scales(axes, high / low)
    axes.set_aspect("equal", adjustable="datalim")
    axes.set_xlabel(xlabel, fontsize=8)
    axes.set_ylabel(ylabel, fontsize=8)
    axes.grid(alpha=0.3, which="both", linewidth=0.5)
    note = f"above ({verdict} right): {above}\non the diagonal (tie): {equal}\nbelow: {len(points) - above - equal}"
    if equal == len(points):
        note += "\nall identical: the scores ignore the image"
    axes.text(
        0.97,
        0.03,
        note,
        ha="right",
        va="bottom",
        fontsize=7,
        transform=axes.transAxes,
        bbox={"facecolor": "white", "edgecolor": "lightgrey", "alpha": 0.9},
    )
    axes.set_title(title, fontsize=9)
    axes.legend(fontsize=7, loc="upper left")


def perplexity_figure(runs: Mapping[str, Tables], path: Path, title: str = "CoMMuTE: per-tuple perplexities") -> None:
    """One row per run: correct vs incorrect under each image, and each translation under its own vs the other image."""
    from harness.leaderboard.figures import figure, save

    with figure(9.0, 4.2 * len(runs) + 0.4) as fig:
        grid = fig.subplots(len(runs), 2, squeeze=False)
        for (label, tables), (left, right) in zip(runs.items(), grid):
            _panel(
                left,
                tc_points(tables),
                "correct translation, with the image",
                "incorrect translation, same image",
                "TC",
                f"{label}: correct vs incorrect",
            )
            _panel(
                right,
                ic_points(tables),
                "translation with its own image",
                "same translation, with the other image",
                "IC",
                f"{label}: own vs other image",
            )
        fig.suptitle(title, fontsize=10)
        save(fig, path)


class PerplexityPlot:
    """The per-tuple perplexity figure of one or more CoMMuTE runs."""

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Runs and the output file."""
        parser.add_argument("results", nargs="+", help="samples files or results folders (one row of panels each)")
        parser.add_argument("-o", "--output", required=True, help="the PNG to write")

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        """Read every run, then write the figure."""
        runs: dict[str, Tables] = {}
        for location in args.results:
            label, tables = run_tables(location)
            if not tables:
                raise HarnessError(f"{location!r} has no finite perplexities to plot")
            runs[label if label not in runs else f"{label} ({location})"] = tables
        perplexity_figure(runs, Path(args.output))
        print(f"wrote {args.output}")
        return 0


COMMAND = PerplexityPlot()
