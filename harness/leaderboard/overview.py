"""The answer first: per family, data set and direction, the best model on the family's main metric,
the runner-up, and whether the gap between them is real.

The main metric of a table is its first column that ranks (its metric has a direction), in the
family's role order (``xlr`` R@10 for retrieval). The gap is told by the paired bootstrap of
``harness compare`` over the two runs' per-item samples when both logs can be read (with all of
``compare``'s checks: a log that fails them is "not compared", with a warning, and no winner is named); otherwise,
when there are no logs, by whether the two intervals over items overlap (which is weaker: overlapping intervals do not
show that there is no difference). Models tied with the best are named in the gap, and the
runner-up is the next model with another value (two forms of the same weights tie; the reader
wants the next real competitor). Values fixed by construction (a line that says its value is so
by construction, or an undefined value) never compete: a table holding only such values says so
and comes after the informative ones; a family holding only such values is collapsed into one
sentence. Controls (their card says why) are left out: they are never named best.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

from harness.errors import HarnessError, HarnessWarning
from harness.leaderboard.families import Family
from harness.leaderboard.merge import BY_CONSTRUCTION, Board, Column, Result
from harness.leaderboard.models import controls as control_keys
from harness.leaderboard.tables import Cell, FamilyTable, Row, sentence
from harness.results.bootstrap import Bootstrap
from harness.results.metrics import MetricInfo

NOTHING = "Nothing to compare."  # how a line whose values are all fixed begins its gap
RESAMPLES = 1000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Line:
    """One table's answer: who is best on its main metric, who comes next, and how they differ."""

    table: FamilyTable
    header: str
    best: tuple[str, Cell]
    runner_up: tuple[str, Cell] | None
    gap: str

    @property
    def title(self) -> str:
        """The table's data set and direction."""
        return self.table.title


@dataclass(frozen=True)
class FamilyOverview:
    """A family's lines, or (``collapsed``) one sentence saying why it has nothing to compare."""

    family: Family
    models: int
    lines: tuple[Line, ...]
    collapsed: str | None = None


def _main(table: FamilyTable) -> int | None:
    """The index of the table's main column: the first whose metric ranks."""
    return next((i for i, info in enumerate(table.infos) if info.rank_sign != 0), None)


def _ranked(table: FamilyTable, index: int) -> list[Row]:
    """The rows with a defined value in the column, best first; equal values keep the table's order."""
    sign = table.infos[index].rank_sign
    defined = [(r, c.value) for r in table.rows if (c := r.cells[index]) is not None and c.value is not None]
    return [r for r, _ in sorted(defined, key=lambda item: -sign * item[1])]


def _result(board: Board, column: Column, label: str) -> Result | None:
    key = next((k for k, shown in board.labels.items() if shown == label), None)
    return board.cells.get((key, column)) if key is not None else None


def paired_test(first: Result, second: Result) -> tuple[Bootstrap, int] | str | None:
    """``harness compare``'s paired bootstrap of first - second on their main metric (``paired_difference``, with
    all its checks), with the number of items (ids) it resampled; None when either has no per-item log; the reason
    (also issued as a ``HarnessWarning``) when the logs cannot be compared."""
    from harness.leaderboard.compare import paired_difference

    if not (first.record.samples_file and second.record.samples_file):
        return None
    try:
        paired = paired_difference(first, second, resamples=RESAMPLES, confidence=CONFIDENCE)
    except (HarnessError, OSError, ValueError) as exc:
        who = f"{first.model_label} and {second.model_label} on {first.record.task}"
        warnings.warn(f"{who} are not compared: {exc}", HarnessWarning, stacklevel=2)
        return str(exc)
    return paired.bootstrap, paired.units


def _signed(value: float) -> str:
    return f"{value:+.4f}"


def _tested(boot: Bootstrap, best: str, second: str, info: MetricInfo, units: str) -> str:
    p = f"p < {1 / boot.defined:.2g}" if boot.p_value == 0 else f"p = {boot.p_value:.3f}"
    head = (
        f"{best} − {second}: {_signed(boot.difference)}, {boot.confidence:.0%} interval "
        f"[{_signed(boot.low)}, {_signed(boot.high)}] (paired bootstrap over {units}, {p})"
    )
    if boot.low <= 0 <= boot.high:
        return f"{head}; the difference is not significant at {boot.confidence:.0%}."
    better = (boot.low > 0) == (info.rank_sign > 0)
    return f"{head}; {best if better else second} is better at {boot.confidence:.0%}."


