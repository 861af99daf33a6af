"""Per-sample logs (``--log-samples``) of two runs, aligned into the arrays the bootstrap resamples.

A sample is keyed by its ``id`` and, for seeded tasks, its ``seed``; the unit of resampling is
the id, so all samples of an id (one per seed) move together.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.results.bootstrap import Paired, Statistic, Units
from harness.results.jsonl import BadLine, iter_json_lines
from harness.results.load import Entry

Key = tuple[Any, str]


def _bad(path: Path, line: int, problem: str) -> HarnessError:
    return HarnessError(f"{path}, line {line}: {problem}")


def samples_path(entry: Entry) -> Path:
    """The per-sample log of a result (beside its results file)."""
    record = entry.record
    if not record.samples_file:
        raise HarnessError(
            f"{record.model.get('name')} on {record.task} has no per-sample log in {entry.source} "
            "(run it with --log-samples)"
        )
    path = entry.source.parent / record.samples_file
    if not path.is_file():
        raise HarnessError(f"per-sample log {str(path)!r} not found")
    return path


def sample_values(
    rows: Iterable[tuple[int, Any]], fields: tuple[str, ...], where: str, hint: str = ""
) -> dict[Key, tuple[float, ...]]:
    """The values of ``fields`` of every (position, sample) row, by (seed, id).

    ``where`` names the origin in error messages (``"<file>, line"``, ``"task 'xlr', sample"``);
    ``hint`` is added to a missing-field error.
    """
    values: dict[Key, tuple[float, ...]] = {}
    for position, row in rows:
        if not isinstance(row, dict) or "id" not in row:
            raise HarnessError(f"{where} {position}: a sample without an 'id'")
        numbers = []
        for name in fields:
            if name not in row:
                raise HarnessError(f"{where} {position}: no field {name!r}{hint}")
            value = row[name]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise HarnessError(f"{where} {position}: field {name!r}: expected a finite number, got {value!r}")
            numbers.append(float(value))
        key = (row.get("seed"), str(row["id"]))
        if key in values:
            raise HarnessError(
                f"{where} {position}: sample {key[1]!r} appears twice"
                + (f" for seed {key[0]}" if key[0] is not None else "")
            )
        values[key] = tuple(numbers)
    return values


def read_samples(entry: Entry, fields: tuple[str, ...]) -> dict[Key, tuple[float, ...]]:
    """The values of ``fields`` of every sample, by (seed, id); the file must belong to the result."""
    path = samples_path(entry)

    def rows() -> Iterator[tuple[int, Any]]:
        for item in iter_json_lines(path):
            if isinstance(item, BadLine):
                raise _bad(path, item.line, item.reason)
            line, row = item
            if isinstance(row, dict) and row.get("signature", entry.record.signature) != entry.record.signature:
                raise _bad(path, line, "the sample belongs to another run (its signature differs from the result's)")
            yield line, row

    values = sample_values(rows(), fields, f"{path}, line", " (choose what to compute with --statistic)")
    if not values:
        raise HarnessError(f"per-sample log {str(path)!r} has no samples")
    return values


def to_units(values: dict[Key, tuple[float, ...]], statistic: Statistic) -> Units:
    """The per-unit arrays of one run's samples; a unit is an id (all its samples, one per seed, together).

    Units are in the order of their sorted ids.
    """
    units: dict[str, list[Key]] = defaultdict(list)
    for key in sorted(values, key=lambda k: (k[1], str(k[0]))):
        units[key[1]].append(key)
    ids = sorted(units)
    if statistic.kind == "mean":
        sums = np.array([sum(sum(values[k]) for k in units[i]) for i in ids])
        counts = np.array([len(units[i]) * len(statistic.fields) for i in ids], dtype=float)
        return Units("mean", sums, counts)
    if statistic.kind == "moments":
        seeds = sorted({str(k[0]) for k in values})
        column = {seed: index for index, seed in enumerate(seeds)}
        moments = np.zeros((len(ids), len(seeds), len(statistic.fields)))
        for row, i in enumerate(ids):
            for key in units[i]:
                moments[row, column[str(key[0])]] += values[key]
        return Units("moments", moments, np.zeros(len(ids)))
    if any(len(keys) > 1 for keys in units.values()):
        raise HarnessError(f"statistic {statistic.kind!r} needs one sample per id, but some ids have several (seeds)")
    keys = [units[i][0] for i in ids]
    reference = np.array([values[k][1] for k in keys])
    if statistic.kind == "auc" and not np.isin(reference, (0.0, 1.0)).all():
        raise HarnessError(f"statistic 'auc' needs 0/1 labels in {statistic.fields[1]!r}")
    return Units(statistic.kind, np.array([values[k][0] for k in keys]), reference)


def align(
    first: dict[Key, tuple[float, ...]], second: dict[Key, tuple[float, ...]], statistic: Statistic
) -> tuple[Paired, int]:
    """The paired per-unit arrays of two runs, and the number of samples; both must cover the same samples."""
    if first.keys() != second.keys():
        only_a, only_b = len(first.keys() - second.keys()), len(second.keys() - first.keys())
        raise HarnessError(
            f"the two per-sample logs cover different samples ({only_a} only in A, {only_b} only in B); "
            "a paired comparison needs the same samples"
        )
    a, b = to_units(first, statistic), to_units(second, statistic)
    if statistic.paired_per_id and not np.array_equal(a.reference, b.reference):
        raise HarnessError(
            f"the reference field {statistic.fields[1]!r} differs between the two logs: not the same samples"
        )
    return Paired(statistic.kind, a.values, b.values, a.reference), len(first)
