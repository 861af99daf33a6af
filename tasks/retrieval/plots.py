"""The retrieval family on the leaderboard: its plots and its meta-evaluation tables.

- ``bkr_vs_xlr_*``: BackRetrieval against XLR, one marker per model, per data set and direction;
  the title gives the meta-correlation, computed by ``harness meta``'s own functions.
- ``bkr_boxplots``: per direction, the per-seed values of each model, best median first.
- ``bkr_over_pairs_*``: per data set, a box per model over its language pairs (SIGIR 2021 Figure 3).
- Of more than 20 models (``PLOTTED_MODELS``), the box plots show the best 20 by median, their titles say so;
  the scatter keeps every model.
- Sections: per direction, the correlations of BkR and CORR with XLR and the test of their
  difference (SIGIR 2021 Table 1); per data set, BkR averaged over the language pairs (Table 2).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from harness.errors import HarnessError
from harness.leaderboard.figures import (
    LEGEND_MODELS,
    Part,
    Plot,
    PlotParts,
    best_models,
    chance_line,
    colours,
    describe,
    error_label,
    error_of,
    figure,
    file_names,
    inputs_of,
    legend_outside,
    markers,
    models_with,
    save,
)
from harness.leaderboard.merge import Board, Column, model_labels
from harness.leaderboard.sections import Section
from harness.leaderboard.tables import dataset_of
from harness.plugins.contracts import unpaired, values_by_meaning
from harness.results.metrics import info_of
from harness.results.records import ResultRecord
from harness_tasks.retrieval.analysis.aggregations import draw_boxes
from harness_tasks.retrieval.contracts import KNOWN, META, SOURCE, TARGET

FAMILY = "retrieval"
Shown = TypeVar("Shown", "Triple", Column)
XLR, BKR, CORR = META.roles


@dataclass(frozen=True)
class Triple:
    """The XLR and BackRetrieval columns of one configuration, and CORR's when exactly one matches."""

    xlr: Column
    bkr: Column
    corr: Column | None


def _unpaired(board: Board, a: Column, b: Column) -> str | None:
    """Why two columns do not pair under the family's ``META`` pairing (None: they do)."""
    return unpaired(META, board.example(a), board.example(b), KNOWN)


def _describe(board: Board, column: Column) -> str:
    """``ikea en-de test``: the column's data set, direction (read by meaning, whatever the task calls its
    languages) and split; ``describe``'s reading where the direction is unknown."""
    example = board.example(column)
    source, target = _languages(example)
    if source is None or target is None:
        return describe(column, board)
    parts = [example.dataset.get("loader"), f"{source}-{target}", example.dataset.get("split")]
    return " ".join(str(part) for part in parts if part is not None)


def pairing(board: Board) -> tuple[list[Triple], list[str]]:
    """(XLR, BkR, CORR) columns that pair under ``META`` (same data; the arguments of ``META.same`` that both tasks
    declare, read by meaning, equal), with a model in both XLR and BkR; and why each BkR column left out was."""
    found, left_out = [], []
    columns = [c for c in board.columns if c.family.name == FAMILY] or board.columns
    for bkr in (c for c in columns if c.role == BKR):
        candidates = [c for c in columns if c.role == XLR]
        xlr = [c for c in candidates if _unpaired(board, c, bkr) is None]
        where = f"{bkr.label} ({_describe(board, bkr)})"
        if len(xlr) != 1:
            reasons = sorted({reason for c in candidates if (reason := _unpaired(board, c, bkr)) is not None})
            why = f"{len(xlr)} xlr columns pair with it" if xlr else "no xlr column pairs with it"
            left_out.append(f"{where}: {why}" + (f" ({'; '.join(reasons)})" if reasons and not xlr else ""))
            continue
        if not models_with(board, xlr[0], bkr):
            left_out.append(f"{where}: no model has both its xlr and backretrieval results")
            continue
        corr = [c for c in columns if c.role == CORR and _unpaired(board, c, bkr) is None]
        found.append(Triple(xlr[0], bkr, corr[0] if len(corr) == 1 else None))
    return found, left_out


