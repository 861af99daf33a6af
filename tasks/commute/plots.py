"""The CoMMuTE family on the leaderboard: its plots.

- ``commute_bars_*``: TC, IC, GTC, GIC per model at temperature 1, one figure per setting; every
  bar carries its value (so 0 is visible), ``n/a`` marks an undefined metric (IC and GIC of a
  scorer that ignores the image), error bars are the intervals over items, dashed: chance.
- ``commute_temperature_*``: the same metrics against the softmax temperature, where swept.
- Of more than 20 models (``PLOTTED_MODELS``), the bars and the sweep show the best 20, their titles say by what.
- ``commute_perplexity_*``: WMT 2024 Figure 3 per data set, language and setting, every logged model in
  one panel: the perplexities of the correct translations under the correct, the incorrect and the
  mixed image. From the per-sample logs of ``commute_tc`` and, in the same setting for the same
  model, ``commute_ic`` and ``commute_consistency`` (``perplexity.py``). The per-tuple scatters of one
  model (correct vs incorrect translation, own vs other image) are ``harness commute-perplexity``'s.
"""

from __future__ import annotations

import itertools
import json
from functools import partial
from pathlib import Path
from typing import Any

from harness.errors import DataError
from harness.leaderboard.figures import (
    PALETTE,
    Part,
    Plot,
    PlotParts,
    bar_figure,
    best_models,
    colours,
    figure,
    file_names,
    inputs_of,
    markers,
    save,
)
from harness.leaderboard.merge import Board, Column, column_labels
from harness.leaderboard.ranking import at_defaults
from harness.leaderboard.tables import dataset_name
from harness.results.load import Entry
from harness.results.metrics import info_of
from harness.results.signature import Signature
from harness_tasks.commute.perplexity import Tables, figure3_comparison, read_tables

FAMILY = "commute"
CONTRASTS = ("commute_tc", "commute_ic", "commute_gtc", "commute_gic")
LINE_STYLES = ("-", "--", ":", "-.")  # one per series of a task when a setting has several
Series = tuple[str, str, Signature]  # a swept series: task, metric, signature but the temperature


def _temperature(column: Column, board: Board) -> float:
    return float(board.example(column).task_args.get("temperature", 1.0))


def _settings(column: Column, board: Board) -> str:
    """The data set and the CoMMuTE arguments of a column except the temperature, as a sort-stable string."""
    example = board.example(column)
    arguments = {k: v for k, v in example.task_args.items() if k != "temperature"}
    return json.dumps({"data": dataset_name(example), **arguments}, sort_keys=True, default=str)


def _settings_title(settings: str) -> str:
    """``<data set>, lang=fr, ...``: the data set first, then the arguments."""
    found = json.loads(settings)
    data = found.pop("data", None)
    return ", ".join(([str(data)] if data else []) + [f"{k}={v}" for k, v in found.items()])


def _short(settings: str) -> str:
    """The data set and language of a setting, for file names."""
    found = json.loads(settings)
    return f"{found.get('data', '')} {found.get('lang', '')}"


def _contrast_groups(board: Board) -> dict[str, list[Column]]:
    groups: dict[str, list[Column]] = {}
    for column in board.columns:
        if column.role in CONTRASTS:
            groups.setdefault(_settings(column, board), []).append(column)
    return dict(sorted(groups.items()))


def _ranked_settings(board: Board, groups: dict[str, list[Column]]) -> dict[str, list[Column]]:
    """Of several settings of one data set and language (``prefix_removal``, ``ties``), the one the family ranks:
    the most task arguments at their defaults (``at_defaults``), then the first. The others are in the family
    page's per-direction tables."""
    chosen: dict[str, str] = {}
    for settings, columns in groups.items():
        where = _short(settings)
        if where not in chosen or at_defaults(board.example(columns[0])) > at_defaults(
            board.example(groups[chosen[where]][0])
        ):
            chosen[where] = settings
    return {settings: groups[settings] for settings in chosen.values()}


