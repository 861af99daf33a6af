"""Per-sample logs (``--log-samples``) of two runs, aligned into the arrays the bootstrap resamples.

A sample is keyed by its ``id`` and, for seeded tasks, its ``seed``; the unit of resampling is
the id, so all samples of an id (one per seed) move together.

A log may also be compact (what the committed leaderboard keeps): gzip-compressed JSON Lines named
``samples_<task>_<hash>.jsonl.gz``, whose first line is a header ``{"signature": ..., "compact": [fields]}``
and whose samples keep only ``id``, ``seed`` and the fields that the line's ``metric_info`` statistics
read, which is all ``harness compare`` needs. A run writes it so with ``log_form="compact"`` (``harness
suite``'s ``logs: compact``) and its line names that file; ``compact_folder`` converts full logs. Lines
written before that name the full ``.jsonl``: the compact file beside it (``<samples_file>.gz``) is found too.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import zlib
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.results import jsonl
from harness.results.bootstrap import Paired, Statistic, Units
from harness.results.jsonl import BadLine, bounded_lines, iter_json_lines, json_lines, write_json_lines_atomic
from harness.results.load import Entry
from harness.results.records import RESULTS_FILE, ResultRecord, finite_number, read_records, role_of

Key = tuple[Any, str]
COMPACT_SUFFIX = ".gz"
MAX_DECOMPRESSED = 1 << 30  # bytes a compact log may expand to (about ten million samples)


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
    path = entry.source.parent / _own_name(record.samples_file, entry.source)
    for found in (path, compact_path(path)):
        if found.is_file():
            return found
    raise HarnessError(f"per-sample log {str(path)!r} not found (nor its compact {compact_path(path).name!r})")


def _own_name(name: str, source: Path) -> str:
    """``samples_file`` as a name inside the results file's folder; one that leaves it (absolute, ``..``) is refused."""
    parts = PurePosixPath(name).parts
    if not parts or PurePosixPath(name).is_absolute() or ".." in parts or "\\" in name:
        raise HarnessError(
            f"{source}: samples_file {name!r} is not a file name inside the results folder; not read or written"
        )
    return name


def compact_path(path: Path) -> Path:
    """Where the compact, compressed form of the per-sample log ``path`` is kept: beside it, ``.gz`` added."""
    return path.with_name(path.name + COMPACT_SUFFIX)


def _lines(path: Path) -> Iterator[tuple[int, Any] | BadLine]:
    """The log's lines as ``iter_json_lines`` gives them, from a plain or a gzip-compressed file. A compressed one
    is first read through once (``_check_compressed``), so damage anywhere in it is told as damage, never as the
    garbled line it decompresses to."""
    if path.suffix != COMPACT_SUFFIX:
        yield from iter_json_lines(path)
        return
    _check_compressed(path)
    try:
        with gzip.open(path, "rb") as handle:
            yield from json_lines(handle, str(path))
    except (OSError, EOFError, zlib.error) as exc:  # changed since it was checked
        raise HarnessError(f"{path}: not a readable gzip file ({exc})") from None


def _check_compressed(path: Path) -> None:
    """A ``HarnessError`` naming ``path`` when it is not gzip, is cut short or damaged (its CRC, checked at the
    end), holds a line past ``MAX_LINE`` or expands past ``MAX_DECOMPRESSED``; each found as soon as it is read,
    with memory bounded by a line."""
    try:
        with gzip.open(path, "rb") as handle:
            for number, raw in bounded_lines(handle, jsonl.MAX_LINE):
                if raw is None:
                    raise _bad(path, number, jsonl.too_long())
                if handle.tell() > MAX_DECOMPRESSED:
                    raise HarnessError(
                        f"{path}: expands past {MAX_DECOMPRESSED >> 20} MiB, which no compact log the harness "
                        "writes does; not read further"
                    )
    except (OSError, EOFError, zlib.error) as exc:  # not gzip, cut short, or damaged inside
        raise HarnessError(f"{path}: not a readable gzip file ({exc})") from None


