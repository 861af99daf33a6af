"""``leaderboard.csv`` (current results) and ``leaderboard.json`` (all results, superseded flagged)."""

from __future__ import annotations

import csv
import io
import json

from harness.leaderboard.merge import Board
from harness.leaderboard.tables import LONG_FIELDS, long_rows
from harness.results.load import gc_paused

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet reads as the start of a formula


def csv_value(value: object) -> object:
    """A CSV cell: empty for None; text that a spreadsheet would run as a formula gets a leading ``'``.

    Numbers are written as numbers (a negative correlation stays ``-0.5``); only text is guarded.
    """
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def to_csv(board: Board) -> str:
    """The long table of current results: one line per (model, task signature, metric)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LONG_FIELDS)
    for row in long_rows(board, detailed=False):
        writer.writerow([csv_value(row[name]) for name in LONG_FIELDS])
    return buffer.getvalue()


def to_json(board: Board) -> str:
    """Every result read, newest and superseded: a JSON array, one object per metric and line."""
    encode = json.JSONEncoder(sort_keys=True, ensure_ascii=False, allow_nan=False).encode  # one encoder, not one a row
    with gc_paused():
        rows = [encode(row) for row in long_rows(board, detailed=True)]
    return "[\n" + ",\n".join(rows) + "\n]\n"
