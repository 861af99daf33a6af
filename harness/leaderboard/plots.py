"""The plots (PNG, matplotlib, byte-identical for the same inputs).

- ``bkr_vs_xlr_*``: BackRetrieval against XLR, one point per model, for each XLR column whose
  BackRetrieval twin has the same signature; the title gives the meta-correlation (per-seed
  Pearson and Spearman across models, mean ± std over seeds).
- ``bkr_boxplots``: per language pair (BackRetrieval column), the per-seed values of each model.
- ``commute_bars_*``: TC, IC, GTC, GIC per model at the default temperature, per setting.
- ``commute_temperature_*``: the same metrics against the softmax temperature, where swept.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.leaderboard.merge import Board, Column, column_labels

PREFIXES = ("bkr_vs_xlr", "bkr_boxplots", "commute_bars", "commute_temperature")
CONTRASTS = ("commute_tc", "commute_ic", "commute_gtc", "commute_gic")
MIN_MODELS = 3
MAX_INCHES = 30.0  # at 100 dpi; many models make wide figures, capped here


@dataclass(frozen=True)
class Plot:
    """A written plot: the family it illustrates, a title for links, the file name in ``plots/``."""

    family: str
    title: str
    file: str


@dataclass(frozen=True)
class Correlation:
    """Mean and sample std over seeds of a per-seed correlation across models."""

    mean: float
    std: float
    seeds: int

    def __str__(self) -> str:
        return f"{self.mean:.3f} ± {self.std:.3f}"


def _summary(values: list[float]) -> Correlation | None:
    if not values:
        return None
    return Correlation(float(np.mean(values)), float(np.std(values, ddof=1)) if len(values) > 1 else 0.0, len(values))


def meta_correlation(x: np.ndarray, y: np.ndarray) -> tuple[Correlation | None, Correlation | None]:
    """Pearson and Spearman of x with y across models (rows), per seed (columns); NaN is undefined.

    A seed counts when every model has both values there, there are at least three models, and
    neither side is constant.
    """
    from scipy.stats import rankdata

    pearson, spearman = [], []
    if x.shape[0] >= MIN_MODELS:
        for a, b in zip(x.T, y.T):
            if np.isnan(a).any() or np.isnan(b).any() or np.ptp(a) == 0 or np.ptp(b) == 0:
                continue
            pearson.append(float(np.corrcoef(a, b)[0, 1]))
            spearman.append(float(np.corrcoef(rankdata(a), rankdata(b))[0, 1]))
    return _summary(pearson), _summary(spearman)


def _per_seed(board: Board, key: str, column: Column) -> list[float]:
    values = board.cells[key, column].record.per_seed.get(column.metric, [])
    return [math.nan if v is None else v for v in values]


def _describe(column: Column, board: Board) -> str:
    """The dataset, direction and split of a column, from any of its records."""
    args = board.example(column).task_args
    direction = f"{args['src']}-{args['tgt']}" if "src" in args and "tgt" in args else None
    parts = [args.get("dataset"), direction, args.get("split"), args.get("lang")]
    return " ".join(str(p) for p in parts if p is not None) or column.task


def _names(prefix: str, descriptions: Sequence[str]) -> list[str]:
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
def _figure(width: float, height: float) -> Iterator[Any]:
    """A figure under matplotlib's default style, whatever the user's matplotlibrc says."""
    import matplotlib.style
    from matplotlib.figure import Figure

    with matplotlib.style.context("default"):
        yield Figure(figsize=(min(width, MAX_INCHES), min(height, MAX_INCHES)), layout="constrained")


def _save(figure: Any, path: Path) -> None:
    figure.savefig(path, format="png", dpi=100, metadata={"Software": None})


def _colours(board: Board) -> dict[str, str]:
    """One colour per model, the same in every plot."""
    return {key: f"C{index % 10}" for index, key in enumerate(board.labels)}


def _models_with(board: Board, *columns: Column) -> list[str]:
    return [key for key in board.labels if all((key, c) in board.cells for c in columns)]


def _twins(board: Board) -> list[tuple[Column, Column]]:
    """(XLR, BackRetrieval) columns whose signatures are equal but for the task, with a model in both."""
    pairs = []
    for xlr in (c for c in board.columns if c.task == "xlr"):
        twin = board.column_of("backretrieval", "backretrieval" + xlr.task_signature[len("xlr"):])
        if twin is not None and _models_with(board, xlr, twin):
            pairs.append((xlr, twin))
    return pairs


def _meta_title(board: Board, keys: list[str], xlr: Column, bkr: Column) -> str:
    x = np.array([_per_seed(board, k, xlr) for k in keys], dtype=float)
    y = np.array([_per_seed(board, k, bkr) for k in keys], dtype=float)
    pearson, spearman = meta_correlation(x, y)
    if pearson is None or spearman is None:
        return f"meta-correlation undefined (needs at least {MIN_MODELS} models and varying values)"
    return f"meta-correlation over {pearson.seeds} seeds: Pearson r = {pearson}, Spearman ρ = {spearman}"


def scatter_plots(board: Board, folder: Path) -> list[Plot]:
    """BackRetrieval against XLR (mean ± std over seeds), one point per model, per pair of twin columns."""
    pairs = _twins(board)
    colours = _colours(board)
    plots = []
    for (xlr, bkr), name in zip(pairs, _names("bkr_vs_xlr", [_describe(x, board) for x, _ in pairs])):
        keys = _models_with(board, xlr, bkr)
        cells = [(k, board.cells[k, xlr].record, board.cells[k, bkr].record) for k in keys]
        cells = [(k, rx, ry) for k, rx, ry in cells if rx.metrics.get(xlr.metric) is not None and ry.metrics.get(bkr.metric) is not None]
        x = [rx.metrics[xlr.metric] for _, rx, _ in cells]
        y = [ry.metrics[bkr.metric] for _, _, ry in cells]
        description = _describe(xlr, board)
        with _figure(7, 5.5) as figure:
            axes = figure.subplots()
            axes.errorbar(x, y, xerr=[rx.metrics_std.get(xlr.metric) or 0.0 for _, rx, _ in cells],
                          yerr=[ry.metrics_std.get(bkr.metric) or 0.0 for _, _, ry in cells], fmt="none",
                          ecolor=[colours[k] for k, _, _ in cells], elinewidth=1)
            axes.scatter(x, y, c=[colours[k] for k, _, _ in cells], zorder=3)
            for (key, _, _), x_value, y_value in zip(cells, x, y):
                axes.annotate(board.labels[key], (x_value, y_value), textcoords="offset points", xytext=(4, 4), fontsize=8)
            axes.set_title(f"BkR vs XLR: {description}, {len(keys)} models\n{_meta_title(board, keys, xlr, bkr)}", fontsize=9)
            axes.set_xlabel(f"XLR {xlr.metric} (mean ± std over seeds)")
            axes.set_ylabel(f"BackRetrieval {bkr.metric} (mean ± std over seeds)")
            axes.grid(alpha=0.3)
            _save(figure, folder / name)
        plots.append(Plot("retrieval", f"BkR vs XLR: {description}", name))
    return plots


def box_plots(board: Board, folder: Path) -> list[Plot]:
    """One panel per BackRetrieval column: a box of per-seed values per model."""
    columns = [c for c in board.columns if c.task == "backretrieval"]
    if not columns:
        return []
    widest = max(len(_models_with(board, c)) for c in columns)
    with _figure(max(6.0, 1.0 + 0.9 * widest), 3.2 * len(columns)) as figure:
        for axes, column in zip(figure.subplots(len(columns), 1, squeeze=False)[:, 0], columns):
            keys = _models_with(board, column)
            data = [[v for v in _per_seed(board, k, column) if not math.isnan(v)] for k in keys]
            axes.boxplot(data)
            axes.set_xticks(range(1, len(keys) + 1), [board.labels[k] for k in keys], rotation=20, ha="right", fontsize=8)
            axes.set_title(f"BackRetrieval per seed: {_describe(column, board)} ({column.label})", fontsize=9)
            axes.set_ylabel(column.metric)
            axes.grid(axis="y", alpha=0.3)
        name = "bkr_boxplots.png"
        _save(figure, folder / name)
    return [Plot("retrieval", "BackRetrieval per seed, per language pair and model", name)]


def _temperature(column: Column, board: Board) -> float:
    return float(board.example(column).task_args.get("temperature", 1.0))


def _settings(column: Column, board: Board) -> str:
    """The CoMMuTE arguments of a column except the temperature, as a sort-stable string."""
    return json.dumps({k: v for k, v in board.example(column).task_args.items() if k != "temperature"}, sort_keys=True, default=str)


def _settings_title(settings: str) -> str:
    return ", ".join(f"{k}={v}" for k, v in json.loads(settings).items())


def _contrast_groups(board: Board) -> dict[str, list[Column]]:
    groups: dict[str, list[Column]] = {}
    for column in board.columns:
        if column.task in CONTRASTS:
            groups.setdefault(_settings(column, board), []).append(column)
    return dict(sorted(groups.items()))


def bar_plots(board: Board, folder: Path) -> list[Plot]:
    """TC, IC, GTC, GIC per model at temperature 1, one figure per setting (language, ties, ...)."""
    groups = {s: [c for c in cols if _temperature(c, board) == 1.0] for s, cols in _contrast_groups(board).items()}
    groups = {s: cols for s, cols in groups.items() if cols}
    plots = []
    for (settings, columns), name in zip(groups.items(), _names("commute_bars", [json.loads(s).get("lang", "") for s in groups])):
        keys = [k for k in board.labels if any((k, c) in board.cells for c in columns)]
        width = 0.8 / len(columns)
        with _figure(max(6.0, 1.5 + 1.1 * len(keys)), 4.5) as figure:
            axes = figure.subplots()
            for index, column in enumerate(columns):
                values = [board.cells[k, column].record.metrics.get(column.metric) if (k, column) in board.cells else None
                          for k in keys]
                positions = [i + (index - (len(columns) - 1) / 2) * width for i in range(len(keys))]
                axes.bar([p for p, v in zip(positions, values) if v is not None], [v for v in values if v is not None],
                         width, label=column.label)
            axes.set_xticks(range(len(keys)), [board.labels[k] for k in keys], rotation=20, ha="right", fontsize=8)
            axes.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
            axes.set_ylim(0, 1)
            axes.set_ylabel("score (chance: 0.5 for TC and IC)")
            axes.set_title(f"CoMMuTE per model ({_settings_title(settings)})", fontsize=9)
            axes.legend(fontsize=7)
            _save(figure, folder / name)
        plots.append(Plot("commute", f"CoMMuTE TC/IC/GTC/GIC per model ({_settings_title(settings)})", name))
    return plots


def _without_temperature(signature: str) -> str:
    return "|".join(part for part in signature.split("|") if not part.startswith("temperature:"))


def sweep_plots(board: Board, folder: Path) -> list[Plot]:
    """The contrastive metrics against the temperature, where a setting was run at two or more temperatures."""
    sweeps = []
    for settings, columns in _contrast_groups(board).items():
        series: dict[tuple[str, str, str], list[Column]] = {}
        for column in columns:
            series.setdefault((column.task, column.metric, _without_temperature(column.task_signature)), []).append(column)
        swept = {key: cols for key, cols in series.items() if len({_temperature(c, board) for c in cols}) > 1}
        if swept:
            sweeps.append((settings, swept))
    plots = []
    colours = _colours(board)
    for (settings, swept), name in zip(sweeps, _names("commute_temperature", [json.loads(s).get("lang", "") for s, _ in sweeps])):
        labels = column_labels(swept)
        tasks = [t for t in CONTRASTS if any(key[0] == t for key in swept)]
        legend: dict[str, Any] = {}
        with _figure(3.6 * len(tasks) + 2.5, 4.0) as figure:
            for axes, task in zip(figure.subplots(1, len(tasks), squeeze=False)[0], tasks):
                for key, cols in ((k, v) for k, v in swept.items() if k[0] == task):
                    suffix = labels[key][len(f"{task} {key[1]}"):]
                    styles = ["-", "--", ":", "-."]
                    style = styles[sorted(k for k in swept if k[0] == task).index(key) % len(styles)]
                    for model in board.labels:
                        points = sorted((_temperature(c, board), board.cells[model, c].record.metrics.get(c.metric))
                                        for c in cols if (model, c) in board.cells)
                        points = [(t, v) for t, v in points if v is not None]
                        if points:
                            (line,) = axes.plot(*zip(*points), style, marker="o", color=colours[model])
                            legend.setdefault(board.labels[model] + suffix, line)
                axes.set_title(task, fontsize=9)
                axes.set_xlabel("temperature T")
                axes.grid(alpha=0.3)
            figure.legend(list(legend.values()), list(legend), loc="outside right upper", fontsize=7)
            figure.suptitle(f"CoMMuTE under temperature scaling ({_settings_title(settings)})", fontsize=10)
            _save(figure, folder / name)
        plots.append(Plot("commute", f"CoMMuTE metrics against the temperature ({_settings_title(settings)})", name))
    return plots


def write_plots(board: Board, folder: Path) -> list[Plot]:
    """Write every plot the board supports into ``folder``; remove earlier plots no longer produced."""
    folder.mkdir(parents=True, exist_ok=True)
    plots = scatter_plots(board, folder) + box_plots(board, folder) + bar_plots(board, folder) + sweep_plots(board, folder)
    keep = {p.file for p in plots}
    for old in folder.glob("*.png"):
        if old.name.startswith(PREFIXES) and old.name not in keep:
            old.unlink()
    return plots
