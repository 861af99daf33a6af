"""The table printed at the end of a run: rich on a terminal, tab-separated lines otherwise."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from harness.results.metrics import info_of, interval_of
from harness.results.records import RESULTS_FILE, ResultRecord


def is_integral(record: ResultRecord, metric: str) -> bool:
    """A count or a rank: the metric's mean and every seed's value are whole numbers, and one of them or the
    chance level exceeds 1 in size (a rate or a share that happens to be 0 or 1 keeps its decimals)."""
    value = record.metrics.get(metric)
    if value is None:
        return False
    values = [float(v) for v in record.per_seed.get(metric, []) if v is not None] or [float(value)]
    if not float(value).is_integer() or not all(v.is_integer() for v in values):
        return False
    chance = info_of(record, metric).chance
    return any(abs(v) > 1 for v in values) or (chance is not None and abs(chance) > 1)


def number(value: float, integral: bool) -> str:
    """A value at the metric's precision: a whole number as such, else four decimals."""
    if integral:
        return f"{value:.0f}" if float(value).is_integer() else f"{value:g}"
    return f"{value:.4f}"


def _format(record: ResultRecord, metric: str, value: float | None) -> str:
    if value is None:
        return "n/a"
    shown, std = number(value, is_integral(record, metric)), record.metrics_std.get(metric)
    return f"{shown} ± {std:.4f}" if len(record.seeds) > 1 and std is not None else shown


def _interval(record: ResultRecord, metric: str) -> str:
    bounds = interval_of(record, metric)
    if not bounds:
        return ""
    integral = is_integral(record, metric)
    return f"[{number(bounds[0], integral)}, {number(bounds[1], integral)}]"


def _chance(record: ResultRecord, metric: str) -> str:
    chance = info_of(record, metric).chance
    return "" if chance is None else number(chance, is_integral(record, metric))


def run_warnings(records: Sequence[ResultRecord]) -> list[str]:
    """The records' warnings, each once, in order."""
    return [f"warning: {text}" for text in dict.fromkeys(text for r in records for text in r.warnings)]


def undefined_warnings(records: Sequence[ResultRecord]) -> list[str]:
    """One warning line per distinct reason, naming the undefined (task, metric) pairs it explains."""
    by_reason: dict[str, list[str]] = {}
    for record in records:
        for metric, reason in record.undefined.items():
            by_reason.setdefault(reason, []).append(f"{record.task} {metric}")
    return [f"warning: n/a for {', '.join(names)}: {reason}" for reason, names in by_reason.items()]


def print_summary(records: Sequence[ResultRecord], output: str | Path) -> None:
    """One row per (task, metric): display name, mean ± std over seeds, the 95 % interval over items,
    the chance level, n, seeds and wall time; then each warning once."""
    rows = [
        (
            r.task,
            info_of(r, metric).display + (" *" if metric == r.main_metric else ""),
            _format(r, metric, value),
            _interval(r, metric),
            _chance(r, metric),
            str(r.dataset.get("size")),
            str(len(r.seeds)),
            f"{r.wall_seconds:.1f}s",
        )
        for r in records
        for metric, value in r.metrics.items()
    ]
    if not rows:
        return
    header = ("task", "metric", "value", "95% CI (items)", "chance", "n", "seeds", "time")
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(*header, title=f"model: {records[0].model['name']}" if records else None)
        for row in rows:
            table.add_row(*row)
        Console().print(table)
    else:
        for row in [header, *rows]:
            print("\t".join(row))
    for line in undefined_warnings(records) + run_warnings(records):
        print(line, file=sys.stderr)
    if records:
        print(f"results: {Path(output) / RESULTS_FILE} (* = main metric)", file=sys.stderr)
