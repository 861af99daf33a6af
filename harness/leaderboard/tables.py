"""The tables every output is written from: one wide table per family, data set and direction, and the long table."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from harness.leaderboard.families import Family
from harness.leaderboard.merge import Board, Column, Result, telling_apart
from harness.results.metrics import MetricInfo, info_of, interval_of, undefined_reason
from harness.results.records import ResultRecord, role_of

MISSING = "—"
RAN_ONCE_END = "the spread over seeds is undefined; the interval over items is shown instead"
UNDEFINED = "n/a"
ARROW = "→"
_PAIR = re.compile(r"^([A-Za-z]{2,3})-([A-Za-z]{2,3})$")


@dataclass(frozen=True)
class Cell:
    """A model's value in a column (``value`` None: undefined, ``reason`` says why).

    ``std`` and ``seeds``: the spread over seeds; ``interval``: (low, high) over items, if recorded;
    ``warnings``: what the results line warns about this cell's own number (a warning every cell of
    the column shares is the column's note instead, see ``FamilyTable.notes``), as sentences.
    """

    value: float | None
    std: float | None
    seeds: int
    interval: tuple[float, float] | None = None
    reason: str | None = None
    warnings: tuple[str, ...] = ()

    @property
    def number(self) -> str:
        """The value alone, ``n/a`` when undefined."""
        return UNDEFINED if self.value is None else f"{self.value:.4f}"

    @property
    def spread(self) -> str:
        """``[low, high]`` over items when recorded, else a non-zero ``± std`` over two or more seeds, else nothing."""
        if self.value is None:
            return ""
        if self.interval is not None:
            return f"[{self.interval[0]:.4f}, {self.interval[1]:.4f}]"
        if self.seeds > 1 and self.std is not None and f"{self.std:.4f}" != "0.0000":  # "± 0.0000" claims too much
            return f"± {self.std:.4f}"
        return ""

    @property
    def text(self) -> str:
        """The value with its interval (or spread over seeds), as one line."""
        return f"{self.number} {self.spread}".rstrip()


@dataclass(frozen=True)
class Row:
    """One model in a table; ``cells`` align with the table's columns (None: missing)."""

    label: str
    cells: tuple[Cell | None, ...]
    average: float | None


@dataclass(frozen=True)
class FamilyTable:
    """A family's columns and rows on one data set and direction.

    ``headers``: the short column headers; ``infos``: each column's metric info (direction and
    chance); ``averaged``: whether the table has an average column; ``notes``: per column, the
    warnings every one of its results carries (a note on the column, not on each cell).
    """

    family: Family
    dataset: str
    pair: str | None
    columns: tuple[Column, ...]
    headers: tuple[str, ...]
    infos: tuple[MetricInfo, ...]
    rows: tuple[Row, ...]
    averaged: bool
    notes: tuple[tuple[str, ...], ...] = ()
    descriptions: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        """``<data set> <direction>``."""
        return f"{self.dataset} {self.pair}" if self.pair else self.dataset

    @property
    def has_chance(self) -> bool:
        """Whether any column has a chance level."""
        return any(info.chance is not None for info in self.infos)


# lines written before the runner completed this sentence, and the sentence it completes it to
_CUT_OFF = ("the spread over seeds is not defined, the interval over items is", RAN_ONCE_END)


def sentence(text: str, tasks: tuple[str, ...] = ()) -> str:
    """A warning or note as a complete sentence: without the ``task: `` prefix of one of ``tasks``
    (the column already names the task), capitalised, ending with a full stop."""
    body = " ".join(str(text).split())
    for task in sorted(tasks, key=len, reverse=True):
        if body.startswith(f"{task}: "):
            body = body[len(task) + 2 :]
            break
    if body.endswith(_CUT_OFF[0]):
        body = body[: -len(_CUT_OFF[0])] + _CUT_OFF[1]
    if not body:
        return body
    body = body[0].upper() + body[1:]
    return body if body.endswith((".", "!", "?")) else body + "."


def cell_of(record: ResultRecord, metric: str, shared: tuple[str, ...] = ()) -> Cell:
    """The cell of one metric of a results line; ``shared``: the column's warnings, left off the cell."""
    interval = interval_of(record, metric)
    return Cell(
        record.metrics.get(metric),
        record.metrics_std.get(metric),
        len(record.seeds),
        interval[:2] if interval else None,
        undefined_reason(record, metric),
        tuple(sentence(w, (record.task,)) for w in record.warnings if w not in shared),
    )


def column_notes(board: Board, column: Column) -> tuple[str, ...]:
    """The warnings every current result of the column carries, in the order the lines give them."""
    results = [board.cells[key, column] for key in board.labels if (key, column) in board.cells]
    if not results:
        return ()
    first = results[0].record.warnings
    return tuple(w for w in dict.fromkeys(first) if all(w in r.record.warnings for r in results[1:]))