def _overlap(best: Cell, second: Cell) -> str:
    if best.interval is None or second.interval is None:
        return "No interval over items is recorded for both, and no per-item samples: the gap is not tested."
    overlap = best.interval[0] <= second.interval[1] and second.interval[0] <= best.interval[1]
    if overlap:
        return "No per-item samples for a paired test; the two intervals over items overlap, so the gap is not shown to be real."
    return "No per-item samples for a paired test; the two intervals over items do not overlap."


def _gap(board: Board, table: FamilyTable, index: int, best: Row, second: Row) -> str:
    column, info = table.columns[index], table.infos[index]
    first_result, second_result = _result(board, column, best.label), _result(board, column, second.label)
    tested = paired_test(first_result, second_result) if first_result and second_result else None
    if isinstance(tested, str):
        return f"Not compared: {tested}."
    if tested is not None:
        return _tested(tested[0], best.label, second.label, info, f"{tested[1]} items")
    cells = best.cells[index], second.cells[index]
    assert cells[0] is not None and cells[1] is not None
    if cells[0].number == cells[1].number:
        return f"Tied at {cells[0].number}: no per-item samples for a paired test."
    return _overlap(cells[0], cells[1])


def _collapsed(board: Board, family: Family, columns: Sequence[Column], models: int) -> str | None:
    """One sentence when every result of the family is fixed (``Result.fixed``), else None."""
    results = [board.cells[key, c] for c in columns for key in board.labels if (key, c) in board.cells]
    if not results or not all(r.fixed for r in results):
        return None
    reasons = sorted(
        {sentence(w, (r.record.task,)) for r in results for w in r.record.warnings if BY_CONSTRUCTION in w}
    )
    who = f"its only model ({results[0].model_label}) gets" if models == 1 else f"all {models} models get"
    return f"{family.title}: {who} values fixed by construction or undefined (n/a), so nothing is compared." + (
        f" {reasons[0]}" if reasons else ""
    )


def _fixed_reason(result: Result | None) -> str:
    """Why a fixed value says nothing about the model: its line's by-construction warning, else undefined."""
    if result is None:
        return "Its value is fixed by construction."
    found = [sentence(w, (result.record.task,)) for w in result.record.warnings if BY_CONSTRUCTION in w]
    return found[0] if found else "Its value is undefined for this model (n/a)."


def _line(board: Board, table: FamilyTable, index: int, controls: set[str]) -> Line | None:
    """The table's answer, or None when no row has a value in its main column; ``controls`` (labels) never compete."""
    ranked = [row for row in _ranked(table, index) if row.label not in controls]
    if not ranked:
        return None
    header, column = table.headers[index], table.columns[index]
    results = {row.label: _result(board, column, row.label) for row in ranked}
    fixed = [row for row in ranked if (found := results[row.label]) is not None and found.fixed]
    competing = [row for row in ranked if row not in fixed]
    best = (competing or ranked)[0]
    cell = best.cells[index]
    assert cell is not None
    if not competing:
        return Line(table, header, (best.label, cell), None, f"{NOTHING} {_fixed_reason(results[best.label])}")
    tied = [row for row in competing[1:] if _value(row, index) == cell.value]
    others = [row for row in competing[1:] if row not in tied]
    if not (others or tied):
        if not fixed:
            return Line(table, header, (best.label, cell), None, "The only model with a value here.")
        names = ", ".join(row.label for row in fixed)
        return Line(
            table,
            header,
            (best.label, cell),
            None,
            f"No other model competes: the values of {names} are fixed by construction.",
        )
    second = (others or tied)[0]
    second_cell = second.cells[index]
    assert second_cell is not None
    gap = _gap(board, table, index, best, second)
    if tied and others:
        names = ", ".join(row.label for row in tied)
        gap = f"Tied with {names} at {cell.number}; the runner-up is the next model with another value. {gap}"
    return Line(table, header, (best.label, cell), (second.label, second_cell), gap)


def _value(row: Row, index: int) -> float | None:
    cell = row.cells[index]
    return None if cell is None else cell.value


def _informative(line: Line) -> bool:
    return not line.gap.startswith(NOTHING)


def overview(board: Board, tables: Sequence[FamilyTable]) -> list[FamilyOverview]:
    """Per family present (in the board's order: informative families first), its answer lines (tables whose
    values are all fixed by construction after the others)."""
    controls = {board.labels[key] for key in control_keys(board)}
    found = []
    for family, columns in board.families():
        models = len({key for key in board.labels for c in columns if (key, c) in board.cells})
        collapsed = _collapsed(board, family, columns, models)
        lines = []
        for table in (t for t in tables if t.family == family):
            index = _main(table)
            line = None if index is None else _line(board, table, index, controls)
            if line is not None:
                lines.append(line)
        lines.sort(key=lambda line: not _informative(line))  # stable: the tables' order within each group
        found.append(FamilyOverview(family, models, tuple(lines), collapsed))
    return found
