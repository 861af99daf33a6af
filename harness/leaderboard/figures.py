"""What every plot shares: the figure (default style), PNG saving without a version stamp,
file names, one colour and marker per model, the best models of a crowded figure, a legend that
never covers the data, error bars from the recorded intervals, chance lines, and a column's description.

Family plot modules (registered with ``register_families``) build on these."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from harness.errors import HarnessError
from harness.leaderboard.families import Family
from harness.leaderboard.merge import Board, Column, Result
from harness.leaderboard.models import controls
from harness.results.load import Entry
from harness.results.metrics import info_of, interval_of
from harness.results.records import ResultRecord

MAX_INCHES = 30.0  # at 100 dpi; many models make wide figures, capped here
LEGEND_MODELS = 20  # a legend names each model up to this many (as many as the palette tells apart); beyond, none
PLOTTED_MODELS = LEGEND_MODELS  # a figure of one mark per model shows the best this many (``best_models``)


@dataclass(frozen=True)
class Plot:
    """A written plot: the family it illustrates, a title for links, the file name in ``plots/``, and the key of
    the drawing that made it (set by the leaderboard: ``plots``)."""

    family: str
    title: str
    file: str
    key: str = ""


@dataclass(frozen=True)
class Part:
    """One drawing of a plot function made of parts: ``inputs`` names everything it reads (results lines'
    signatures and start times, labels), so an unchanged part is taken from the previous board, not redrawn."""

    inputs: str
    draw: Callable[[Path], list[Plot]]


@dataclass(frozen=True)
class PlotParts:
    """A plot function whose plots are drawn (and kept between builds) part by part: ``parts(board)``.

    Called as a plain plot function (``function(board, folder)``) it draws every part."""

    parts: Callable[[Board], list[Part]]
    name: str

    @property
    def __name__(self) -> str:  # named like the function it stands for in warnings
        return self.name

    def __call__(self, board: Board, folder: Path) -> list[Plot]:
        return [plot for part in self.parts(board) for plot in part.draw(folder)]


RUN_FIELDS = frozenset({"started", "wall_seconds", "environment", "hardware"})  # when and where: no plot shows them


def inputs_of(*results: Result | ResultRecord) -> str:
    """What a plot reads of results, as text for its key: each line's content but when and where it ran (a rerun
    that reproduces a result keeps its plots), and, for a result with a per-sample log, the log's SHA-256."""
    return "\n".join(_content(found) for found in results)


def contents_of(board: Board) -> dict[int, str]:
    """Each result's content (``inputs_of``) by the result's id, filled as it is asked for and kept with the board
    (which holds the results): the plots' keys and the kept pages' read the same results."""
    return board.once("contents", lambda _: {})


def inputs_in(contents: dict[int, str], results: Iterable[Result]) -> str:
    """``inputs_of(*results)``, each result's content taken from ``contents`` where it was worked out before."""
    texts = []
    for result in results:
        text = contents.get(id(result))
        if text is None:
            text = contents[id(result)] = _content(result)
        texts.append(text)
    return "\n".join(texts)


def family_inputs(board: Board, family: Family) -> str:
    """What a family's plain plot function or sections function may read, as text for its key: the family's current
    results (``inputs_in``), and the model order (colours)."""
    results = sorted(
        (r for (_, column), r in board.cells.items() if column.family == family), key=lambda r: r.record.signature
    )
    return inputs_in(contents_of(board), results) + "\n" + "\n".join(board.labels.values())


def _content(found: Result | ResultRecord) -> str:
    record = found.record if isinstance(found, Result) else found
    data = {name: value for name, value in vars(record).items() if name not in RUN_FIELDS}
    try:
        text = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # an integer past 64 bits, a key that is not text (a line built in code)
        try:
            text = json.dumps(data, sort_keys=True, default=str).encode()
        except TypeError:  # keys of several types cannot be sorted
            text = repr(data).encode()
    log = _log_digest(found.entry) if isinstance(found, Result) and record.samples_file else ""
    return f"{record.signature} {hashlib.sha256(text).hexdigest()[:32]} {log}"