def sample_values(
    rows: Iterable[tuple[int, Any]], fields: tuple[str, ...], where: str, hint: str = ""
) -> dict[Key, tuple[float, ...]]:
    """The values of ``fields`` of every (position, sample) row, by (seed, id).

    ``where`` names the origin in error messages (``"<file>, line"``, ``"task 'xlr', sample"``);
    ``hint`` is added to a missing-field error. Checked a column at a time (ints and floats, all finite);
    a column that fails is checked again row by row, so that the error names the first bad row.
    """
    collected: list[tuple[int, Any]] = []
    try:
        collected.extend(rows)
    except HarnessError:  # a line the reader refused: a bad row before it is named first
        _sample_values_checked(collected, fields, where, hint)
        raise
    rows = collected
    samples = [row for _, row in rows]
    if all(isinstance(row, dict) and "id" in row for row in samples):
        columns = [column for name in fields if (column := _finite_column(samples, name)) is not None]
        if len(columns) == len(fields):
            keys: list[Key] = [(row.get("seed"), str(row["id"])) for row in samples]
            numbers: list[tuple[float, ...]] = list(zip(*columns)) if fields else [()] * len(keys)
            values = dict(zip(keys, numbers))
            if len(values) == len(keys):
                return values
    return _sample_values_checked(rows, fields, where, hint)


def _finite_column(samples: list[dict[str, Any]], name: str) -> list[float] | None:
    """Every sample's ``name`` as floats when each has it, an int or a float (not a bool), finite; else None."""
    try:
        column = [row[name] for row in samples]
    except KeyError:
        return None
    if not set(map(type, column)) <= {float, int}:
        return None
    try:
        numbers = np.array(column, dtype=float)
    except OverflowError:  # an integer past a float's range
        return None
    return numbers.tolist() if np.isfinite(numbers).all() else None


def _sample_values_checked(
    rows: list[tuple[int, Any]], fields: tuple[str, ...], where: str, hint: str
) -> dict[Key, tuple[float, ...]]:
    """``sample_values`` row by row: the first bad row's error."""
    values: dict[Key, tuple[float, ...]] = {}
    for position, row in rows:
        if not isinstance(row, dict) or "id" not in row:
            raise HarnessError(f"{where} {position}: a sample without an 'id'")
        numbers = []
        for name in fields:
            if name not in row:
                raise HarnessError(f"{where} {position}: no field {name!r}{hint}")
            number = finite_number(row[name])
            if number is None:
                shown = repr(row[name])
                shown = shown if len(shown) <= 40 else shown[:37] + "..."
                raise HarnessError(f"{where} {position}: field {name!r}: expected a finite number, got {shown}")
            numbers.append(number)
        key = (row.get("seed"), str(row["id"]))
        if key in values:
            raise HarnessError(
                f"{where} {position}: sample {key[1]!r} appears twice"
                + (f" for seed {key[0]}" if key[0] is not None else "")
            )
        values[key] = tuple(numbers)
    return values


_READ: dict[tuple[Any, ...], dict[Key, tuple[float, ...]]] = {}  # read_samples' last results, by file state
_READ_KEPT = 256


def read_samples(entry: Entry, fields: tuple[str, ...]) -> dict[Key, tuple[float, ...]]:
    """The values of ``fields`` of every sample, by (seed, id); the file must belong to the result.

    A file read before (same path, inode, size and modification time; same fields and signature) is not read
    again: a leaderboard build asks for each log several times (the ranks, the meta-evaluation, the item pages)."""
    path = samples_path(entry)
    state = path.stat()
    key = (str(path), state.st_ino, state.st_size, state.st_mtime_ns, fields, entry.record.signature)
    if key not in _READ:
        if len(_READ) >= _READ_KEPT:
            del _READ[next(iter(_READ))]
        _READ[key] = _read_samples(path, entry, fields)
    return dict(_READ[key])


