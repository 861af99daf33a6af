"""The generic ``files`` loader: a local JSONL, CSV, TSV or Parquet file for a task with a schema of its own.

Any loader of Hub data sets reads such a file too (``harness.run.data.load_hf_dataset``); this one renames its
columns (``columns``) and reads an image-path column (``image_column``) against the file's folder, so a YAML
preset needs no Python (``loader: files, source: data/pairs.jsonl``). A name that leaves the folder (``../x``, an
absolute path, a symbolic link pointing outside) is refused naming the file, the row and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import DataError, HarnessError
from harness.params import Param
from harness.run.data import TABLE_FORMATS, DatasetLoader, LoadedData, is_table_file, load_table_file


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
                f"dataset 'files' reads a local {', '.join(TABLE_FORMATS)} file: give it as a preset's dataset.source or "
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