def pair_of(record: ResultRecord) -> str | None:
    """The language pair: the ``src``/``tgt`` arguments, else a split named ``xx-yy``, else the ``lang`` argument."""
    args = record.task_args
    if "src" in args and "tgt" in args:
        return f"{args['src']}{ARROW}{args['tgt']}"
    match = _PAIR.match(str(record.dataset.get("split") or ""))
    if match:
        return f"{match.group(1)}{ARROW}{match.group(2)}"
    return str(args["lang"]) if "lang" in args else None


_PAIR_FOLDER = re.compile(r"^[A-Za-z]{2,3}[-._][A-Za-z]{2,3}$")


def dataset_name(record: ResultRecord) -> str:
    """The data set a line was computed on: the last part of its source (a folder or Hub id), leaving out
    a folder that only names the language pair (``ikea/en.de`` is ``ikea``); the loader for generated
    data. A preset that points the ``ikea`` loader at ``~/data/ikea-es`` is ``ikea-es``."""
    source = str(record.dataset.get("source") or "").replace("\\", "/").rstrip("/")
    parts = [p for p in source.split("/") if p not in ("", ".", "..", "~")]
    while parts and _PAIR_FOLDER.match(parts[-1]):
        parts.pop()
    if parts:
        return parts[-1]
    return str(record.dataset.get("loader") or record.task_args.get("dataset") or "data")


def dataset_of(record: ResultRecord) -> str:
    """The data set's name (``dataset_name``) and its split (unless the split only names the language pair)."""
    split = record.dataset.get("split")
    parts = [dataset_name(record)]
    if split and not _PAIR.match(str(split)):
        parts.append(split)
    return " ".join(str(p) for p in parts)


def description_of(board: Board, column: Column) -> str:
    """What a column's metric measures, as its results line describes it (empty when it does not), as a sentence."""
    info = board.example(column).metric_info.get(column.metric) or {}
    text = info.get("description")
    return sentence(text) if isinstance(text, str) and text.strip() else ""


def averages_allowed(family: Family, columns: list[Column]) -> bool:
    """An average is shown for families that define one, over two or more roles with one column each."""
    roles = [c.role for c in columns]
    return family.average and len(roles) > 1 and len(set(roles)) == len(roles)


def _average(cells: list[Cell | None]) -> float | None:
    """The mean over the columns, only when the model has a defined value in every one of them."""
    defined = [cell.value for cell in cells if cell is not None and cell.value is not None]
    return sum(defined) / len(defined) if cells and len(defined) == len(cells) else None


def _rank_key(row: Row, infos: tuple[MetricInfo, ...]) -> tuple[Any, ...]:
    """Best first: by the average, then column by column in each metric's direction; missing and undefined last.
    Columns without a direction (``higher_is_better`` null: counts, tie rates, hubness) do not rank."""
    signs = [1.0] + [info.rank_sign for info in infos]
    values = [row.average] + [c.value if c is not None else None for c in row.cells]
    return (
        *tuple(-s * v if v is not None and math.isfinite(v) else math.inf for s, v in zip(signs, values) if s != 0),
        row.label,
    )


def headers_of(columns: list[Column], infos: list[MetricInfo]) -> list[str]:
    """Short headers: the metric's display name; the task's name too when columns of two tasks share it; the
    signature parts that differ when that is still not enough."""
    headers = [info.display for info in infos]
    roles = {h: {c.role for c, other in zip(columns, headers) if other == h} for h in headers}
    headers = [f"{c.role} {h}" if len(roles[h]) > 1 else h for c, h in zip(columns, headers)]
    for header in {h for h in headers if headers.count(h) > 1}:
        same = [i for i, h in enumerate(headers) if h == header]
        differing = telling_apart(columns[i].signature for i in same)
        for i in same:
            headers[i] = f"{header} ({', '.join(differing[columns[i].signature])})"
    return headers


def family_tables(board: Board) -> list[FamilyTable]:
    """One table per family, data set and direction present: rows are the models with one of its columns (worked out
    once per board: the plots read them too)."""
    return list(board.once("tables", _family_tables))


def _family_tables(board: Board) -> list[FamilyTable]:
    tables = []
    for family, family_columns in board.families():
        groups: dict[tuple[str, str | None], list[Column]] = {}
        for column in family_columns:
            example = board.example(column)
            groups.setdefault((dataset_of(example), pair_of(example)), []).append(column)
        for (dataset, pair), columns in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1] or "")):
            infos = [info_of(board.example(c), c.metric) for c in columns]
            averaged = averages_allowed(family, columns)
            shared = [column_notes(board, c) for c in columns]
            rows = []
            for key, label in board.labels.items():
                results: list[Result | None] = [board.cells.get((key, column)) for column in columns]
                if all(r is None for r in results):
                    continue
                cells = [
                    cell_of(r.record, c.metric, notes) if r is not None else None
                    for r, c, notes in zip(results, columns, shared)
                ]
                rows.append(Row(label, tuple(cells), _average(cells) if averaged else None))
            ranked = tuple(sorted(rows, key=lambda row: _rank_key(row, tuple(infos))))
            tables.append(
                FamilyTable(
                    family,
                    dataset,
                    pair,
                    tuple(columns),
                    tuple(headers_of(columns, infos)),
                    tuple(infos),
                    ranked,
                    averaged,
                    tuple(tuple(sentence(n, c.tasks) for n in notes) for c, notes in zip(columns, shared)),
                    tuple(description_of(board, c) for c in columns),
                )
            )
    return tables