def _display(board: Board, column: Column) -> str:
    """The metric's display name; an older line without one shows its name in capitals (``tc`` -> ``TC``)."""
    display = info_of(board.example(column), column.metric).display
    return display.upper() if display == column.metric else display


def bar_plots(board: Board, folder: Path) -> list[Plot]:
    """TC, IC, GTC, GIC per model at temperature 1, one figure per setting (language, ties, ...)."""
    groups = {s: [c for c in cols if _temperature(c, board) == 1.0] for s, cols in _contrast_groups(board).items()}
    groups = _ranked_settings(board, {s: cols for s, cols in groups.items() if cols})
    plots = []
    for (settings, columns), name in zip(
        groups.items(),
        file_names("commute_bars", [_short(s) for s in groups]),
    ):
        keys = [k for k in board.labels if any((k, c) in board.cells for c in columns)]
        bar_figure(
            board,
            keys,
            columns,
            [_display(board, c) for c in columns],
            folder / name,
            title=f"CoMMuTE per model ({_settings_title(settings)})",
            ylabel="rate",
        )
        plots.append(Plot(FAMILY, f"CoMMuTE TC/IC/GTC/GIC per model ({_settings_title(settings)})", name))
    return plots


def _series_order(key: Series) -> tuple[str, str, str]:
    """Series in the order of their task, metric and signature text."""
    return key[0], key[1], str(key[2])


def sweep_plots(board: Board, folder: Path) -> list[Plot]:
    """The contrastive metrics against the temperature, where a setting was run at two or more temperatures; of
    more than ``PLOTTED_MODELS`` models, the best by the mean of their points (``best_models``)."""
    sweeps = []
    for settings, columns in _contrast_groups(board).items():
        series: dict[Series, list[Column]] = {}
        for column in columns:
            series.setdefault((column.role, column.metric, column.signature.without_args("temperature")), []).append(
                column
            )
        swept = {key: cols for key, cols in series.items() if len({_temperature(c, board) for c in cols}) > 1}
        if swept:
            sweeps.append((settings, swept))
    plots = []
    palette = colours(board)
    # past as many models as colours, two share one: each its own marker (as in the scatter), not the same circle
    shapes = markers(board) if len(board.labels) > len(PALETTE) else dict.fromkeys(board.labels, "o")
    for (settings, swept), name in zip(sweeps, file_names("commute_temperature", [_short(s) for s, _ in sweeps])):
        labels = column_labels(swept)
        tasks = [t for t in CONTRASTS if any(key[0] == t for key in swept)]
        points = {key: _points(board, cols) for key, cols in swept.items()}
        signs = {key: info_of(board.example(cols[0]), key[1]).rank_sign for key, cols in swept.items()}
        keys, shown = best_models(
            board,
            [model for model in board.labels if any(model in drawn for drawn in points.values())],
            partial(_mean_point, points, signs),
            "their mean over the temperatures and metrics",
        )
        legend: dict[str, Any] = {}
        with figure(3.6 * len(tasks) + 2.5, 4.0) as fig:
            for axes, task in zip(fig.subplots(1, len(tasks), squeeze=False)[0], tasks):
                lines = sorted(((k, v) for k, v in swept.items() if k[0] == task), key=lambda kv: _series_order(kv[0]))
                for style, (key, _) in zip(itertools.cycle(LINE_STYLES), lines):
                    suffix = labels[key][len(f"{task} {key[1]}") :]
                    for model in (model for model in keys if model in points[key]):
                        (line,) = axes.plot(
                            *zip(*points[key][model]), style, marker=shapes[model], color=palette[model]
                        )
                        legend.setdefault(board.labels[model] + suffix, line)
                axes.set_title(task, fontsize=9)
                axes.set_xlabel("temperature T")
                axes.grid(alpha=0.3)
            if legend:
                fig.legend(list(legend.values()), list(legend), loc="outside right upper", fontsize=7)
            title = f"CoMMuTE under temperature scaling ({_settings_title(settings)})"
            fig.suptitle(f"{title}\n{shown}" if shown else title, fontsize=10)
            save(fig, folder / name)
        plots.append(Plot(FAMILY, f"CoMMuTE metrics against the temperature ({_settings_title(settings)})", name))
    return plots


