"""Data loading: the loader API, validated reading of raw text layouts, and Hub/disk datasets."""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar, overload

import numpy as np

from harness.adapters.model import file_sha256, require_hub
from harness.errors import DataError, HarnessError
from harness.params import Param


@dataclass
class LoadedData:
    """A loaded dataset and its identity (loader, source, revision, split, size)."""

    data: Any
    identity: dict[str, Any] = field(default_factory=dict)


T = TypeVar("T")


class LazyColumn(Sequence[T]):
    """A column whose values are made when read (``make(row)``) and never kept, as images drawn from a recipe.

    ``keys``, when given, returns the content key of every row's value (a cache key made without making the
    values, as ``harness.adapters.capabilities.image_content_key`` would give it); ``content_keys`` reads them.
    """

    def __init__(self, make: Callable[[int], T], rows: Sequence[int], keys: Callable[[], Sequence[str]] | None = None):
        self.make = make
        self.rows = rows
        self.keys = keys

    def content_keys(self) -> list[str] | None:
        """The content keys of this column's values, or None when the column does not know them."""
        if self.keys is None:
            return None
        every = self.keys()
        return [every[row] for row in self.rows]

    def __len__(self) -> int:
        return len(self.rows)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> LazyColumn[T]: ...

    def __getitem__(self, index: int | slice) -> T | LazyColumn[T]:
        if isinstance(index, slice):
            return LazyColumn(self.make, self.rows[index], self.keys)
        return self.make(self.rows[index])

    def take(self, indices: np.ndarray) -> LazyColumn[T]:
        """The values at ``indices``, still made when read."""
        return LazyColumn(self.make, [self.rows[i] for i in indices.tolist()], self.keys)


class Table:
    """A data set held as named columns of equal length, for loaders that need no ``datasets.Dataset``
    (importing ``datasets`` takes about a second).

    It offers the part of the ``datasets.Dataset`` API tasks use: ``column_names``, ``len``, a column by
    name, a row (dict) by index, ``select`` and ``with_format`` (the columns already are lists, NumPy
    arrays or ``LazyColumn``: any format returns the table itself). A column may also be given as a
    function of no arguments, called when the column is first read (a column that costs time to make).
    """

    def __init__(
        self, columns: Mapping[str, Sequence[Any] | np.ndarray | Callable[[], Sequence[Any] | np.ndarray]], length: int
    ):
        self._columns = dict(columns)
        self._length = length
        for name, values in self._columns.items():
            if not callable(values):
                self._check(name, values)

    def _check(self, name: str, values: Sequence[Any] | np.ndarray) -> None:
        if len(values) != self._length:
            raise HarnessError(f"table column {name!r} has {len(values)} values, the table {self._length} rows")

    @property
    def column_names(self) -> list[str]:
        """The columns' names, in order."""
        return list(self._columns)

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return (self[row] for row in range(self._length))

    @overload
    def __getitem__(self, key: str) -> Any: ...

    @overload
    def __getitem__(self, key: int) -> dict[str, Any]: ...

    def __getitem__(self, key: str | int) -> Any:
        if isinstance(key, str):
            return self.column(key)
        if not -self._length <= key < self._length:
            raise IndexError(f"row {key} of a table of {self._length} rows")
        return {name: self.column(name)[key] for name in self._columns}

    def column(self, name: str) -> Sequence[Any] | np.ndarray:
        """The column ``name`` (made now if it was given as a function)."""
        if name not in self._columns:
            raise KeyError(f"no column {name!r} (columns: {', '.join(self._columns)})")
        values = self._columns[name]
        if callable(values):
            values = values()
            self._check(name, values)
            self._columns[name] = values
        return values

    def select(self, indices: Iterable[int]) -> Table:
        """The rows at ``indices``, in that order (a column given as a function stays one)."""
        picked = np.asarray(indices if isinstance(indices, np.ndarray) else list(indices), dtype=np.int64).reshape(-1)
        if picked.size and not (-self._length <= picked.min() and picked.max() < self._length):
            raise IndexError(f"rows {picked.min()}..{picked.max()} of a table of {self._length} rows")
        columns: dict[str, Any] = {}
        for name, values in self._columns.items():
            if callable(values):  # made once, in this table, when the selection first reads it
                columns[name] = lambda name=name: _take(self.column(name), picked)
            else:
                columns[name] = _take(values, picked)
        return Table(columns, len(picked))

    def with_format(self, kind: str | None = None) -> Table:
        """The table itself: its columns are already lists, NumPy arrays or lazy columns."""
        return self


def _take(values: Sequence[Any] | np.ndarray, rows: np.ndarray) -> Sequence[Any] | np.ndarray:
    if isinstance(values, (np.ndarray, LazyColumn)):
        return values[rows] if isinstance(values, np.ndarray) else values.take(rows)
    return [values[i] for i in rows.tolist()]


class DatasetLoader:
    """Base class of dataset loaders registered through ``register_datasets``.

    ``load(source, args)`` receives the ``--data-dir`` value (a raw-layout folder, a
    ``save_to_disk`` folder or a Hub id), or ``None`` for the loader's default source, and the
    loader's own arguments (taken from the task arguments it declares in ``params``).
    """

    params: ClassVar[Mapping[str, Param]] = {}
    schema: ClassVar[str] = ""
    fallback: ClassVar[str] = ""  # a registered dataset the runner loads instead when no --data-dir is given

    def __init__(self, name: str):
        self.name = name

    def load(self, source: str | None, args: Mapping[str, Any], images_dir: str | None = None) -> LoadedData:
        """Load and validate the data."""
        raise NotImplementedError


