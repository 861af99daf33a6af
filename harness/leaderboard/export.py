"""``leaderboard.csv`` (current results) and ``leaderboard.json`` (all results, superseded flagged)."""

from __future__ import annotations

import csv
import io
import json

from harness.leaderboard.merge import Board
from harness.leaderboard.tables import LONG_FIELDS, long_rows


def _csv_value(value: object) -> object:
    return "" if value is None else value


def to_csv(board: Board) -> str:
    """The long table of current results: one line per (model, task signature, metric)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(LONG_FIELDS)
    for row in long_rows(board, detailed=False):
        writer.writerow([_csv_value(row[name]) for name in LONG_FIELDS])
    return buffer.getvalue()


def to_json(board: Board) -> str:
    """Every result read, newest and superseded: a JSON array, one object per metric and line."""
    rows = [json.dumps(row, sort_keys=True, ensure_ascii=False, allow_nan=False) for row in long_rows(board, detailed=True)]
    return "[\n" + ",\n".join(rows) + "\n]\n"
