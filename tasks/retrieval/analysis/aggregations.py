"""The SIGIR 2021 paper's aggregations over the language pairs of one data set (Table 2 and Figure 3).

Input: ``scores[model][pair]`` = a model's BackRetrieval score (mean over seeds) on one
language pair (direction, e.g. ``en-de``) of the data set. ``pair_table`` gives each model's
average over all pairs (undefined when the model lacks a pair: never an average over missing
cells); ``pair_boxplot`` draws one box per model over its pairs, models ordered by median.
``best_vs_others`` tests Table 2's second claim, that "the difference between the best models and
others is statistically significant" (Fain, Twomey and Bollegala, SIGIR 2021, section 5 and Table 2):
the model with the best average against each other model, by the Wilcoxon signed-rank test on
their paired per-seed scores over every language pair and seed, Holm-adjusted over the comparisons.
All are plain data in, so ``harness meta`` and the leaderboard call them alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

import numpy as np

from harness.leaderboard.figures import LEGEND_MODELS, MAX_INCHES, save

Scores = Mapping[str, Mapping[str, float | None]]


@dataclass(frozen=True)
class PairRow:
    """One model: its score per pair (None = missing or undefined) and the average over all pairs."""

    model: str
    scores: dict[str, float | None]
    average: float | None


@dataclass(frozen=True)
class PairTable:
    """Models (best average first, undefined averages last) by language pair."""

    pairs: list[str]
    rows: list[PairRow]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the pairs and, per row, the model, its per-pair scores and its average."""
        return {
            "pairs": self.pairs,
            "rows": [{"model": r.model, "scores": r.scores, "average": r.average} for r in self.rows],
        }


def _defined(value: float | None) -> TypeGuard[float]:
    return value is not None and math.isfinite(value)


def pair_table(scores: Scores) -> PairTable:
    """Each model's score averaged over every pair present for any model (SIGIR 2021 Table 2)."""
    pairs = sorted({pair for by_pair in scores.values() for pair in by_pair})
    rows = []
    for model, by_pair in scores.items():
        cells = {pair: by_pair.get(pair) if _defined(by_pair.get(pair)) else None for pair in pairs}
        values = [v for v in cells.values() if v is not None]
        rows.append(PairRow(model, cells, sum(values) / len(values) if values and len(values) == len(pairs) else None))
    rows.sort(key=lambda r: (r.average is None, -(r.average or 0.0), r.model))
    return PairTable(pairs, rows)


ALPHA = 0.05
PerSeed = Mapping[str, Mapping[str, Sequence[float | None]]]


EXACT_UP_TO = 50  # scipy.stats.wilcoxon's "auto": an exact test up to this many differences without ties
ENUMERATED_UP_TO = 13  # ... and with ties up to this many (all 2^n sign patterns: its permutation test)


def wilcoxon_p(differences: Sequence[float]) -> float:
    """The two-sided p of Wilcoxon's signed-rank test of the non-zero ``differences``, as ``scipy.stats.wilcoxon``
    computes it (method "auto", tested against it), without importing ``scipy.stats`` (0.3 s of a leaderboard
    build, and milliseconds a call): the statistic is the sum of the mid-ranks of |d| over the positive d; its
    null distribution exact (every sign pattern of the ranks, ``_signed_rank_p``) up to ``EXACT_UP_TO``
    differences without ties and ``ENUMERATED_UP_TO`` with ties, else normal (the variance corrected for ties,
    no continuity correction)."""
    n = len(differences)
    d = np.asarray(differences, dtype=float)
    _, value_of, tied = np.unique(np.abs(d), return_inverse=True, return_counts=True)
    mid_ranks = np.cumsum(tied) - (tied - 1) / 2  # of each distinct |d|, in ascending order
    ranks = mid_ranks[value_of]
    r_plus = float(ranks[d > 0].sum())
    if n <= (EXACT_UP_TO if (tied == 1).all() else ENUMERATED_UP_TO):
        return _signed_rank_p(ranks, r_plus)
    variance = (n * (n + 1) * (2 * n + 1) - float((tied**3 - tied).sum()) / 2) / 24
    z = (r_plus - n * (n + 1) / 4) / math.sqrt(variance)
    return math.erfc(abs(z) / math.sqrt(2))  # 2 P(N(0, 1) > |z|)


def _signed_rank_p(ranks: np.ndarray, r_plus: float) -> float:
    """2 min(P(T <= r_plus), P(T >= r_plus)), at most 1, where T sums ``ranks`` (whole or halves) each taken with
    probability 1/2: the count of sign patterns per doubled sum, built one rank at a time."""
    doubled = np.rint(2 * ranks).astype(np.int64)
    counts = np.zeros(int(doubled.sum()) + 1)
    counts[0] = 1.0
    for rank in doubled:
        counts[rank:] = counts[rank:] + counts[: len(counts) - rank]  # every pattern without the rank, then with it
    observed = round(2 * r_plus)
    below, above = counts[: observed + 1].sum(), counts[observed:].sum()
    return min(1.0, 2 * min(below, above) / counts.sum())


