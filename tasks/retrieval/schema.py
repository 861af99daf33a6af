"""The bilingual image-text schema of the retrieval family, and its validation.

Every loader of this family returns a ``datasets.Dataset`` (or, for generated data that should not pay
for importing ``datasets``, a ``harness.run.data.Table`` offering the same reading API, as the built-in
``xling-shapes`` does) with one row per item:

| column | type | |
|---|---|---|
| ``id`` | string | unique item id |
| ``text_<lang>`` | string | the item's text in language ``<lang>`` (at least ``src`` and ``tgt``) |
| ``image`` | ``datasets.Image`` | optional: the item's image (for ``--image-model``) |
| ``image_file`` | string | optional: the image's file name (raw layouts) |
| ``image_features`` | list of float, one length | optional: a precomputed image vector |

``xlr`` needs the texts only; ``backretrieval`` and ``corr`` also need ``image_features`` or,
with ``--image-model``, ``image``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.errors import DataError, HarnessError
from harness.params import Param
from harness.run.data import Table, check_nonempty, require_columns

SCHEMA = "id: string, text_<lang>: string, image: Image (optional), image_file: string (optional), image_features: list[float] (optional)"

DATA_PARAMS: dict[str, Param] = {
    "src": Param("en", "source language code"),
    "tgt": Param("de", "target language code"),
    "columns": Param(
        "", "rename dataset columns to the schema: schema:dataset pairs separated by ';', e.g. id:sku;text_en:desc_en"
    ),
}


def parse_columns(spec: str) -> dict[str, str]:
    """``"id:sku;text_en:desc"`` as ``{"sku": "id", "desc": "text_en"}`` (dataset name -> schema name)."""
    mapping: dict[str, str] = {}
    for item in (part.strip() for part in spec.split(";")):
        if not item:
            continue
        schema_name, sep, dataset_name = (p.strip() for p in item.partition(":"))
        if not sep or not schema_name or not dataset_name:
            raise HarnessError(f"malformed columns item {item!r}: expected schema_column:dataset_column")
        if dataset_name in mapping:
            raise HarnessError(f"malformed columns: dataset column {dataset_name!r} is mapped twice")
        mapping[dataset_name] = schema_name
    return mapping


def apply_columns(source: str, data: Any, spec: str) -> Any:
    """``data`` with its columns renamed according to ``spec`` (see ``parse_columns``)."""
    mapping = parse_columns(spec)
    missing = [name for name in mapping if name not in data.column_names]
    if missing:
        raise DataError(
            source,
            f"columns= names column(s) {', '.join(missing)} that the dataset lacks (it has: {', '.join(data.column_names)})",
        )
    return data.rename_columns(mapping) if mapping else data


def validate(source: str, data: Any, languages: tuple[str, str]) -> None:
    """Check the schema: columns, unique ids, non-empty texts, finite equal-length features, images present."""
    text_columns = [f"text_{lang}" for lang in languages]
    require_columns(source, data, ["id", *text_columns])
    seen: dict[str, int] = {}
    for row, item in enumerate(data["id"], start=1):
        item = str(item)
        if item in seen:
            raise DataError(source, f"duplicate id {item!r} (first at row {seen[item]})", row=row, field="id")
        seen[item] = row
    for column in text_columns:
        check_nonempty(source, column, [t if isinstance(t, str) else "" for t in data[column]])
    if "image_features" in data.column_names:
        image_features(source, data, writable=False)
    if "image" in data.column_names:
        import datasets

        raw = data.select_columns(["image"]).cast_column("image", datasets.Image(decode=False))
        for row, value in enumerate(raw["image"], start=1):
            if value is None or (value.get("bytes") is None and value.get("path") is None):
                raise DataError(source, "missing image", row=row, field="image")


def image_features(source: str, data: Any, writable: bool = True) -> np.ndarray:
    """The ``image_features`` column as a finite float32 matrix (one row per item): the caller's own copy, or with
    ``writable=False`` possibly a read-only view of the dataset's memory (to check it, nothing copied)."""
    matrix = _arrow_matrix(data, writable)
    if matrix is None:
        matrix = _row_matrix(source, data)
    check_finite(source, matrix)
    return matrix


def _arrow_matrix(data: Any, writable: bool = True) -> np.ndarray | None:
    """A ``datasets.Dataset``'s ``image_features`` read from its Arrow column at once (float32: a copy, or unless
    ``writable`` a read-only view of the Arrow memory where the values are float32 in one chunk), or None when that
    column is not one numeric vector of one non-zero length per row without nulls (``_row_matrix`` then reads it row
    by row and names the bad row). The same numbers: each value converted to float32 as NumPy does."""
    if isinstance(data, Table) or len(data) == 0:  # a Table's column already is a list or an array
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    column = data.with_format("arrow")["image_features"]  # the rows of the dataset (a selection's too), in order
    if isinstance(column, pa.ChunkedArray):  # combine_chunks copies even a single chunk
        column = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    kinds = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list)
    if not any(kind(column.type) for kind in kinds) or column.null_count:
        return None
    values = column.flatten()  # the values of these rows only (a sliced column's offset is applied)
    if not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type)) or values.null_count:
        return None
    lengths = pc.list_value_length(column)
    low, high = pc.min_max(lengths).values()
    if low.as_py() != high.as_py() or not low.as_py():
        return None
    return values.to_numpy(zero_copy_only=False).astype(np.float32, copy=writable).reshape(len(column), -1)


def _row_matrix(source: str, data: Any) -> np.ndarray:
    """The ``image_features`` column through its NumPy format, row by row; an error names a row of another length."""
    column = data.with_format("numpy")["image_features"]
    try:
        matrix = np.asarray(column, dtype=np.float32)
    except (ValueError, TypeError):
        lengths = [len(v) if v is not None else 0 for v in data["image_features"]]
        row = next(i for i, n in enumerate(lengths, start=1) if n != lengths[0])
        raise DataError(
            source,
            f"image feature vectors differ in length ({lengths[row - 1]} here, {lengths[0]} in row 1)",
            row=row,
            field="image_features",
        ) from None
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise DataError(
            source,
            f"image_features must be one non-empty vector per row, got shape {matrix.shape}",
            field="image_features",
        )
    return matrix


def check_finite(source: str, matrix: np.ndarray) -> None:
    """Fail on the first row (1-based) of ``matrix`` holding a NaN or infinity."""
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(
            source, f"non-finite value {matrix[row][~np.isfinite(matrix[row])][0]}", row=row + 1, field="image_features"
        )


def languages(args: Mapping[str, Any]) -> tuple[str, str]:
    """(src, tgt), which must differ."""
    src, tgt = args["src"], args["tgt"]
    if src == tgt:
        raise HarnessError(f"src and tgt are both {src!r}: give two different languages")
    return src, tgt