def read_lines(path: str | os.PathLike[str]) -> list[str]:
    """The lines of a UTF-8 text file without their line endings (a last line may lack one).

    A UTF-8 byte-order mark at the start of a line (as some Windows editors write at the start of a
    file, and files joined with ``cat`` keep at the start of each) is not part of the line.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataError(str(path), "file not found") from None
    except OSError as exc:
        raise DataError(str(path), f"cannot be read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        row = raw[: exc.start].count(b"\n") + 1
        raise DataError(str(path), "is not valid UTF-8", row=row) from None
    lines = text.removeprefix("\ufeff").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [(line[:-1] if line.endswith("\r") else line).removeprefix("\ufeff") for line in lines]


def read_aligned(files: Mapping[str, str | os.PathLike[str]]) -> dict[str, list[str]]:
    """Read line-aligned files (field name -> path); differing line counts are an error naming all."""
    columns = {name: read_lines(path) for name, path in files.items()}
    counts = {str(files[name]): len(lines) for name, lines in columns.items()}
    if len(set(counts.values())) > 1:
        detail = ", ".join(f"{path} has {count} lines" for path, count in counts.items())
        raise DataError(str(Path(next(iter(files.values()))).parent), f"files are not line-aligned: {detail}")
    return columns


def check_nonempty(source: str, field_name: str, values: Sequence[str]) -> None:
    """Fail on the first empty (or whitespace-only) text, naming its 1-based row."""
    for row, value in enumerate(values, start=1):
        if not value.strip():
            raise DataError(source, "empty text", row=row, field=field_name)


def require_folder(path: str | os.PathLike[str], what: str = "data folder") -> Path:
    """The folder as a Path, or an error saying it does not exist."""
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise HarnessError(f"{what} {str(path)!r} does not exist or is not a folder")
    return folder


def files_revision(paths: Sequence[str | os.PathLike[str]]) -> str:
    """One content hash over files (names and bytes), as the revision of a local dataset."""
    combined = hashlib.sha256()
    for path in sorted(map(Path, paths)):
        combined.update(f"{path.name}\0{file_sha256(path)}\n".encode())
    return "sha256:" + combined.hexdigest()[:16]


def is_hub_id(source: str) -> bool:
    """True for ``owner/name`` (or ``name``) that is not an existing path."""
    return not Path(source).expanduser().exists() and re.fullmatch(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?", source) is not None


def uses_hf_dataset(source: str) -> bool:
    """True when ``source`` is a ``save_to_disk`` folder, a local table file (JSONL, CSV, TSV, Parquet:
    ``harness.run.files``) or a Hub id rather than a raw layout."""
    return is_saved_dataset(source) or is_table_file(source) or ("/" in source and is_hub_id(source))


def is_saved_dataset(path: str | os.PathLike[str]) -> bool:
    """True for a folder written by ``Dataset.save_to_disk``."""
    folder = Path(path)
    single = (folder / "dataset_info.json").is_file() and (folder / "state.json").is_file()
    return single or (folder / "dataset_dict.json").is_file()


def load_hf_dataset(source: str, split: str, revision: str | None = None) -> LoadedData:
    """A ``datasets.Dataset`` from a ``save_to_disk`` folder, a local table file or a Hub id, with its identity."""
    import datasets

    if is_table_file(source):
        return load_table_file(source, split)
    if Path(source).exists():
        if not is_saved_dataset(source):
            raise HarnessError(
                f"{source!r} is neither a raw-layout folder this loader reads, a save_to_disk folder nor a "
                "JSONL, CSV, TSV or Parquet file"
            )
        data = datasets.load_from_disk(source)
        if isinstance(data, datasets.DatasetDict):
            if split not in data:
                raise DataError(source, f"has no split {split!r} (it has: {', '.join(data)})")
            data = data[split]
        files = [f["filename"] for f in data.cache_files]
        rev = files_revision(files) if files else data._fingerprint
        return LoadedData(data, {"source": str(source), "revision": rev, "split": split, "size": len(data)})
    require_hub(f"dataset {source!r}", "data sets", "--data-dir")
    try:
        data = datasets.load_dataset(source, split=split, revision=revision)
    except Exception as exc:
        raise HarnessError(f"cannot load dataset {source!r} split {split!r}: {type(exc).__name__}: {exc}") from None
    rev = revision or data._fingerprint
    return LoadedData(data, {"source": source, "revision": rev, "split": split, "size": len(data)})


TABLE_FORMATS = {".jsonl": "jsonl", ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}


# --- local table files (JSONL, CSV, TSV, Parquet): read by load_hf_dataset and by the ``files`` loader ---------


def is_table_file(source: str | Path) -> bool:
    """A local file in one of ``TABLE_FORMATS`` (by its extension)."""
    path = Path(source).expanduser()
    return path.suffix.lower() in TABLE_FORMATS and path.is_file()


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a table file, each a mapping of column to value; every row must have the first row's columns."""
    kind = TABLE_FORMATS.get(path.suffix.lower())
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
            raise DataError(where, f"is not a table file (expected one of {', '.join(TABLE_FORMATS)})")
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


def require_columns(source: str, data: Any, columns: Sequence[str]) -> None:
    """Fail when a dataset lacks any of ``columns``, naming them and what it has."""
    missing = [c for c in columns if c not in data.column_names]
    if missing:
        raise DataError(source, f"missing column(s) {', '.join(missing)} (it has: {', '.join(data.column_names)})")