def _mean_point(
    points: dict[Series, dict[str, list[tuple[float, float]]]], signs: dict[Series, float], model: str
) -> float | None:
    """A model's mean value over its points of every series (each turned so that higher is better)."""
    values = [signs[key] * v for key, drawn in points.items() if model in drawn for _, v in drawn[model]]
    return sum(values) / len(values) if values else None


def _points(board: Board, columns: list[Column]) -> dict[str, list[tuple[float, float]]]:
    """Per model, in the board's order, its (temperature, value) points of one series, by temperature."""
    found: dict[str, list[tuple[float, float]]] = {}
    for model in board.labels:
        values = sorted(
            (_temperature(c, board), board.cells[model, c].record.metrics.get(c.metric))
            for c in columns
            if (model, c) in board.cells
        )
        if defined := [(t, v) for t, v in values if v is not None]:
            found[model] = defined
    return found


def _log_tables(entry: Entry) -> Tables:
    """The perplexity tables of a run's per-sample log ({} without a readable one)."""
    record = entry.record
    path = entry.source.parent / record.samples_file if record.samples_file else None
    try:
        return read_tables(path) if path is not None and path.is_file() else {}
    except DataError:
        return {}


def _perplexity_parts(board: Board) -> list[Part]:
    """Per data set, language and setting with a TC per-sample log: WMT 2024 Figure 3 for every model logged there
    in one panel (each model's incorrect- and mixed-image series from its ``commute_ic`` / ``commute_consistency``
    logs in the same setting), each figure drawn on its own and kept between builds while its lines are unchanged."""
    settings: dict[str, list[Column]] = {}
    for column in board.columns:
        if column.role == "commute_tc" and _temperature(column, board) == 1.0:
            settings.setdefault(_settings(column, board), []).append(column)
    columns = [column for found in _ranked_settings(board, dict(sorted(settings.items()))).values() for column in found]
    found = {
        column: keys
        for column in columns
        if (
            keys := [
                k for k in board.labels if (k, column) in board.cells and _log_tables(board.cells[k, column].entry)
            ]
        )
    }
    names = file_names("commute_perplexity", [_short(_settings(c, board)) for c in found])
    parts = []
    for (column, keys), name in zip(found.items(), names):
        others = [
            other
            for other in board.columns
            if other.role in ("commute_ic", "commute_consistency")
            and _settings(other, board) == _settings(column, board)
            and _temperature(other, board) == 1.0
        ]
        results = {key: [board.cells[key, c] for c in (column, *others) if (key, c) in board.cells] for key in keys}
        inputs = (
            inputs_of(*(r for found_results in results.values() for r in found_results))
            + "\n"
            + "\n".join(board.labels[k] for k in keys)
            + f"\n{name}"
        )
        parts.append(Part(inputs, partial(_perplexity_plot, board, column, results, name)))
    return parts


def _perplexity_plot(
    board: Board, column: Column, results: dict[str, list[Any]], name: str, folder: Path
) -> list[Plot]:
    settings = _settings_title(_settings(column, board))
    runs: dict[str, Tables] = {}
    for key, found in results.items():
        tables = runs.setdefault(board.labels[key], {})
        for result in found:
            for tuple_id, table in _log_tables(result.entry).items():
                tables.setdefault(tuple_id, {}).update(table)
    title = f"CoMMuTE: perplexity of the correct translations per model ({settings}; WMT 2024, Figure 3)"
    figure3_comparison(runs, folder / name, title)
    return [Plot(FAMILY, f"CoMMuTE perplexities of the correct translations under each image ({settings})", name)]


perplexity_plots = PlotParts(_perplexity_parts, "perplexity_plots")


PLOTS = (bar_plots, sweep_plots, perplexity_plots)
