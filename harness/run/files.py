"""Local table files as data sets: JSONL, CSV, TSV and Parquet, read into a ``datasets.Dataset``.

Any loader of Hub data sets reads them (``harness.run.data.load_hf_dataset`` passes a local file here), and so
does the generic ``files`` loader (``FilesLoader``) for a task with a schema of its own: a YAML preset then needs
no Python (``loader: files, source: data/pairs.jsonl``). A bad row is one line naming the file, the row (1 is the
first data row) and the field. An image-path column is read against the file's folder: a name that leaves it
(``../x``, an absolute path, a symbolic link pointing outside) is refused.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import DataError, HarnessError
from harness.params import Param
from harness.run.data import DatasetLoader, LoadedData, files_revision

FORMATS = {".jsonl": "jsonl", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}


def is_table_file(source: str | Path) -> bool:
    """A local file in one of ``FORMATS`` (by its extension)."""
    path = Path(source).expanduser()
    return path.suffix.lower() in FORMATS and path.is_file()


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a table file, each a mapping of column to value; every row must have the first row's columns."""
    kind = FORMATS.get(path.suffix.lower())
    where = str(path)
    try:
        if kind == "jsonl":
            rows = _jsonl(path)
        elif kind in ("csv", "tsv"):
            with path.open(encoding="utf-8", newline="") as handle:
                rows = [dict(row) for row in csv.DictReader(handle, delimiter="\t" if kind == "tsv" else ",")]
        elif kind == "parquet":
            import pyarrow.parquet as pq

            rows = pq.read_table(path).to_pylist()
        else:
            raise DataError(where, f"is not a table file (expected one of {', '.join(FORMATS)})")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(where, f"cannot be read: {exc}") from None
    except Exception as exc:  # pyarrow's errors for a file that is not Parquet
        if isinstance(exc, HarnessError):
            raise
        raise DataError(where, f"cannot be read as {kind}: {type(exc).__name__}: {exc}") from None
    if not rows:
        raise DataError(where, "has no rows")
    columns = list(rows[0])
    for number, row in enumerate(rows, 1):
        missing = [c for c in columns if c not in row or row[c] is None]
        if missing:
            raise DataError(where, "no value", row=number, field=missing[0])
        extra = [c for c in row if c not in columns]
        if extra:
            raise DataError(where, f"a column the first row does not have ({', '.join(columns)})", number, extra[0])
    return rows


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line, parse_constant=_no_constant)
            except ValueError as exc:
                raise DataError(str(path), f"not valid JSON: {exc}", row=number) from None
            if not isinstance(row, dict):
                raise DataError(str(path), f"expected a JSON object, got {type(row).__name__}", row=number)
            rows.append(row)
    return rows


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows")


def load_table_file(source: str, split: str) -> LoadedData:
    """A ``datasets.Dataset`` of a table file, with its identity (the revision is a hash of its bytes)."""
    import datasets

    path = Path(source).expanduser()
    rows = read_rows(path)
    for number, row in enumerate(rows, 1):
        for column, value in row.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise DataError(str(path), f"not a finite number ({value})", row=number, field=column)
    data = datasets.Dataset.from_list(rows)
    identity = {"source": str(source), "revision": files_revision([path]), "split": split, "size": len(data)}
    return LoadedData(data, identity)


def parse_columns(text: str, where: str) -> dict[str, str]:
    """``schema:file;...`` (a preset's ``columns`` mapping) as schema column -> file column."""
    found: dict[str, str] = {}
    for item in (part.strip() for part in text.split(";") if part.strip()):
        schema, sep, column = item.partition(":")
        if not sep or not schema.strip() or not column.strip():
            raise HarnessError(f"{where}: malformed columns item {item!r}: expected schema:column;...")
        found[schema.strip()] = column.strip()
    return found


def image_path(folder: Path, name: str, where: str, row: int, field: str) -> str:
    """The absolute path of image ``name`` read against ``folder``; refused when it resolves outside it."""
    if not name or Path(name).is_absolute():
        raise DataError(where, f"image path {name!r} must be relative to the file's folder", row=row, field=field)
    path = folder / name
    resolved, root = path.resolve(), folder.resolve()
    if root not in resolved.parents:
        why = "is a symbolic link that resolves" if path.is_symlink() or resolved != path.absolute() else "is"
        raise DataError(where, f"image path {name!r} {why} outside {folder}: images must be inside", row, field)
    if not resolved.is_file():
        raise DataError(where, f"image file {name!r} does not exist in {folder}", row=row, field=field)
    return str(resolved)


class FilesLoader(DatasetLoader):
    """A local JSONL, CSV, TSV or Parquet file, its columns renamed (``columns``) and an image-path column
    (``image_column``) read against the file's folder, for a task with a schema of its own."""

    params = {
        "split": Param("test", "recorded as the split (a file holds one)"),
        "columns": Param("", "schema column:file column;... (a preset writes columns: {schema: file})"),
        "image_column": Param("", "the (schema) column of image paths, relative to the file's folder"),
    }
    layout = "a local JSONL, CSV, TSV or Parquet file (--data-dir FILE or a preset's dataset.source)"
    schema = "the file's columns, renamed by `columns`; the task names the columns it reads"

    def load(self, source: str | None, args: Mapping[str, Any], images_dir: str | None = None) -> LoadedData:
        """Read, rename, resolve the image paths."""
        if source is None or not is_table_file(source):
            raise HarnessError(
                f"dataset 'files' reads a local {', '.join(FORMATS)} file: give it as a preset's dataset.source or "
                f"--data-dir (got {source!r})"
            )
        loaded = load_table_file(source, str(args.get("split", "test")))
        mapping = parse_columns(str(args.get("columns") or ""), source)
        missing = [column for column in mapping.values() if column not in loaded.data.column_names]
        if missing:
            raise DataError(source, f"has no column {missing[0]!r} (it has: {', '.join(loaded.data.column_names)})")
        data = loaded.data.rename_columns({file: schema for schema, file in mapping.items() if file != schema})
        column = str(args.get("image_column") or "")
        if column:
            if column not in data.column_names:
                raise DataError(source, f"has no image column {column!r} (it has: {', '.join(data.column_names)})")
            folder = Path(images_dir) if images_dir else Path(source).expanduser().parent
            paths = [image_path(folder, str(name), source, row, column) for row, name in enumerate(data[column], 1)]
            data = data.remove_columns(column).add_column(column, paths)
        loaded.data = data
        return loaded