def triples(board: Board) -> list[Triple]:
    """The (XLR, BkR, CORR) columns that pair (``pairing``)."""
    return pairing(board)[0]


def _records(board: Board, triple: Triple) -> list[ResultRecord]:
    columns = [c for c in (triple.xlr, triple.bkr, triple.corr) if c is not None]
    return [board.cells[key, c].record for key in board.labels for c in columns if (key, c) in board.cells]


_MEMO: dict[int, tuple[weakref.ref[Board], dict[tuple[Triple, bool], dict[str, Any] | HarnessError]]] = {}


def _forget(key: int, _: weakref.ref[Board]) -> None:
    """Drop the memo of a board that no longer exists."""
    _MEMO.pop(key, None)


def meta_result(board: Board, triple: Triple, *, tested: bool = True) -> dict[str, Any]:
    """``harness meta``'s evaluation of one triple (raises ``HarnessError`` when it is undefined).

    Computed once per board and triple (the scatter's title and the meta section share it). ``tested=False``: only
    the correlations are read (the scatter's title, drawn in a worker that has not the sections' evaluation), so
    the bootstrap of BkR vs CORR is left out (no resamples) unless the full evaluation is already held.
    """
    from harness_tasks.retrieval.analysis import meta

    key = id(board)
    held = _MEMO.get(key)
    if held is None or held[0]() is not board:
        held = _MEMO[key] = (weakref.ref(board, partial(_forget, key)), {})
    found = held[1]
    wanted = (triple, tested or (triple, True) in found)
    if wanted not in found:
        try:
            rows = meta.group_models(_records(board, triple))
            found[wanted] = meta.meta_evaluate(rows) if wanted[1] else meta.meta_evaluate(rows, resamples=0)
        except HarnessError as exc:
            found[wanted] = exc
    result = found[wanted]
    if isinstance(result, HarnessError):
        raise result
    return result


def _pm(summary: dict[str, Any]) -> str:
    return "n/a" if summary.get("mean") is None else f"{summary['mean']:.3f} ± {summary['std'] or 0.0:.3f}"


def _meta_title(board: Board, triple: Triple) -> str:
    try:
        found = meta_result(board, triple, tested=False)["correlations"].get(BKR)
    except HarnessError as exc:
        return f"meta-correlation undefined: {exc}"
    if not found or found["pearson"]["mean"] is None:
        return "meta-correlation undefined (constant or missing values)"
    return (
        f"meta-correlation over {found['pearson']['seeds_defined']} seeds: Pearson r = {_pm(found['pearson'])}, "
        f"Spearman ρ = {_pm(found['spearman'])}"
    )


def _scatter_parts(board: Board) -> list[Part]:
    """One scatter per XLR/BkR pair of columns, each drawn on its own and kept between builds while its results (and
    the model order, which sets colours and markers) are unchanged."""
    found = triples(board)
    descriptions = _g_apart(board, found, lambda triple: describe(triple.xlr, board), lambda triple: triple.bkr)
    names = file_names("bkr_vs_xlr", [descriptions[t] for t in found])
    order = "\n".join(board.labels.values())
    return [
        Part(
            f"{inputs_of(*_records(board, triple))}\n{order}\n{name}",
            partial(_scatter_plot, board, triple, descriptions[triple], name),
        )
        for triple, name in zip(found, names)
    ]


def _g_apart(
    board: Board, found: Sequence[Shown], described: Callable[[Shown], str], bkr: Callable[[Shown], Column]
) -> dict[Shown, str]:
    """Each one's description (of a triple, a BackRetrieval column), with its BackRetrieval's image similarity g
    where two share one (one data set and direction run under two image models), as the pairs' plots name g."""
    texts = {one: described(one) for one in found}
    shared = {text for text in texts.values() if list(texts.values()).count(text) > 1}
    return {
        one: f"{text} (g: {_g_name(board.example(bkr(one)))})" if text in shared else text
        for one, text in texts.items()
    }


