"""The table printed at the end of a run: rich on a terminal, tab-separated lines otherwise."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from harness.results.metrics import info_of, interval_of
from harness.results.records import RESULTS_FILE, ResultRecord


def _format(value: float | None, std: float | None, seeds: int) -> str:
    if value is None:
        return "n/a"
    return f"{value:.4f} ± {std:.4f}" if seeds > 1 and std is not None else f"{value:.4f}"


def _interval(record: ResultRecord, metric: str) -> str:
    bounds = interval_of(record, metric)
    return f"[{bounds[0]:.4f}, {bounds[1]:.4f}]" if bounds else ""


def _chance(record: ResultRecord, metric: str) -> str:
    chance = info_of(record, metric).chance
    return "" if chance is None else f"{chance:.4g}"


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
            _format(value, r.metrics_std.get(metric), len(r.seeds)),
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
