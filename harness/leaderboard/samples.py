"""Per-sample logs (``--log-samples``) of two runs, aligned into the arrays the bootstrap resamples.

A sample is keyed by its ``id`` and, for seeded tasks, its ``seed``; the unit of resampling is
the id, so all samples of an id (one per seed) move together.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.jsonl import BadLine, iter_json_lines
from harness.leaderboard.bootstrap import Paired, Statistic
from harness.leaderboard.load import Entry

Key = tuple[Any, str]


def _bad(path: Path, line: int, problem: str) -> HarnessError:
    return HarnessError(f"{path}, line {line}: {problem}")


def samples_path(entry: Entry) -> Path:
    """The per-sample log of a result (beside its results file)."""
    record = entry.record
    if not record.samples_file:
        raise HarnessError(f"{record.model.get('name')} on {record.task} has no per-sample log in {entry.source} "
                           "(run it with --log-samples)")
    path = entry.source.parent / record.samples_file
    if not path.is_file():
        raise HarnessError(f"per-sample log {str(path)!r} not found")
    return path


def read_samples(entry: Entry, fields: tuple[str, ...]) -> dict[Key, tuple[float, ...]]:
    """The values of ``fields`` of every sample, by (seed, id); the file must belong to the result."""
    path = samples_path(entry)
    values: dict[Key, tuple[float, ...]] = {}
    for item in iter_json_lines(path):
        if isinstance(item, BadLine):
            raise _bad(path, item.line, item.reason)
        line, row = item
        if not isinstance(row, dict) or "id" not in row:
            raise _bad(path, line, "a sample without an 'id'")
        if row.get("signature", entry.record.signature) != entry.record.signature:
            raise _bad(path, line, "the sample belongs to another run (its signature differs from the result's)")
        numbers = []
        for name in fields:
            if name not in row:
                raise _bad(path, line, f"no field {name!r} (choose what to compute with --statistic)")
            value = row[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise _bad(path, line, f"field {name!r}: expected a finite number, got {value!r}")
            numbers.append(float(value))
        key = (row.get("seed"), str(row["id"]))
        if key in values:
            raise _bad(path, line, f"sample {key[1]!r} appears twice" + (f" for seed {key[0]}" if key[0] is not None else ""))
        values[key] = tuple(numbers)
    if not values:
        raise HarnessError(f"per-sample log {str(path)!r} has no samples")
    return values


def align(first: dict[Key, tuple[float, ...]], second: dict[Key, tuple[float, ...]], statistic: Statistic) -> tuple[Paired, int]:
    """The paired per-unit arrays of two runs, and the number of samples; both must cover the same samples."""
    if first.keys() != second.keys():
        only_a, only_b = len(first.keys() - second.keys()), len(second.keys() - first.keys())
        raise HarnessError(f"the two per-sample logs cover different samples ({only_a} only in A, {only_b} only in B); "
                           "a paired comparison needs the same samples")
    units: dict[str, list[Key]] = defaultdict(list)
    for key in sorted(first, key=lambda k: (k[1], str(k[0]))):
        units[key[1]].append(key)
    ids = sorted(units)
    if statistic.kind == "mean":
        a = np.array([sum(sum(first[k]) for k in units[i]) for i in ids])
        b = np.array([sum(sum(second[k]) for k in units[i]) for i in ids])
        counts = np.array([len(units[i]) * len(statistic.fields) for i in ids], dtype=float)
        return Paired("mean", a, b, counts), len(first)
    if any(len(keys) > 1 for keys in units.values()):
        raise HarnessError(f"statistic {statistic.kind!r} needs one sample per id, but some ids have several (seeds)")
    keys = [units[i][0] for i in ids]
    reference = np.array([first[k][1] for k in keys])
    if not np.array_equal(reference, [second[k][1] for k in keys]):
        raise HarnessError(f"the reference field {statistic.fields[1]!r} differs between the two logs: not the same samples")
    if statistic.kind == "auc" and not np.isin(reference, (0.0, 1.0)).all():
        raise HarnessError(f"statistic 'auc' needs 0/1 labels in {statistic.fields[1]!r}")
    return Paired(statistic.kind, np.array([first[k][0] for k in keys]), np.array([second[k][0] for k in keys]), reference), len(first)