def _scatter_plot(board: Board, triple: Triple, description: str, name: str, folder: Path) -> list[Plot]:
    """BackRetrieval against XLR, one marker per model (error bars: interval over items, else std over seeds)."""
    palette, shapes = colours(board), markers(board)
    xlr, bkr = triple.xlr, triple.bkr
    keys = [
        k
        for k in models_with(board, xlr, bkr)
        if board.cells[k, xlr].record.metrics.get(xlr.metric) is not None
        and board.cells[k, bkr].record.metrics.get(bkr.metric) is not None
    ]
    xs = [board.cells[k, xlr].record for k in keys]
    ys = [board.cells[k, bkr].record for k in keys]
    with figure(9, 5.5) as fig:
        axes = fig.subplots()
        if len(keys) <= LEGEND_MODELS:
            for key, rx, ry in zip(keys, xs, ys):
                axes.errorbar(
                    rx.metrics[xlr.metric],
                    ry.metrics[bkr.metric],
                    xerr=[[v] for v in error_of(rx, xlr.metric)],
                    yerr=[[v] for v in error_of(ry, bkr.metric)],
                    fmt=shapes[key],
                    color=palette[key],
                    elinewidth=1,
                    capsize=2,
                    markersize=7,
                    label=board.labels[key],
                    zorder=3,
                )
        else:
            _many_points(axes, keys, xs, ys, (xlr.metric, bkr.metric), (palette, shapes))
        chance_line(axes, board.example(xlr), xlr.metric, vertical=True, name="XLR")
        chance_line(axes, board.example(bkr), bkr.metric, name="BkR")
        unnamed = "" if len(keys) <= LEGEND_MODELS else " (not named: colours and markers as in every plot)"
        fig.suptitle(
            f"BackRetrieval vs XLR: {description}, {len(keys)} models{unnamed}\n{_meta_title(board, triple)}",
            fontsize=9,
        )
        axes.set_xlabel(
            f"XLR {info_of(xs[0], xlr.metric).display if xs else xlr.metric} ({error_label(xs, xlr.metric)})"
        )
        axes.set_ylabel(
            f"BackRetrieval {info_of(ys[0], bkr.metric).display if ys else bkr.metric} ({error_label(ys, bkr.metric)})"
        )
        axes.grid(alpha=0.3)
        legend_outside(fig, axes)
        save(fig, folder / name)
    return [Plot(FAMILY, f"BackRetrieval vs XLR: {description}", name)]


scatter_plots = PlotParts(_scatter_parts, "scatter_plots")


def _many_points(
    axes: Any,
    keys: list[str],
    xs: list[ResultRecord],
    ys: list[ResultRecord],
    metrics: tuple[str, str],
    styles: tuple[dict[str, str], dict[str, str]],
) -> None:
    """The scatter's points and error bars of more models than a legend names: one collection per marker
    (each model keeps its colour and marker) and one for the bars, instead of three artists per model."""
    import numpy as np

    palette, shapes = styles
    x = np.array([r.metrics[metrics[0]] for r in xs], dtype=float)
    y = np.array([r.metrics[metrics[1]] for r in ys], dtype=float)
    xerr = np.array([error_of(r, metrics[0]) for r in xs], dtype=float).T
    yerr = np.array([error_of(r, metrics[1]) for r in ys], dtype=float).T
    colour = np.array([palette[k] for k in keys])
    axes.errorbar(x, y, xerr=xerr, yerr=yerr, fmt="none", ecolor=colour, elinewidth=1, zorder=2)
    for cap, cx, cy in (("|", x - xerr[0], y), ("|", x + xerr[1], y), ("_", x, y - yerr[0]), ("_", x, y + yerr[1])):
        axes.scatter(cx, cy, marker=cap, s=16, c=colour, linewidths=1, zorder=2)  # errorbar's capsize=2
    shape = np.array([shapes[k] for k in keys])
    for marker in dict.fromkeys(shape):
        drawn = shape == marker
        axes.scatter(x[drawn], y[drawn], marker=marker, s=49, c=colour[drawn], zorder=3)


