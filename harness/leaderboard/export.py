"""``leaderboard.csv`` (current results) and ``leaderboard.json`` (all results, superseded flagged)."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, BinaryIO, TextIO

import orjson

from harness.leaderboard.merge import Board
from harness.leaderboard.tables import LONG_FIELDS, row_parts
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
    write_exports(board, None, buffer)
    return buffer.getvalue()


def to_json(board: Board) -> bytes:
    """``leaderboard.json`` as bytes (``write_exports``)."""
    buffer = io.BytesIO()
    write_exports(board, buffer, None)
    return buffer.getvalue()


def write_exports(board: Board, json_out: BinaryIO | None, csv_out: TextIO | None) -> None:
    """``leaderboard.json`` into ``json_out`` and ``leaderboard.csv`` into ``csv_out`` (either None: not written), in
    one pass over the results, each written as it is made (100,000 lines make 150 MB of JSON, never held whole).

    The JSON holds every result read, newest and superseded: ``{"models": {label: identity}, "results": [...]}``,
    one object per metric and line in ``results``, one per text line: the fields its line's metrics share, then its
    metric's own (each group with sorted keys). A model's identity (its results line's ``model``) is written once,
    under its label in ``models``, from its first row; a row whose line holds another identity (a later card, say)
    carries its own ``model_identity``. The CSV is the long table of current results: one line per (model, task
    signature, metric), the ``LONG_FIELDS``.
    """
    models: dict[str, Any] = {}
    if json_out is not None:
        for result in board.results:
            models.setdefault(result.model_label, result.entry.record.model)
        json_out.write(
            b'{"models": ' + _dumps(models, orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b',\n"results": [\n'
        )
    writer = csv.writer(csv_out, lineterminator="\n") if csv_out is not None else None
    if writer is not None:
        writer.writerow(LONG_FIELDS)
    separator = b""
    with gc_paused():
        for result, shared, metrics in row_parts(board, detailed=json_out is not None):
            if writer is not None and not result.superseded:
                for own in metrics:
                    row = {**shared, **own}
                    writer.writerow([csv_value(row[name]) for name in LONG_FIELDS])
            if json_out is None:
                continue
            identity = result.entry.record.model
            known = models[result.model_label]
            if known is not identity and known != identity:
                shared["model_identity"] = identity
            # row_parts gives each group's keys sorted: only what nests (an identity, a version that is an object
            # or a list) needs sorting
            nested = "model_identity" in shared or isinstance(shared["harness_version"], (dict, list))
            common = _dumps(shared, orjson.OPT_SORT_KEYS if nested else 0)[:-1] + b","  # open: a metric closes it
            rows = b",\n".join(common + _dumps(own, 0)[1:] for own in metrics)
            if rows:
                json_out.write(separator + rows)
                separator = b",\n"
    if json_out is not None:
        json_out.write(b"\n]}\n")


def _dumps(value: Any, option: int) -> bytes:
    """JSON (keys sorted with ``orjson.OPT_SORT_KEYS``); what orjson cannot write (an integer past 64 bits, nesting
    past 254) by ``json``."""
    try:
        return orjson.dumps(value, option=option)
    except orjson.JSONEncodeError:
        indent = 2 if option & orjson.OPT_INDENT_2 else None
        return json.dumps(
            value,
            sort_keys=bool(option & orjson.OPT_SORT_KEYS),
            ensure_ascii=False,
            indent=indent,
            separators=(",", ":"),
        ).encode()