def note_marks(table: FamilyTable) -> list[int | None]:
    """Per column, the number of its note (1, 2, ... in column order; columns with the same notes share one
    number), None for a column without notes."""
    numbers: dict[tuple[str, ...], int] = {}
    return [numbers.setdefault(notes, len(numbers) + 1) if notes else None for notes in table.notes] or [
        None for _ in table.columns
    ]


def column_note_lines(table: FamilyTable) -> list[tuple[int, str, str]]:
    """(number, the columns it holds for, its text) per distinct column note: ``(1, "TC, GTC", "...")``."""
    found: dict[int, tuple[list[str], str]] = {}
    for mark, header, notes in zip(note_marks(table), table.headers, table.notes):
        if mark is not None:
            found.setdefault(mark, ([], " ".join(notes)))[0].append(header)
    return [(mark, ", ".join(headers), text) for mark, (headers, text) in found.items()]


LONG_FIELDS = (
    "model",
    "task",
    "metric",
    "value",
    "std",
    "low",
    "high",
    "n",
    "seeds",
    "signature",
    "task_signature",
    "harness_version",
    "date",
)


def result_family(board: Board, result: Result) -> str:
    """The name of the family a result is shown in."""
    return board.index.of_record(result.record).name


class _Absent:
    """An argument or field a line does not have (unlike one that is null)."""


_ABSENT = _Absent()
_TEXT = frozenset({str, type(None), _Absent})  # what a line's facts can be keyed by: equal values, equal text


def _facts_key(record: ResultRecord) -> tuple[Any, ...] | None:
    """Everything ``dataset_of``, ``pair_of``, ``role_of`` and the family read from a line, when all of it is text or
    absent (a number could equal another number written differently: ``0.0`` and ``-0.0``); else None."""
    dataset, args = record.dataset, record.task_args
    key = (
        dataset.get("source", _ABSENT),
        dataset.get("loader", _ABSENT),
        dataset.get("split", _ABSENT),
        args.get("dataset", _ABSENT),
        args.get("src", _ABSENT),
        args.get("tgt", _ABSENT),
        args.get("lang", _ABSENT),
        record.task,
        record.role,
        record.family,
    )
    return key if set(map(type, key)) <= _TEXT else None


def row_parts(board: Board, detailed: bool) -> Iterator[tuple[Result, dict[str, Any], list[dict[str, Any]]]]:
    """The long table's rows (``LONG_FIELDS`` and what leaderboard.json adds: ``export``) in two parts, per result, made as they are asked for: what its metrics share, and
    each metric's own fields (each with its keys in sorted order).

    A line's data set, direction, role and family are worked out once per distinct configuration, not per line."""
    facts: dict[tuple[Any, ...], tuple[str, str | None, str, str]] = {}
    for result in board.results:
        if result.superseded and not detailed:
            continue
        record = result.entry.record
        key = _facts_key(record)
        found = facts.get(key) if key is not None else None
        if found is None:
            found = (dataset_of(record), pair_of(record), role_of(record), result_family(board, result))
            if key is not None:
                facts[key] = found
        seeds, intervals, undefined = record.seeds, record.intervals, record.undefined
        shared = {  # keys in sorted order, as leaderboard.json writes each group (no sorting needed when nothing nests)
            "dataset": found[0],
            "date": record.started,
            "family": found[3],
            "harness_version": record.harness.get("version"),
            "model": result.model_label,
            "n": record.dataset.get("size"),
            "pair": found[1],
            "role": found[2],
            "seed_list": seeds,
            "seeds": len(seeds),
            "signature": record.signature,
            "superseded": result.superseded,
            "task": record.task,
            "task_signature": record.task_signature,
            "warnings": record.warnings,
        }
        metrics = []
        for metric, value in record.metrics.items():
            interval = interval_of(record, metric) if intervals else None
            metrics.append(
                {
                    "high": interval[1] if interval else None,
                    "low": interval[0] if interval else None,
                    "main": metric == record.main_metric,
                    "metric": metric,
                    "per_seed": record.per_seed.get(metric, []),
                    "std": record.metrics_std.get(metric),
                    "undefined": undefined_reason(record, metric) if undefined else None,
                    "value": value,
                }
            )
        yield result, shared, metrics
