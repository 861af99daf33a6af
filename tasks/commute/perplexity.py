"""``harness commute-perplexity RESULTS... -o FILE.png``: per-tuple perplexities under each image.

Kashani Motlagh et al. (WMT 2024), Figure 3, from the per-sample logs of the CoMMuTE tasks
(``--log-samples``; each record's ``ppl`` maps ``image|translation`` to the perplexity of that
translation given the source and that image). Each RESULTS is a samples file, a results file
(``results.jsonl``) or a folder holding one: from a results file, the per-sample files its CoMMuTE
records name are read, the latest record of each task per model and setting, and their tables are
merged by tuple id (a run of ``commute_tc``, ``commute_ic`` and ``commute_consistency`` gives
every series). One row of panels per model and setting:

- *Figure 3* (the paper's figure): the perplexities of the correct translations using the
  correct image (``a|a``, ``b|b``), the incorrect image (``b|a``, ``a|b``, logged by
  ``commute_ic``) and the 50/50 mixed image (``mix|a``, ``mix|b``, logged by
  ``commute_consistency``), one box per series over the (tuple, translation) pairs, with medians.
- *correct vs incorrect* (TC's comparisons): per tuple and image, the perplexity of that image's
  correct translation (x) against its incorrect one (y); above the diagonal TC is right.
- *own vs other image* (IC's comparisons): per tuple and translation, its perplexity with its own
  image (x) against the other image (y); above the diagonal IC is right. A scorer that ignores the
  image puts every point exactly on the diagonal, and the panel says how many points are identical.

A samples file with the same tuple id twice is refused (naming the line): its rows cannot be told apart.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.errors import DataError, HarnessError
from harness.results.jsonl import BadLine, iter_json_lines
from harness.results.records import RESULTS_FILE, ResultRecord, family_of, read_records, role_of

Tables = dict[str, dict[str, float]]  # tuple id -> "image|translation" -> perplexity
Points = list[tuple[float, float]]
TC_DIRECTIONS = (("a", "a", "inc_a"), ("b", "b", "inc_b"))  # (image, its correct translation, its incorrect one)
IC_DIRECTIONS = (("a", "a", "b"), ("b", "b", "a"))  # (translation, its own image, the other image)
# WMT 2024 Figure 3: the correct translation t under the correct image, the incorrect image and the mixed image
FIGURE3_SERIES = (
    ("correct image", lambda t, other: f"{t}|{t}"),
    ("incorrect image", lambda t, other: f"{other}|{t}"),
    ("mixed image", lambda t, other: f"mix|{t}"),
)
FIGURE3_SOURCE = {
    "correct image": "any CoMMuTE task",
    "incorrect image": "commute_ic",
    "mixed image": "commute_consistency",
}


def read_tables(path: Path, tables: Tables | None = None) -> Tables:
    """The finite, positive perplexities of every tuple in a samples file, merged into ``tables``.

    A tuple id seen twice in the file is a ``DataError`` naming both lines.
    """
    tables = {} if tables is None else tables
    seen: dict[str, int] = {}
    for item in iter_json_lines(path):
        if isinstance(item, BadLine):
            raise DataError(str(path), f"not a JSON line ({item})", row=item.line)
        line, sample = item
        ppl = sample.get("ppl") if isinstance(sample, dict) else None
        if not isinstance(ppl, dict) or "id" not in sample:
            raise DataError(str(path), "has no 'id' and 'ppl' (is it a CoMMuTE samples file?)", row=line)
        key = str(sample["id"])
        if key in seen:
            raise DataError(str(path), f"tuple id {key!r} appears twice (first on line {seen[key]})", row=line)
        seen[key] = line
        for slot, value in ppl.items():
            if isinstance(value, (int, float)) and math.isfinite(value) and value > 0:
                tables.setdefault(key, {})[slot] = float(value)
    return tables


def _is_results_file(path: Path) -> bool:
    """Whether the first JSON line of ``path`` is a results line (it has ``task`` and ``signature``) rather than a sample."""
    for item in iter_json_lines(path):
        return not isinstance(item, BadLine) and isinstance(item[1], dict) and {"task", "signature"} <= set(item[1])
    return False


def _is_commute(record: ResultRecord) -> bool:
    return (family_of(record) or ("commute" if role_of(record).startswith("commute_") else None)) == "commute"


def results_runs(results: Path) -> dict[str, Tables]:
    """Per model and setting of a results file: a label and the tables of the latest log of each CoMMuTE task, merged.

    The per-sample files are those the records name (``samples_file``, beside the results file).
    """
    records, _ = read_records(results)
    groups: dict[str, dict[str, ResultRecord]] = {}
    for record in records:
        if record.samples_file and _is_commute(record):
            settings = ",".join(f"{k}={v}" for k, v in sorted(record.task_args.items()) if k != "temperature")
            temperature = record.task_args.get("temperature", 1.0)
            label = f"{record.model.get('name', '?')} ({settings}" + (
                f", T={temperature})" if float(temperature) != 1.0 else ")"
            )
            groups.setdefault(label, {})[role_of(record)] = record  # the latest of each role (a preset's is its base's)
    if not groups:
        raise HarnessError(
            f"{results} has no CoMMuTE record with per-sample logs (run with --log-samples, or pass a samples file)"
        )
    runs: dict[str, Tables] = {}
    for label, latest in sorted(groups.items()):
        tables: Tables = {}
        missing = []
        for record in latest.values():
            samples = results.parent / str(record.samples_file)
            if samples.is_file():
                read_tables(samples, tables)
            else:
                missing.append(f"{str(samples)!r} ({record.task})")
        if missing and not tables:
            raise HarnessError(
                f"{results} names per-sample files that are missing: {', '.join(missing)}; pass a samples file instead"
            )
        for name in missing:
            print(f"harness: warning: {label}: per-sample file {name} is missing; left out", file=sys.stderr)
        runs[label] = tables
    return runs


def run_tables(location: str) -> dict[str, Tables]:
    """Labelled tables: one for a samples file, one per model and setting of a results file or folder."""
    path = Path(location)
    if path.is_dir():
        if not (path / RESULTS_FILE).is_file():
            raise HarnessError(f"{location!r} holds no {RESULTS_FILE}; pass a results file or a samples file")
        return results_runs(path / RESULTS_FILE)
    if not path.is_file():
        raise HarnessError(f"{location!r} is neither a samples file, a results file nor a results folder")
    if _is_results_file(path):
        return results_runs(path)
    return {path.stem: read_tables(path)}


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


def figure3_series(tables: Tables) -> dict[str, list[float]]:
    """WMT 2024 Figure 3's series: per tuple (in id order) and translation (a, then b), the perplexity of the correct
    translation under the correct image, the incorrect image and the mixed image, each where it was logged."""
    series: dict[str, list[float]] = {name: [] for name, _ in FIGURE3_SERIES}
    for key in sorted(tables):
        table = tables[key]
        for translation, other in (("a", "b"), ("b", "a")):
            for name, slot in FIGURE3_SERIES:
                if slot(translation, other) in table:
                    series[name].append(table[slot(translation, other)])
    return series


def _boxes(axes: Any, series: dict[str, list[float]], first: float) -> None:
    """Figure 3's logged series as boxes at ``first``, ``first + 1``, ``first + 2`` (one colour each; quartiles,
    whiskers min to max), every point beside its box."""
    import numpy as np

    names = [name for name, _ in FIGURE3_SERIES]
    drawn = [name for name in names if series[name]]
    if not drawn:
        return
    positions = [first + names.index(name) for name in drawn]
    axes.boxplot(
        [series[n] for n in drawn],
        positions=positions,
        widths=0.5,
        whis=(0, 100),
        showfliers=False,
        medianprops={"color": "black"},
    )
    for position, name in zip(positions, drawn):
        jitter = np.linspace(-0.12, 0.12, len(series[name])) if len(series[name]) > 1 else [0.0]
        axes.scatter(
            [position + j for j in jitter], series[name], s=6, alpha=0.35, color=f"C{names.index(name)}", zorder=3
        )


def _perplexity_axis(axes: Any, values: Sequence[float]) -> None:
    """Log scale when the values span a factor of 10; the label and the grid."""
    from matplotlib import ticker

    if values and max(values) / min(values) >= 10:
        axes.set_yscale("log")
        axes.yaxis.set_major_locator(ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        axes.yaxis.set_minor_formatter(ticker.NullFormatter())
        axes.yaxis.set_major_formatter(ticker.FormatStrFormatter("%g"))
    axes.set_ylabel("perplexity of the correct translation", fontsize=8)
    axes.grid(axis="y", alpha=0.3, which="both", linewidth=0.5)


def _figure3_panel(axes: Any, series: dict[str, list[float]], title: str) -> None:
    """One box per series (quartiles, whiskers min to max; log scale when the values span a factor of 10) over its
    points, its median and count under it."""
    import numpy as np

    names = [name for name, _ in FIGURE3_SERIES]
    values = [v for name in names for v in series[name]]
    axes.set_title(title, fontsize=8)
    if not values:
        axes.text(0.5, 0.5, "no perplexities in the logs", ha="center", va="center", transform=axes.transAxes)
        return
    _boxes(axes, series, 1)
    labels = [
        f"{name}\nmedian {np.median(series[name]):.3g}, n = {len(series[name])}"
        if series[name]
        else f"{name}\nnot logged\n(run {FIGURE3_SOURCE[name]}\nwith --log-samples)"
        for name in names
    ]
    axes.set_xticks(range(1, len(names) + 1), labels, fontsize=7)
    axes.set_xlim(0.4, len(names) + 0.6)
    _perplexity_axis(axes, values)


def figure3_comparison(runs: Mapping[str, Tables], path: Path, title: str) -> None:
    """WMT 2024 Figure 3 for several runs in one panel (the leaderboard's figure per data set, language and setting):
    per run, one box per series (the correct translations under the correct, the incorrect and the mixed image),
    the series' medians under its name. The per-tuple scatters of ``perplexity_figure`` are
    ``harness commute-perplexity``'s."""
    import numpy as np
    from matplotlib.lines import Line2D

    from harness.leaderboard.figures import figure, save

    every = {label: figure3_series(tables) for label, tables in runs.items()}
    names = [name for name, _ in FIGURE3_SERIES]
    with figure(max(6.0, 1.9 * len(runs) + 2.5), 4.6) as fig:
        axes = fig.subplots()
        labels = []
        for index, (label, series) in enumerate(every.items()):
            _boxes(axes, series, 4 * index + 1)
            medians = " / ".join(f"{np.median(series[n]):.3g}" if series[n] else "-" for n in names)
            labels.append(f"{label}\nmedians {medians}\nn = {max(len(v) for v in series.values())}")
        axes.set_xticks([4 * index + 2 for index in range(len(every))], labels, fontsize=7)
        axes.set_xlim(0.2, 4 * len(every) - 0.2)
        _perplexity_axis(axes, [v for series in every.values() for values in series.values() for v in values])
        missing = {n: FIGURE3_SOURCE[n] for n in names if not any(series[n] for series in every.values())}
        handles = [
            Line2D([], [], marker="o", linestyle="", color=f"C{i}", label=n + (" (not logged)" if n in missing else ""))
            for i, n in enumerate(names)
        ]
        axes.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        axes.set_title(title, fontsize=9, wrap=True)
        save(fig, path)


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
        axes.set_title(title, fontsize=8)
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
    axes.set_title(title, fontsize=8)
    axes.legend(fontsize=7, loc="upper left")


def perplexity_figure(runs: Mapping[str, Tables], path: Path, title: str = "CoMMuTE: per-tuple perplexities") -> None:
    """One row per run: WMT 2024 Figure 3 (the correct translations under the correct, the incorrect and the mixed
    image), correct vs incorrect under each image, and each translation under its own vs the other image."""
    from harness.leaderboard.figures import figure, save

    height = 4.4 * len(runs) + 0.4
    with figure(14.0, height, layout=None) as fig:  # a fixed grid: placed here, not measured label by label
        grid = fig.subplots(len(runs), 3, squeeze=False)
        fig.subplots_adjust(
            left=0.075, right=0.99, top=1 - 0.75 / height, bottom=1.05 / height, wspace=0.3, hspace=0.55
        )
        for (label, tables), (first, left, right) in zip(runs.items(), grid):
            _figure3_panel(first, figure3_series(tables), f"{label}\ncorrect translations (WMT 2024, Figure 3)")
            _panel(
                left,
                tc_points(tables),
                "correct translation, with the image",
                "incorrect translation, same image",
                "TC",
                f"{label}\ncorrect vs incorrect translation",
            )
            _panel(
                right,
                ic_points(tables),
                "translation with its own image",
                "same translation, with the other image",
                "IC",
                f"{label}\nown vs other image",
            )
        fig.suptitle(title, fontsize=10)
        save(fig, path)


class PerplexityPlot:
    """The per-tuple perplexity figure of one or more CoMMuTE runs."""

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Runs and the output file."""
        parser.add_argument(
            "results",
            nargs="+",
            help="samples files, results files (results.jsonl) or folders holding one: a row of panels per model "
            "and setting",
        )
        parser.add_argument("-o", "--output", required=True, help="the PNG to write")

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        """Read every run, then write the figure."""
        runs: dict[str, Tables] = {}
        for location in args.results:
            for label, tables in run_tables(location).items():
                if not tables:
                    raise HarnessError(f"{location!r} has no finite perplexities to plot ({label})")
                runs[label if label not in runs else f"{label} ({location})"] = tables
        perplexity_figure(runs, Path(args.output))
        print(f"wrote {args.output}")
        return 0


COMMAND = PerplexityPlot()