def _per_seed(record: ResultRecord, metric: str) -> list[float]:
    return [v for v in record.per_seed.get(metric, []) if v is not None and math.isfinite(v)]


def best_first(values: dict[str, list[float]], labels: dict[str, str]) -> list[str]:
    """The keys with values, by median, highest first; equal medians by label."""
    import numpy as np

    return sorted((k for k in values if values[k]), key=lambda k: (-float(np.median(values[k])), labels[k]))


def model_ticks(axes: Any, labels: list[str]) -> None:
    """Model names under x = 1, 2, ..., slanted."""
    axes.set_xticks(range(1, len(labels) + 1), labels, rotation=25, ha="right", fontsize=8)


def _median(values: dict[str, list[float]], key: str) -> float | None:
    """The median of a model's values (None without any)."""
    import numpy as np

    return float(np.median(values[key])) if values.get(key) else None


def box_plots(board: Board, folder: Path) -> list[Plot]:
    """One panel per BackRetrieval column: a box of per-seed values per model, best median first; of more than
    ``PLOTTED_MODELS`` models, the best (``best_models``)."""
    columns = [c for c in board.columns if c.role == BKR]
    if not columns:
        return []
    panels = []
    for column in columns:
        data = {k: _per_seed(board.cells[k, column].record, column.metric) for k in models_with(board, column)}
        panels.append(
            (column, data, *best_models(board, best_first(data, board.labels), partial(_median, data), "median"))
        )
    widest = max(len(keys) for _, _, keys, _ in panels)
    descriptions = _g_apart(board, columns, lambda column: describe(column, board), lambda column: column)
    with figure(max(6.0, 1.5 + 0.9 * widest), 3.4 * len(columns)) as fig:
        for axes, (column, data, keys, shown) in zip(fig.subplots(len(columns), 1, squeeze=False)[:, 0], panels):
            draw_boxes(axes, [data[k] for k in keys])
            model_ticks(axes, [board.labels[k] for k in keys])
            chance_line(axes, board.example(column), column.metric)
            record = board.example(column)
            axes.set_title(
                f"BackRetrieval per seed ({len(record.seeds)} seeds), best median first: {descriptions[column]}"
                + (f"\n{shown}" if shown else ""),
                fontsize=9,
            )
            axes.set_ylabel(info_of(record, column.metric).display)
            axes.grid(axis="y", alpha=0.3)
            if info_of(record, column.metric).chance is not None:
                axes.legend(fontsize=7, loc="upper right")
        name = "bkr_boxplots.png"
        save(fig, folder / name)
    datasets = ", ".join(sorted({dataset_of(board.example(c)) for c in columns}))
    return [Plot(FAMILY, f"BackRetrieval per seed, per language pair and model: {datasets}", name)]


def _by_dataset(board: Board) -> dict[str, list[tuple[str, ResultRecord]]]:
    """The current BackRetrieval lines (with their model's key) per data set (loader and split) and image similarity
    g, with two or more directions; g is named only where a data set was run with several."""
    groups: dict[tuple[str, str], list[tuple[str, ResultRecord]]] = {}
    for column in (c for c in board.columns if c.role == BKR):
        example = board.example(column)
        split = example.dataset.get("split")
        key = (f"{example.dataset.get('loader')}" + (f" {split}" if split else ""), _g_name(example))
        groups.setdefault(key, []).extend((k, board.cells[k, column].record) for k in models_with(board, column))
    several = {name for name, _ in groups if sum(1 for other, _ in groups if other == name) > 1}
    return {
        f"{name} (g: {g})" if name in several else name: keyed
        for (name, g), keyed in sorted(groups.items())
        if len({_languages(r) for _, r in keyed}) > 1
    }


def _g_name(record: ResultRecord) -> str:
    """The image similarity g of a BackRetrieval line: its image model's name, or where its features come from."""
    g = record.extra.get("g") or {}
    model = g.get("model") if isinstance(g, dict) else None
    if isinstance(model, dict) and model.get("name"):
        return str(model["name"])
    return str(g.get("source", "unknown")) if isinstance(g, dict) else "unknown"


