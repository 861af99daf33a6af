"""The retrieval plots.

- ``bkr_vs_xlr_*``: BackRetrieval against XLR, one point per model, for each XLR column whose
  BackRetrieval twin has the same signature; the title gives the meta-correlation (per-seed
  Pearson and Spearman across models, mean ± std over seeds).
- ``bkr_boxplots``: per language pair (BackRetrieval column), the per-seed values of each model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from harness.leaderboard.figures import Plot, colours, describe, figure, file_names, models_with, save
from harness.leaderboard.merge import Board, Column

MIN_MODELS = 3


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


def _twins(board: Board) -> list[tuple[Column, Column]]:
    """(XLR, BackRetrieval) columns whose signatures are equal but for the task, with a model in both."""
    pairs = []
    for xlr in (c for c in board.columns if c.task == "xlr"):
        twin = board.column_of("backretrieval", "backretrieval" + xlr.task_signature[len("xlr"):])
        if twin is not None and models_with(board, xlr, twin):
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
    palette = colours(board)
    plots = []
    for (xlr, bkr), name in zip(pairs, file_names("bkr_vs_xlr", [describe(x, board) for x, _ in pairs])):
        keys = models_with(board, xlr, bkr)
        cells = [(k, board.cells[k, xlr].record, board.cells[k, bkr].record) for k in keys]
        cells = [(k, rx, ry) for k, rx, ry in cells if rx.metrics.get(xlr.metric) is not None and ry.metrics.get(bkr.metric) is not None]
        x = [rx.metrics[xlr.metric] for _, rx, _ in cells]
        y = [ry.metrics[bkr.metric] for _, _, ry in cells]
        description = describe(xlr, board)
        with figure(7, 5.5) as fig:
            axes = fig.subplots()
            axes.errorbar(x, y, xerr=[rx.metrics_std.get(xlr.metric) or 0.0 for _, rx, _ in cells],
                          yerr=[ry.metrics_std.get(bkr.metric) or 0.0 for _, _, ry in cells], fmt="none",
                          ecolor=[palette[k] for k, _, _ in cells], elinewidth=1)
            axes.scatter(x, y, c=[palette[k] for k, _, _ in cells], zorder=3)
            for (key, _, _), x_value, y_value in zip(cells, x, y):
                axes.annotate(board.labels[key], (x_value, y_value), textcoords="offset points", xytext=(4, 4), fontsize=8)
            axes.set_title(f"BkR vs XLR: {description}, {len(keys)} models\n{_meta_title(board, keys, xlr, bkr)}", fontsize=9)
            axes.set_xlabel(f"XLR {xlr.metric} (mean ± std over seeds)")
            axes.set_ylabel(f"BackRetrieval {bkr.metric} (mean ± std over seeds)")
            axes.grid(alpha=0.3)
            save(fig, folder / name)
        plots.append(Plot("retrieval", f"BkR vs XLR: {description}", name))
    return plots


def box_plots(board: Board, folder: Path) -> list[Plot]:
    """One panel per BackRetrieval column: a box of per-seed values per model."""
    columns = [c for c in board.columns if c.task == "backretrieval"]
    if not columns:
        return []
    widest = max(len(models_with(board, c)) for c in columns)
    with figure(max(6.0, 1.0 + 0.9 * widest), 3.2 * len(columns)) as fig:
        for axes, column in zip(fig.subplots(len(columns), 1, squeeze=False)[:, 0], columns):
            keys = models_with(board, column)
            data = [[v for v in _per_seed(board, k, column) if not math.isnan(v)] for k in keys]
            axes.boxplot(data)
            axes.set_xticks(range(1, len(keys) + 1), [board.labels[k] for k in keys], rotation=20, ha="right", fontsize=8)
            axes.set_title(f"BackRetrieval per seed: {describe(column, board)} ({column.label})", fontsize=9)
            axes.set_ylabel(column.metric)
            axes.grid(axis="y", alpha=0.3)
        name = "bkr_boxplots.png"
        save(fig, folder / name)
    return [Plot("retrieval", "BackRetrieval per seed, per language pair and model", name)]
