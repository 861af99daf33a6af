"""``harness commute-iou A B``: how much two models fail on the same CoMMuTE directions.

A and B are per-sample logs of CoMMuTE runs (``--log-samples``): a samples file, or a results
folder, whose latest CoMMuTE record with a samples file is used (``--task`` picks the task).
A failure is a (tuple id, direction) whose decision is 0; for TC and for IC (each when both
logs have it) the command prints both failure counts, the intersection, the union and
IoU = |F_A & F_B| / |F_A | F_B| (n/a when neither model fails).
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

from harness.errors import DataError, HarnessError
from harness.results.jsonl import BadLine, iter_json_lines
from harness.results.records import RESULTS_FILE, ResultRecord, family_of, read_records, role_of
from harness_tasks.commute.metrics import failure_iou

DIRECTIONS = ("ab", "ba")


def samples_path(location: str, task: str | None) -> Path:
    """The samples file itself, or the one of the latest CoMMuTE record in a results folder."""
    path = Path(location)
    if path.is_file():
        return path
    if not path.is_dir():
        raise HarnessError(f"{location!r} is neither a samples file nor a results folder")
    records, _ = read_records(path / RESULTS_FILE)
    matching = [
        r.samples_file for r in records if r.samples_file and (task in (r.task, role_of(r)) if task else _is_commute(r))
    ]
    if not matching:
        wanted = f"task {task!r}" if task else "a CoMMuTE task"
        raise HarnessError(
            f"{path / RESULTS_FILE} has no record of {wanted} with per-sample logs (run with --log-samples)"
        )
    return path / matching[-1]


def _is_commute(record: ResultRecord) -> bool:
    """A record of the CoMMuTE family (a line written before lines carried a family: by its role's prefix)."""
    family = family_of(record)
    return family == "commute" if family is not None else role_of(record).startswith("commute_")


def read_decisions(path: Path) -> dict[str, dict[tuple[str, str], int]]:
    """Per metric (tc, ic): the decision of every (tuple id, direction) in a samples file."""
    decisions: dict[str, dict[tuple[str, str], int]] = {}
    undefined: set[str] = set()  # decisions logged as null: undefined for this model (e.g. IC of a text-only scorer)
    for item in iter_json_lines(path):
        if isinstance(item, BadLine):
            raise DataError(str(path), f"not a JSON line ({item})", row=item.line)
        _, sample = item
        for metric in ("tc", "ic"):
            for direction in DIRECTIONS:
                value = sample.get(f"{metric}_{direction}")
                if value is not None:
                    decisions.setdefault(metric, {})[(str(sample.get("id")), direction)] = int(value)
                elif f"{metric}_{direction}" in sample:
                    undefined.add(metric.upper())
    if not decisions and undefined:
        raise DataError(
            str(path),
            f"its {' and '.join(sorted(undefined))} decisions are undefined: the model's scores "
            "cannot depend on the image (see `undefined` in its results line)",
        )
    if not decisions:
        raise DataError(str(path), "has no TC or IC decisions (is it a CoMMuTE samples file?)")
    return decisions


def iou_rows(
    first: dict[str, dict[tuple[str, str], int]], second: dict[str, dict[tuple[str, str], int]]
) -> list[dict[str, Any]]:
    """One row per metric both logs have: failure counts, intersection, union, IoU."""
    rows = []
    for metric in ("tc", "ic"):
        if metric not in first or metric not in second:
            continue
        a, b = first[metric], second[metric]
        if a.keys() != b.keys():
            differing = sorted(a.keys() ^ b.keys())[:3]
            raise HarnessError(
                f"the two logs do not cover the same {metric.upper()} directions (e.g. {differing}): "
                "compare runs on the same language and data"
            )
        fails_a = {key for key, value in a.items() if value == 0}
        fails_b = {key for key, value in b.items() if value == 0}
        rows.append(
            {
                "metric": metric.upper(),
                "failures_a": len(fails_a),
                "failures_b": len(fails_b),
                "both": len(fails_a & fails_b),
                "either": len(fails_a | fails_b),
                "iou": failure_iou(fails_a, fails_b),
            }
        )
    if not rows:
        raise HarnessError("the two logs share no metric (one has only TC decisions, the other only IC)")
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table."""
    lines = ["| metric | failures A | failures B | both | either | IoU |", "|---|---:|---:|---:|---:|---:|"]
    for row in rows:
        iou = "n/a" if math.isnan(row["iou"]) else f"{row['iou']:.4f}"
        lines.append(
            f"| {row['metric']} | {row['failures_a']} | {row['failures_b']} | {row['both']} | {row['either']} | {iou} |"
        )
    return "\n".join(lines)


class FailureIoU:
    """Failure IoU of two CoMMuTE runs (TC and IC) from their per-sample logs."""

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Two logs and an optional task filter."""
        parser.add_argument("first", help="samples file or results folder of model A")
        parser.add_argument("second", help="samples file or results folder of model B")
        parser.add_argument(
            "--task",
            default=None,
            help="in results folders, use the latest record of this task (or of a task in this role)",
        )

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        """Print the table."""
        first = read_decisions(samples_path(args.first, args.task))
        second = read_decisions(samples_path(args.second, args.task))
        print(markdown(iou_rows(first, second)))
        return 0


COMMAND = FailureIoU()