def _read_samples(path: Path, entry: Entry, fields: tuple[str, ...]) -> dict[Key, tuple[float, ...]]:
    compact = path.suffix == COMPACT_SUFFIX

    def rows() -> Iterator[tuple[int, Any]]:
        for position, item in enumerate(_lines(path)):
            if isinstance(item, BadLine):
                raise _bad(path, item.line, item.reason)
            line, row = item
            if isinstance(row, dict) and row.get("signature", entry.record.signature) != entry.record.signature:
                raise _bad(path, line, "the sample belongs to another run (its signature differs from the result's)")
            header = position == 0 and isinstance(row, dict) and "compact" in row and "id" not in row
            if header and ("signature" in row or not compact):
                continue  # the header of a compact log: its signature was checked above
            if compact and position == 0:
                raise _bad(
                    path, line, "a compact log without a header naming its run's signature: it cannot be checked"
                )
            yield line, row

    hint = " (choose what to compute with --statistic)"
    if compact:
        hint = " (a compact log keeps only the fields of the results line's statistics; choose among them)"
    values = sample_values(rows(), fields, f"{path}, line", hint)
    if not values:
        raise HarnessError(f"per-sample log {str(path)!r} has no samples")
    return values


def to_units(values: dict[Key, tuple[float, ...]], statistic: Statistic) -> Units:
    """The per-unit arrays of one run's samples; a unit is an id (all its samples, one per seed, together).

    Units are in the order of their sorted ids. A ``mean`` unit's sum adds its samples in the order of their
    seeds as text, each sample's fields left to right (as ``sum`` over the sorted samples does, bit for bit).
    """
    keys = list(values)
    ids = sorted({key[1] for key in keys})
    seeds = sorted({str(key[0]) for key in keys})
    unit_of, seed_of = {i: n for n, i in enumerate(ids)}, {s: n for n, s in enumerate(seeds)}
    unit = np.fromiter((unit_of[key[1]] for key in keys), dtype=np.int64, count=len(keys))
    seed = np.fromiter((seed_of[str(key[0])] for key in keys), dtype=np.int64, count=len(keys))
    numbers = np.array(list(values.values()), dtype=float).reshape(len(keys), len(statistic.fields))
    if statistic.kind == "moments":
        moments = np.zeros((len(ids), len(seeds), len(statistic.fields)))
        moments[unit, seed] += numbers  # one sample per (id, seed): each cell is 0.0 + its values
        return Units("moments", moments, np.zeros(len(ids)))
    order = np.lexsort((seed, unit))
    unit, numbers = unit[order], numbers[order]
    per_unit = np.bincount(unit, minlength=len(ids))
    if statistic.kind == "mean":
        totals = np.zeros(len(keys))
        for column in numbers.T:  # each sample's fields, left to right
            totals = totals + column
        rank = np.arange(len(keys)) - np.repeat(
            np.cumsum(per_unit) - per_unit, per_unit
        )  # a sample's place in its unit
        sums = np.zeros(len(ids))
        for place in range(int(per_unit.max(initial=0))):  # each unit's samples added one after another
            at = rank == place
            sums[unit[at]] += totals[at]
        return Units("mean", sums, per_unit.astype(float) * len(statistic.fields))
    if (per_unit > 1).any():
        raise HarnessError(f"statistic {statistic.kind!r} needs one sample per id, but some ids have several (seeds)")
    reference = numbers[:, 1]
    if statistic.kind == "auc" and not np.isin(reference, (0.0, 1.0)).all():
        raise HarnessError(f"statistic 'auc' needs 0/1 labels in {statistic.fields[1]!r}")
    return Units(statistic.kind, numbers[:, 0], reference)


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


def statistic_fields(record: ResultRecord) -> list[str]:
    """The per-sample fields that the line's ``metric_info`` statistics read, in order of first use."""
    fields: list[str] = []
    for info in record.metric_info.values():
        text = (info or {}).get("statistic")
        if text:
            fields += [name for name in Statistic.parse(text).fields if name not in fields]
    return fields