def best_vs_others(table: PairTable, per_seed: PerSeed, alpha: float = ALPHA) -> dict[str, Any]:
    """The best model of ``table`` (highest average) against each other model with an average.

    ``per_seed[model][pair]``: the model's score on that pair per seed, the seeds in one order for
    every model (the same seed draws the same items, so the scores pair up). Per other model: the
    differences best - other over every (pair, seed) where both are defined; the two-sided Wilcoxon
    signed-rank test (zero differences dropped, as Wilcoxon 1945; ``wilcoxon_p``: exact up to 50
    differences without ties and 13 with ties, else the normal approximation), its p-value
    Holm-adjusted over the comparisons, and whether that
    is below ``alpha``. The seeds of one pair re-sample the same items, so the (pair, seed) scores
    are not independent draws: the test says the gap is consistent, not that it would hold on
    other data. ``p`` is None when every difference is zero.
    """
    ranked = [row.model for row in table.rows if row.average is not None]
    if len(ranked) < 2:
        return {"skipped": "needs two or more models with every language pair"}
    best = ranked[0]
    rows: list[dict[str, Any]] = []
    pvalues: list[float | None] = []
    for other in ranked[1:]:
        differences = [
            b - o
            for pair in table.pairs
            for b, o in zip(per_seed[best][pair], per_seed[other][pair], strict=True)
            if _defined(b) and _defined(o)
        ]
        nonzero = [d for d in differences if d != 0]
        p = wilcoxon_p(nonzero) if nonzero else None
        pvalues.append(p)
        rows.append(
            {
                "model": other,
                "n": len(differences),
                "mean_difference": sum(differences) / len(differences) if differences else None,
                "better": sum(d > 0 for d in differences),
                "worse": sum(d < 0 for d in differences),
                "p": p,
            }
        )
    for row, adjusted in zip(rows, holm(pvalues)):
        row["p_holm"] = adjusted
        row["significant"] = adjusted is not None and adjusted < alpha
    return {
        "best": best,
        "test": "Wilcoxon signed-rank, two-sided, paired over language pairs and seeds; Holm-adjusted",
        "alpha": alpha,
        "others": rows,
    }


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's (1979) step-down adjustment of the defined p-values (None stays None): the i-th smallest of m
    is multiplied by m - i + 1 (i from 1), made monotone and capped at 1."""
    defined = sorted((p, i) for i, p in enumerate(pvalues) if p is not None)
    adjusted: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, index) in enumerate(defined):
        running = max(running, min(1.0, (len(defined) - rank) * p))
        adjusted[index] = running
    return adjusted


def format_best_vs_others(result: dict[str, Any]) -> list[str]:
    """The test of the best model against the others as text lines."""
    if "skipped" in result:
        return [f"best vs others: not tested ({result['skipped']})"]
    width = max([len("model"), *(len(r["model"]) for r in result["others"])]) + 2
    lines = [
        f"best model {result['best']} against each other (SIGIR 2021 Table 2's claim): {result['test']}",
        f"{'model':<{width}}{'n':>6}{'best - model':>14}{'better/worse':>14}{'p':>10}{'p (Holm)':>10}",
    ]
    for row in result["others"]:
        mean = "n/a" if row["mean_difference"] is None else f"{row['mean_difference']:+.4f}"
        counts = f"{row['better']}/{row['worse']}"
        lines.append(
            f"{row['model']:<{width}}{row['n']:>6}{mean:>14}{counts:>14}{_p(row['p']):>10}{_p(row['p_holm']):>10}"
        )
    return lines


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2g}" if value < 0.001 else f"{value:.3f}"


def format_pair_table(table: PairTable, metric: str = "BkR") -> str:
    """The table as text: a row per model, a column per pair and the average."""
    width = max([len("model"), *(len(r.model) for r in table.rows)]) + 2
    header = f"{'model':<{width}}" + "".join(f"{pair:>10}" for pair in table.pairs) + f"{'average':>10}"
    lines = [f"{metric} per model, averaged over {len(table.pairs)} language pairs (SIGIR 2021 Table 2)", header]
    for row in table.rows:
        cells = ["-" if row.scores[p] is None else f"{row.scores[p]:.4f}" for p in table.pairs]
        average = "n/a" if row.average is None else f"{row.average:.4f}"
        lines.append(f"{row.model:<{width}}" + "".join(f"{c:>10}" for c in cells) + f"{average:>10}")
    return "\n".join(lines)


@dataclass(frozen=True)
class BoxPlot:
    """What ``pair_boxplot`` drew: the models left to right, their medians, and the values in each box."""

    models: list[str]
    medians: list[float]
    values: list[list[float]]
    pairs: list[str]


def draw_boxes(axes: Any, data: list[list[float]], width: float = 0.5, whis: float | tuple[float, float] = 1.5) -> None:
    """A box per list at x = 1, 2, ...: what ``axes.boxplot`` draws (its statistics, ``cbook.boxplot_stats``:
    quartiles, whiskers at ``whis`` (1.5 IQR; ``(0, 100)``: min to max), fliers; black lines, hollow circles),
    as three collections instead of six artists per box, which is what makes hundreds of boxes slow."""
    from matplotlib.cbook import boxplot_stats
    from matplotlib.collections import LineCollection

    lines: list[list[tuple[float, float]]] = []
    medians: list[list[tuple[float, float]]] = []
    fliers: list[tuple[float, float]] = []
    for x, stats in enumerate(boxplot_stats(data, whis=whis), start=1):
        left, right, low, high = x - width / 2, x + width / 2, stats["q1"], stats["q3"]
        lines.append([(left, low), (right, low), (right, high), (left, high), (left, low)])
        for end, start in ((stats["whislo"], low), (stats["whishi"], high)):
            lines += [[(x, start), (x, end)], [(x - width / 4, end), (x + width / 4, end)]]
        medians.append([(left, stats["med"]), (right, stats["med"])])
        fliers += [(x, value) for value in stats["fliers"]]
    axes.add_collection(LineCollection(lines, colors="black", linewidths=1.0))
    axes.add_collection(LineCollection(medians, colors="black", linewidths=1.0, zorder=2.1))
    if fliers:
        axes.scatter(*zip(*fliers), marker="o", s=36, facecolors="none", edgecolors="black", linewidths=1.0)
    axes.set_xlim(0.5, len(data) + 0.5)
    axes.autoscale_view(scalex=False)


def pair_boxplot(
    scores: Scores,
    path: Path,
    *,
    chance: Mapping[str, float] | None = None,
    title: str = "",
    ylabel: str = "BackRetrieval Recall@10",
) -> BoxPlot:
    """One box per model over its language pairs (SIGIR 2021 Figure 3), best median first, pairs as marked points.

    ``chance``: the score of a random ranking per pair (e.g. k / n for Recall@k), drawn as a
    line (or a band when the pairs differ). Writes a PNG to ``path``.
    """
    import numpy as np
    from matplotlib.figure import Figure

    pairs = sorted({pair for by_pair in scores.values() for pair in by_pair})
    data = {m: {p: v for p, v in by_pair.items() if _defined(v)} for m, by_pair in scores.items()}
    data = {m: values for m, values in data.items() if values}
    order = sorted(data, key=lambda m: (-float(np.median(list(data[m].values()))), m))
    values = [list(data[m].values()) for m in order]
    crowded = len(order) > LEGEND_MODELS  # then as three collections, the names upright, the width capped
    width = max(6.0, 1.2 + 0.75 * len(order))
    figure = Figure(figsize=(min(width, MAX_INCHES) if crowded else width, 4.6))
    axes = figure.subplots()
    if crowded:
        draw_boxes(axes, values, whis=(0, 100))
    else:
        axes.boxplot(values, widths=0.5, whis=(0, 100), medianprops={"color": "black"})
    markers = "osD^v<>ph*"
    for index, pair in enumerate(pairs):
        points = [(i + 1, data[m][pair]) for i, m in enumerate(order) if pair in data[m]]
        offset = (index - (len(pairs) - 1) / 2) * 0.08
        axes.scatter(
            [x + offset for x, _ in points],
            [y for _, y in points],
            marker=markers[index % len(markers)],
            s=22,
            alpha=0.8,
            zorder=3,
            label=pair,
        )
    _chance(axes, [chance[p] for p in pairs if chance and p in chance])
    if crowded:
        axes.set_xticks(range(1, len(order) + 1), order, rotation=90, ha="center", fontsize=7)
    else:
        axes.set_xticks(range(1, len(order) + 1), order, rotation=30, ha="right", fontsize=8)
    axes.set_ylabel(ylabel)
    axes.set_xlabel("model (best median first)\nbox: quartiles over language pairs, whiskers: min to max", fontsize=8)
    axes.set_title(title or f"{ylabel} over {len(pairs)} language pairs per model", fontsize=10)
    axes.grid(axis="y", alpha=0.3)
    axes.legend(
        title="pair", fontsize=7, title_fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0
    )
    figure.tight_layout()
    save(figure, path, dpi=150)
    return BoxPlot(order, [float(np.median(v)) for v in values], values, pairs)


def _chance(axes: Any, levels: Sequence[float]) -> None:
    if not levels:
        return
    low, high = min(levels), max(levels)
    if high - low < 1e-9:
        axes.axhline(low, color="grey", linestyle="--", linewidth=1, label=f"chance k/n ({low:.3f})")
    else:
        axes.axhspan(low, high, color="grey", alpha=0.2, label=f"chance k/n ({low:.3f}-{high:.3f})")