def _log_digest(entry: Entry) -> str:
    """The SHA-256 of a result's per-sample log (empty when it cannot be read)."""
    from harness.results.samples import samples_path

    try:
        return hashlib.sha256(samples_path(entry).read_bytes()).hexdigest()[:32]
    except (HarnessError, OSError):
        return ""


def describe(column: Column, board: Board) -> str:
    """The dataset (its loader), direction, split and language of a column, from any of its records."""
    example = board.example(column)
    args = example.task_args
    direction = f"{args['src']}-{args['tgt']}" if "src" in args and "tgt" in args else None
    parts = [example.dataset.get("loader") or args.get("dataset"), direction, args.get("split"), args.get("lang")]
    return " ".join(str(p) for p in parts if p is not None) or column.role


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
def figure(width: float, height: float, layout: Literal["constrained"] | None = "constrained") -> Iterator[Any]:
    """A figure under matplotlib's default style, whatever the user's matplotlibrc says; ``layout=None`` for one
    that places its axes itself (constrained layout measures every label first: half the drawing time of a
    grid of panels)."""
    import matplotlib.style
    from matplotlib.figure import Figure

    with matplotlib.style.context("default"):
        yield Figure(figsize=(min(width, MAX_INCHES), min(height, MAX_INCHES)), layout=layout)


def save(figure: Any, path: str | Path, dpi: int = 100) -> None:
    """Write a PNG with no ``Software`` entry (it would carry matplotlib's version), so it regenerates byte for byte."""
    figure.savefig(path, format="png", dpi=dpi, metadata={"Software": None})


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "h")
# twenty colours told apart at a glance: matplotlib's tab10, then ten others (Dark2 and a few more)
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#000000", "#e6ab02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#0b3d91", "#f4a6a6", "#5ab4ac",
)  # fmt: skip


def colours(board: Board) -> dict[str, str]:
    """One colour per model, keyed on the board's model order, so a model has it in every plot of the page;
    distinct for up to 20 models (beyond, the marker tells models apart)."""
    return {key: PALETTE[index % len(PALETTE)] for index, key in enumerate(board.labels)}


def markers(board: Board) -> dict[str, str]:
    """One marker per model, keyed like ``colours``; with the colour, unique for up to 180 models."""
    return {key: MARKERS[index % len(MARKERS)] for index, key in enumerate(board.labels)}  # 20 and 9: lcm 180


def best_models(
    board: Board, keys: Sequence[str], score: Callable[[str], float | None], by: str
) -> tuple[list[str], str]:
    """The models a figure of one mark per model shows, in the order given, and what its title says of them.

    Up to ``PLOTTED_MODELS`` models: all, and nothing to say. Beyond: the ``PLOTTED_MODELS`` best by ``score``
    (higher is better; None: no score, never shown), equal scores by label; controls are never among the best.
    ``by`` names the score in the title: ``best 20 of 270 models by <by>; every model is in the tables``."""
    if len(keys) <= PLOTTED_MODELS:
        return list(keys), ""
    left_out = controls(board)
    scored = {key: value for key in keys if key not in left_out and (value := score(key)) is not None}
    best = set(sorted(scored, key=lambda key: (-scored[key], board.labels[key]))[:PLOTTED_MODELS])
    shown = [key for key in keys if key in best]
    controlled = " (controls left out)" if any(key in left_out for key in keys) else ""
    return shown, f"best {len(shown)} of {len(keys)} models by {by}{controlled}; every model is in the tables"


def mean_score(
    board: Board, columns: Sequence[Column], names: Sequence[str]
) -> tuple[Callable[[str], float | None], str]:
    """For ``best_models``: a model's mean of its defined values in the columns (named ``names``), each turned so
    that higher is better (a metric with no direction is left out, unless none has one), and what it is called."""
    signs = [info_of(board.example(column), column.metric).rank_sign for column in columns]
    if not any(signs):  # no column is a score: the highest values
        signs = [1.0] * len(columns)
    ranked = [(column, sign) for column, sign in zip(columns, signs) if sign]

    def score(key: str) -> float | None:
        values = [
            sign * value
            for column, sign in ranked
            if (found := board.cells.get((key, column))) is not None
            and (value := found.record.metrics.get(column.metric)) is not None
            and math.isfinite(value)
        ]
        return sum(values) / len(values) if values else None

    named = [name for name, sign in zip(names, signs) if sign]
    lower = [name for name, sign in zip(names, signs) if sign < 0]
    if len(named) == 1:
        return score, named[0] + (" (lower is better)" if lower else "")
    return score, f"the mean of {', '.join(named)}" + (f" ({', '.join(lower)}: lower is better)" if lower else "")