def compact_rows(rows: Iterable[Any], fields: Sequence[str]) -> Iterator[dict[str, Any]]:
    """Each sample with only its ``id``, its ``seed`` (when it has one) and ``fields``."""
    keep = ("id", "seed", *fields)
    for row in rows:
        if isinstance(row, dict):
            yield {name: row[name] for name in keep if name in row}


def samples_name(task: str, signature: str, form: str = "full") -> str:
    """The file name of a run's per-sample log: ``samples_<task>_<hash>.jsonl``, ``.jsonl.gz`` when compact."""
    name = f"samples_{task}_{hashlib.sha256(signature.encode()).hexdigest()[:12]}.jsonl"
    return name + COMPACT_SUFFIX if form == "compact" else name


def write_samples(path: Path, signature: str, samples: Sequence[Any], fields: Sequence[str]) -> None:
    """A run's per-sample log at ``path``: compact (a ``.gz`` name: ``id``, ``seed`` and ``fields``) or whole."""
    if path.suffix == COMPACT_SUFFIX:
        _write_compact_file(path, signature, fields, samples)
    else:
        write_json_lines_atomic(path, [{"signature": signature, **sample} for sample in samples])


def write_compact(entry: Entry, destination: Path) -> Path:
    """The compact, compressed form of ``entry``'s per-sample log, written into the folder ``destination``."""
    source = samples_path(entry)
    rows = []
    for item in _lines(source):
        if isinstance(item, BadLine):
            raise _bad(source, item.line, item.reason)
        if not (isinstance(item[1], dict) and "compact" in item[1] and "id" not in item[1]):
            rows.append(item[1])
    name = str(entry.record.samples_file)
    target = destination / (name if name.endswith(COMPACT_SUFFIX) else compact_path(Path(name)).name)
    _write_compact_file(target, entry.record.signature, statistic_fields(entry.record), rows)
    return target


def _write_compact_file(target: Path, signature: str, fields: Sequence[str], rows: Iterable[Any]) -> None:
    """The header ``{"signature", "compact": fields}`` and ``compact_rows``, gzip-compressed, via a temporary file.

    The bytes depend only on the samples (no time or file name in the gzip header), so a rerun that
    gives the same samples rewrites the same file.
    """
    header = {"signature": signature, "compact": list(fields)}
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(temporary, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as handle:
            for row in (header, *compact_rows(rows, fields)):
                handle.write((json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n").encode())
        os.replace(temporary, target)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise HarnessError(f"cannot write {target}: {exc.strerror or exc}") from None


def compact_folder(
    source: Path, destination: Path, *, compact: bool = True, without: Collection[str] = ()
) -> list[Path]:
    """Copy ``source``'s results file into ``destination`` with each line's per-sample log: compact and compressed
    (``write_compact``), or whole with ``compact=False``; none for a line whose task plays a role in ``without``
    (``role_of``); other logs there (of runs no line names) are removed.

    This is the form the committed leaderboard keeps (``harness compare --results`` reads it as it
    reads full logs); an unreadable results line is an error, not a line left behind. Returns the logs written.
    """
    results = source / RESULTS_FILE
    records, problems = read_records(results)
    if problems:
        raise HarnessError(f"{problems[0]}: fix or remove the line before keeping the results")
    destination.mkdir(parents=True, exist_ok=True)
    written = []
    for record in records:
        if record.samples_file and role_of(record) not in without:
            entry = Entry(record, results)
            if compact:
                written.append(write_compact(entry, destination))
            else:
                written.append(destination / record.samples_file)
                shutil.copyfile(samples_path(entry), written[-1])
    shutil.copyfile(results, destination / RESULTS_FILE)
    for stale in {*destination.glob("samples_*.jsonl"), *destination.glob("samples_*.jsonl.gz")} - set(written):
        stale.unlink()
    return written
