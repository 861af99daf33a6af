"""The tables every output is written from: one wide table per family, and the long table."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from harness.leaderboard.families import Family
from harness.leaderboard.merge import Board, Column, Result

MISSING = "—"
UNDEFINED = "n/a"


@dataclass(frozen=True)
class Cell:
    """A model's value in a column (``value`` None: undefined), with its std and number of seeds."""

    value: float | None
    std: float | None
    seeds: int

    @property
    def text(self) -> str:
        """``mean ± std`` over seeds, the bare value for one seed, ``n/a`` when undefined."""
        if self.value is None:
            return UNDEFINED
        if self.seeds > 1 and self.std is not None:
            return f"{self.value:.4f} ± {self.std:.4f}"
        return f"{self.value:.4f}"


@dataclass(frozen=True)
class Row:
    """One model in a family table; ``cells`` align with the table's columns (None: missing)."""

    label: str
    cells: tuple[Cell | None, ...]
    average: float | None


@dataclass(frozen=True)
class FamilyTable:
    """A family's columns and rows; ``averaged`` says whether the table has an average column."""

    family: Family
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    averaged: bool


def cell_of(result: Result, metric: str) -> Cell:
    """The cell of one metric of a result."""
    record = result.record
    return Cell(record.metrics.get(metric), record.metrics_std.get(metric), len(record.seeds))


def averages_allowed(family: Family, columns: list[Column]) -> bool:
    """An average is shown for families that define one, over two or more tasks with one column each."""
    tasks = [c.task for c in columns]
    return family.average and len(tasks) > 1 and len(set(tasks)) == len(tasks)


def _average(cells: list[Cell | None]) -> float | None:
    """The mean over the columns, only when the model has a defined value in every one of them."""
    defined = [cell.value for cell in cells if cell is not None and cell.value is not None]
    return sum(defined) / len(defined) if cells and len(defined) == len(cells) else None


def _rank_key(row: Row) -> tuple[Any, ...]:
    """Best first: by the average, then column by column; missing and undefined values last."""
    values = [row.average] + [c.value if c is not None else None for c in row.cells]
    return tuple(-v if v is not None and math.isfinite(v) else math.inf for v in values) + (row.label,)


def family_tables(board: Board) -> list[FamilyTable]:
    """One table per family present: rows are the models with at least one of its columns."""
    tables = []
    for family, columns in board.families():
        averaged = averages_allowed(family, columns)
        rows = []
        for key, label in board.labels.items():
            results = [board.cells.get((key, column)) for column in columns]
            if all(r is None for r in results):
                continue
            cells = [cell_of(r, c.metric) if r is not None else None for r, c in zip(results, columns)]
            rows.append(Row(label, tuple(cells), _average(cells) if averaged else None))
        tables.append(FamilyTable(family, tuple(columns), tuple(sorted(rows, key=_rank_key)), averaged))
    return tables


LONG_FIELDS = ("model", "task", "metric", "value", "std", "n", "seeds", "signature", "task_signature",
               "harness_version", "date")


def long_rows(board: Board, detailed: bool) -> list[dict[str, Any]]:
    """One row per (result, metric), in output order.

    Detailed rows (for JSON) cover superseded results too and add the main-metric flag, the
    per-seed values, the seeds, the model's identity and ``superseded``.
    """
    rows = []
    for result in board.results:
        if result.superseded and not detailed:
            continue
        record = result.record
        for metric, value in record.metrics.items():
            row = {
                "model": result.model_label, "task": record.task, "metric": metric, "value": value,
                "std": record.metrics_std.get(metric), "n": record.dataset.get("size"), "seeds": len(record.seeds),
                "signature": record.signature, "task_signature": record.task_signature,
                "harness_version": record.harness.get("version"), "date": record.started,
            }
            if detailed:
                row.update({"main": metric == record.main_metric, "per_seed": record.per_seed.get(metric, []),
                            "seed_list": record.seeds, "model_identity": record.model, "superseded": result.superseded})
            rows.append(row)
    return rows