def legend_outside(figure: Any, axes: Any, title: str = "model") -> None:
    """The axes' legend to the right of the plot, where it cannot cover points or labels."""
    handles, labels = axes.get_legend_handles_labels()
    if handles:
        figure.legend(handles, labels, loc="outside right center", fontsize=8, title=title, title_fontsize=8)


def error_of(record: ResultRecord, metric: str) -> tuple[float, float]:
    """Distances below and above the value for an error bar: the interval over items when recorded,
    else the std over seeds, else none."""
    value = record.metrics.get(metric)
    interval = interval_of(record, metric)
    if value is None:
        return 0.0, 0.0
    if interval is not None:
        return max(value - interval[0], 0.0), max(interval[1] - value, 0.0)
    std = record.metrics_std.get(metric) if len(record.seeds) > 1 else None
    return (std, std) if std else (0.0, 0.0)


def error_label(records: Sequence[ResultRecord], metric: str) -> str:
    """What the error bars of these records show."""
    if any(interval_of(r, metric) for r in records):
        confidence = next((c for r in records if (i := interval_of(r, metric)) and (c := i[2])), None)
        return f"bars: {confidence:.0%} interval over items" if confidence else "bars: interval over items"
    if any(len(r.seeds) > 1 for r in records):
        return "bars: std over seeds"
    return "no interval recorded"


def chance_line(axes: Any, record: ResultRecord, metric: str, vertical: bool = False, name: str = "") -> None:
    """A dashed grey line at the metric's chance level, when the results line gives one (``name``: whose)."""
    chance = info_of(record, metric).chance
    if chance is None:
        return
    line = axes.axvline if vertical else axes.axhline
    line(
        chance,
        color="grey",
        linestyle="--",
        linewidth=0.9,
        label=f"chance{' ' + name if name else ''} ({chance:.3g})",
        zorder=1,
    )


def models_with(board: Board, *columns: Column) -> list[str]:
    """The models (keys) with a cell in every one of the columns."""
    return [key for key in board.labels if all((key, c) in board.cells for c in columns)]


def grouped_bars(axes: Any, board: Board, keys: Sequence[str], columns: Sequence[Column], names: Sequence[str]) -> None:
    """A group of bars per model, one bar per column, each labelled with its value (a value of 0 is a
    visible line at the baseline), ``n/a`` where the metric is undefined, error bars from the
    intervals, and a dashed line per chance level. Past ``LEGEND_MODELS`` models the values are not
    written (they would overlap; the tables hold them) and the names stand upright."""
    crowded = len(keys) > LEGEND_MODELS
    from matplotlib.patches import Rectangle

    width = 0.8 / max(len(columns), 1)
    for index, (column, name) in enumerate(zip(columns, names)):
        colour = f"C{index % 10}"
        xs, values, errors = [], [], []
        for position, key in enumerate(keys):
            result = board.cells.get((key, column))
            if result is None:
                continue
            x = position + (index - (len(columns) - 1) / 2) * width
            value = result.record.metrics.get(column.metric)
            if value is None:
                axes.text(
                    x, 0.02, "n/a", rotation=90, ha="center", va="bottom", fontsize=8, color=colour, fontweight="bold"
                )
                continue
            low, high = error_of(result.record, column.metric)
            xs.append(x)
            values.append(value)
            errors.append((low, high))
            if not crowded:
                axes.text(x, value + high + 0.015, f"{value:.2f}", ha="center", va="bottom", fontsize=7, rotation=90)
        yerr = [[e[0] for e in errors], [e[1] for e in errors]] if any(any(e) for e in errors) else None
        if crowded:
            _many_bars(axes, xs, values, width * 0.9, colour, yerr)
        else:
            axes.bar(
                xs,
                values,
                width * 0.9,
                color=colour,
                edgecolor=colour,
                linewidth=1.5,
                yerr=yerr,
                capsize=2,
                ecolor="black",
            )
        axes.add_patch(
            Rectangle((0, 0), 0, 0, color=colour, label=name)
        )  # the legend entry, even when every value is n/a
    levels: dict[float, list[str]] = {}
    for column, name in zip(columns, names):
        chance = info_of(board.example(column), column.metric).chance
        if chance is not None:
            levels.setdefault(chance, []).append(name)
    for level, named in sorted(levels.items()):
        whose = "" if len(levels) == 1 else " " + ", ".join(named)  # one level: it is every column's
        axes.axhline(level, color="grey", linestyle="--", linewidth=0.9, zorder=0, label=f"chance{whose} ({level:.3g})")
    axes.set_xticks(
        range(len(keys)),
        [board.labels[k] for k in keys],
        rotation=90 if crowded else 20,
        ha="center" if crowded else "right",
        fontsize=7 if crowded else 8,
    )
    axes.set_xlim(-0.6, len(keys) - 0.4)
    axes.grid(axis="y", alpha=0.3)


