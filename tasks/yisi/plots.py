"""The YiSi-2 family on the leaderboard.

- ``yisi_bars_*``: one bar chart per data set and direction of each task's main metric per model
  (error bars: the interval over items; dashed: chance where defined).
- ``yisi_layers_*``: for the layer sweeps (``yisi2_filter_layers``, ``yisi2_sts_layers``), the
  main swept metric against the layer, one line per model, its best layer marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.leaderboard.figures import Plot, colours, describe, figure, file_names, save, table_bar_plots
from harness.leaderboard.merge import Board

SWEEPS = {"yisi2_filter_layers": ("roc_auc", "ROC AUC"), "yisi2_sts_layers": ("pearson", "Pearson r")}


def bar_plots(board: Board, folder: Path) -> list[Plot]:
    """The main metrics of YiSi-2 and its baselines per model, one figure per data set and direction."""
    return table_bar_plots(board, folder, "yisi", "yisi_bars", "YiSi-2 and baselines per model", "score")


def layer_values(metrics: Mapping[str, Any], metric: str) -> list[float | None]:
    """``metric`` at layers 0..L from a sweep's metrics (``roc_auc@L0``, ...), in layer order."""
    layers = int(metrics.get("layers") or 0)
    return [metrics.get(f"{metric}@L{layer}") for layer in range(layers)]


def layer_axes(
    axes: Any,
    series: Mapping[str, Sequence[float | None]],
    ylabel: str,
    palette: Mapping[str, str] | None = None,
    reference: int | None = 9,
) -> None:
    """One line per label of ``metric`` against the layer, its best layer circled and named in the legend;
    a dotted line at ``reference``."""
    from harness_tasks.yisi.layers import best_layer  # with the task's own imports (datasets, scipy): only when drawn

    for index, (label, values) in enumerate(series.items()):
        best = best_layer(values)
        if best is None:  # no layer has a value
            continue
        colour = (palette or {}).get(label, f"C{index % 10}")
        layers, ys = zip(*[(layer, v) for layer, v in enumerate(values) if v is not None])
        axes.plot(
            layers, ys, marker="o", markersize=4, color=colour, label=f"{label} (best: L{best}, {values[best]:.3f})"
        )
        axes.scatter([best], [values[best]], s=120, facecolors="none", edgecolors=colour, linewidths=1.5)
    if reference is not None:
        axes.axvline(
            reference, color="grey", linestyle=":", linewidth=1, label=f"layer {reference} (Lo and Simard 2019, mBERT)"
        )
    axes.set_xlabel("layer (hidden_states index; 0 = embedding output)")
    axes.set_ylabel(ylabel)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7, loc="lower right")


def layer_plots(board: Board, folder: Path) -> list[Plot]:
    """Per sweep task and data set: its swept metric against the layer, one line per model."""
    columns = [c for c in board.columns if c.role in SWEEPS]
    names = file_names("yisi_layers", [f"{c.role} {describe(c, board)}" for c in columns])
    palette = colours(board)
    plots = []
    for column, name in zip(columns, names):
        metric, display = SWEEPS[column.role]
        series = {
            board.labels[key]: layer_values(board.cells[key, column].record.metrics, metric)
            for key in board.labels
            if (key, column) in board.cells
        }
        if not any(v is not None for values in series.values() for v in values):
            continue
        title = f"{column.role}: {display} per layer ({describe(column, board)})"
        with figure(6.0, 4.0) as fig:
            layer_axes(fig.subplots(), series, display, {board.labels[k]: palette[k] for k in board.labels})
            fig.suptitle(title, fontsize=9)
            save(fig, folder / name)
        plots.append(Plot("yisi", title, name))
    return plots


PLOTS = (bar_plots, layer_plots)