def _languages(record: ResultRecord) -> tuple[Any, Any]:
    values = values_by_meaning(record, KNOWN)
    return values.get(SOURCE.meaning), values.get(TARGET.meaning)


def pair_plots(board: Board, folder: Path) -> list[Plot]:
    """Per data set with several directions: a box per model over its language pairs (SIGIR 2021 Figure 3); of more
    than ``PLOTTED_MODELS`` models, the best by median (``best_models``)."""
    from harness_tasks.retrieval.analysis import aggregations, meta

    groups = _by_dataset(board)
    plots = []
    for (dataset, keyed), name in zip(groups.items(), file_names("bkr_over_pairs", list(groups))):
        aggregation = meta.aggregate_pairs([record for _, record in keyed], test=False)
        scores, shown = _best_scores(board, keyed, aggregation["scores"])
        title = (
            f"BackRetrieval per model over {len(aggregation['table']['pairs'])} language pairs\n{dataset} "
            "(best median first)" + (f"\n{shown}" if shown else "")
        )
        import matplotlib.style

        with matplotlib.style.context("default"):
            aggregations.pair_boxplot(
                scores,
                folder / name,
                chance=aggregation["chance"],
                title=title,
                ylabel=f"BackRetrieval Recall@{aggregation['k']}",
            )
        plots.append(Plot(FAMILY, f"BackRetrieval over language pairs: {dataset}", name))
    return plots


def _best_scores(
    board: Board, keyed: list[tuple[str, ResultRecord]], scores: dict[str, dict[str, float | None]]
) -> tuple[dict[str, dict[str, float | None]], str]:
    """Of ``aggregate_pairs``' scores, those of the models its box plot shows (``best_models`` by the median over
    the pairs), and what its title says of them. The scores are keyed by label: ``model_labels`` of the models'
    identities in the order met, as ``aggregate_pairs`` labels them."""
    values: dict[str, list[float]] = {}
    identities: dict[str, dict[str, Any]] = {}
    for key, record in keyed:
        identities.setdefault(key, record.model)
        value = record.metrics.get(record.main_metric)
        values.setdefault(key, []).extend([value] if value is not None and math.isfinite(value) else [])
    keys, shown = best_models(
        board, [k for k in values if values[k]], partial(_median, values), "median over the language pairs"
    )
    if not shown:
        return scores, ""
    labels = model_labels(identities)
    return {labels[k]: scores[labels[k]] for k in keys if labels[k] in scores}, shown


PLOTS = (scatter_plots, box_plots, pair_plots)


def _significance_rows(tested: dict[str, Any]) -> list[tuple[str, ...]]:
    from harness_tasks.retrieval.analysis import significance

    rows: list[tuple[str, ...]] = []
    for method in ("pearson", "spearman"):
        values = tested.get(method)
        if not values:
            continue
        boot = values["bootstrap"]
        share = significance.significant_seeds(values)
        combined = "n/a" if values["combined_p"] is None else f"{values['combined_p']:.2g}"
        observed = "n/a" if boot["difference"] is None else f"{boot['difference']:+.3f}"
        interval = "n/a" if boot["low"] is None else f"{observed} [{boot['low']:+.3f}, {boot['high']:+.3f}]"
        rows.append((method.capitalize(), share, combined, interval))
    return rows