def _many_bars(
    axes: Any, xs: list[float], values: list[float], width: float, colour: str, yerr: list[list[float]] | None
) -> None:
    """``axes.bar`` as one collection of bars (and its error bars as ``bar`` draws them): a thousand
    rectangles, each its own artist, are what made the bar charts of hundreds of models slow."""
    from matplotlib.collections import PolyCollection

    half = width / 2
    bars = PolyCollection(
        [[(x - half, 0.0), (x - half, v), (x + half, v), (x + half, 0.0)] for x, v in zip(xs, values)],
        facecolors=colour,
        edgecolors=colour,
        linewidths=1.5,
    )
    bars.sticky_edges.y.append(0.0)  # as bars: no margin below the baseline
    axes.add_collection(bars)
    if yerr is not None:
        axes.errorbar(xs, values, yerr=yerr, fmt="none", ecolor="black", capsize=2)
    axes.autoscale_view()


def bar_figure(
    board: Board,
    keys: Sequence[str],
    columns: Sequence[Column],
    names: Sequence[str],
    path: Path,
    *,
    title: str,
    ylabel: str,
    legend: str = "metric",
) -> None:
    """One figure of ``grouped_bars`` (scores in [0, 1], room above for the values), titled, with its legend beside
    it; of more than ``PLOTTED_MODELS`` models, the best by the mean of the columns (``best_models``)."""
    keys, shown = best_models(board, keys, *mean_score(board, columns, names))
    with figure(max(6.0, 3.0 + 0.35 * len(keys) * max(len(columns), 2)), 3.8) as fig:
        axes = fig.subplots()
        grouped_bars(axes, board, keys, columns, names)
        axes.set_ylim(min(0.0, axes.get_ylim()[0]), 1.12)
        axes.set_ylabel(f"{ylabel} (value above each bar)")
        fig.suptitle(f"{title}\n{shown}" if shown else title, fontsize=9)
        legend_outside(fig, axes, title=legend)
        # constrained layout once more before the drawing: its two passes leave the first slanted name a few pixels
        # outside the figure (the axes narrow in the second, which moves the ticks), a third puts it inside
        fig.get_layout_engine().execute(fig)
        save(fig, path)


def table_bar_plots(board: Board, folder: Path, family: str, prefix: str, title: str, ylabel: str) -> list[Plot]:
    """A bar figure per table of ``family`` (one per data set and direction): each column's value per model (of
    more than ``PLOTTED_MODELS``, the best: ``bar_figure``)."""
    from harness.leaderboard.tables import family_tables

    tables = [t for t in family_tables(board) if t.family.name == family]
    plots = []
    for table, name in zip(tables, file_names(prefix, [t.title for t in tables])):
        keys = [k for k in board.labels if any((k, c) in board.cells for c in table.columns)]
        bar_figure(
            board, keys, table.columns, table.headers, folder / name, title=f"{title}: {table.title}", ylabel=ylabel
        )
        plots.append(Plot(family, f"{title}: {table.title}", name))
    return plots