def sections(board: Board) -> list[Section]:
    """The meta-evaluation per direction, and BackRetrieval averaged over the directions of each data set."""
    found = []
    paired, left_out = pairing(board)
    if left_out:
        found.append(
            Section(
                "Meta-evaluation: columns left out",
                ("backretrieval column: why",),
                tuple((reason,) for reason in left_out),
                "meta pairs xlr, backretrieval and corr of one configuration (same data, same declared arguments)",
            )
        )
    descriptions = _g_apart(board, paired, lambda triple: _describe(board, triple.xlr), lambda triple: triple.bkr)
    for triple in paired:
        description = descriptions[triple]
        try:
            result = meta_result(board, triple)
        except HarnessError as exc:
            found.append(
                Section(
                    f"Meta-evaluation, {description}",
                    ("with XLR", "Pearson r", "Spearman ρ"),
                    (),
                    f"not computed: {exc}",
                )
            )
            continue
        rows = tuple(
            (task, _pm(values["pearson"]), _pm(values["spearman"])) for task, values in result["correlations"].items()
        )
        found.append(
            Section(
                f"Meta-evaluation, {description}",
                ("with XLR", "Pearson r", "Spearman ρ"),
                rows,
                f"across {len(result['models'])} models, per seed, mean ± std over {len(result['seeds'])} seeds "
                "(as harness meta; SIGIR 2021 Table 1)",
            )
        )
        tested = result.get("significance") or {}
        if "pearson" in tested:
            boot = tested["pearson"]["bootstrap"]
            found.append(
                Section(
                    f"BkR vs CORR, {description}",
                    ("correlation", "seeds p < 0.05", "combined p", "r(BkR) − r(CORR), interval"),
                    tuple(_significance_rows(tested)),
                    f"{tested['pearson']['test']} per seed over {tested['pearson']['models']} models"
                    + (f" (Spearman: {tested['spearman']['test']})" if "spearman" in tested else "")
                    + ", combined by "
                    f"{tested['pearson']['combination']}; {boot['confidence']:.0%} bootstrap interval over models "
                    f"({boot['resamples']} resamples, seed {boot['seed']})",
                )
            )
        elif tested.get("skipped"):
            found.append(Section(f"BkR vs CORR, {description}", ("test",), (), f"not tested: {tested['skipped']}"))
    found += _pair_sections(board)
    return found


def _pair_sections(board: Board) -> list[Section]:
    from harness_tasks.retrieval.analysis import meta

    found = []
    for dataset, keyed in _by_dataset(board).items():
        try:
            aggregation = meta.aggregate_pairs([record for _, record in keyed])
        except HarnessError as exc:
            found.append(
                Section(f"BackRetrieval over language pairs, {dataset}", ("model",), (), f"not computed: {exc}")
            )
            continue
        pairs = aggregation["table"]["pairs"]
        rows = tuple(
            (
                row["model"],
                *("—" if row["scores"][p] is None else f"{row['scores'][p]:.4f}" for p in pairs),
                "n/a" if row["average"] is None else f"{row['average']:.4f}",
            )
            for row in aggregation["table"]["rows"]
        )
        chance = ", ".join(f"{p} {v:.4f}" for p, v in sorted(aggregation["chance"].items()))
        found.append(
            Section(
                f"BackRetrieval over language pairs, {dataset}",
                ("model", *(p.replace("-", "→") for p in pairs), "average"),
                rows,
                f"{aggregation['metric']}, averaged over all pairs only for models that have every pair "
                f"(SIGIR 2021 Table 2)" + (f"; chance: {chance}" if chance else ""),
            )
        )
        found.append(_best_section(dataset, aggregation.get("best_vs_others") or {}))
    return found


def _best_section(dataset: str, tested: dict[str, Any]) -> Section:
    """Table 2's second claim: the best model against each other (``aggregations.best_vs_others``)."""
    title = f"Best model vs the others, {dataset}"
    if "others" not in tested:
        return Section(title, ("model",), (), f"not tested: {tested.get('skipped', 'no aggregation')}")

    def p(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.2g}"

    rows = tuple(
        (
            row["model"],
            str(row["n"]),
            "n/a" if row["mean_difference"] is None else f"{row['mean_difference']:+.4f}",
            f"{row['better']}/{row['worse']}",
            p(row["p"]),
            p(row["p_holm"]),
            "yes" if row["significant"] else "no",
        )
        for row in tested["others"]
    )
    return Section(
        title,
        ("model", "pairs × seeds", f"{tested['best']} − model", "better/worse", "p", "p (Holm)", "significant"),
        rows,
        f'{tested["test"]} at α = {tested["alpha"]} (SIGIR 2021 Table 2: "the difference between the best models '
        'and others is statistically significant"); the seeds re-sample the same items, so this says the gap is '
        "consistent, not that it holds on other data",
    )
