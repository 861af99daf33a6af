"""Sentence-pair datasets from the Hub or a ``save_to_disk`` folder, checked and given ids."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from harness.errors import DataError
from harness.run.data import LoadedData, check_nonempty, load_hf_dataset, require_columns


def load_pairs(source: str, split: str, value_column: str, check: Callable[[Any], str | None]) -> LoadedData:
    """Load ``sentence1``, ``sentence2`` and ``value_column``; ``check(value)`` returns a problem or None.

    No rows, empty sentences and bad values fail (naming the row); an ``id`` column (1-based row
    numbers) is added when the dataset has none.
    """
    loaded = load_hf_dataset(source, split)
    require_columns(source, loaded.data, ["sentence1", "sentence2", value_column])
    if len(loaded.data) == 0:
        raise DataError(source, f"split {split!r} has no rows")
    for column in ("sentence1", "sentence2"):
        check_nonempty(source, column, loaded.data[column])
    for row, value in enumerate(loaded.data[value_column], start=1):
        problem = check(value)
        if problem is not None:
            raise DataError(source, problem, row=row, field=value_column)
    if "id" not in loaded.data.column_names:
        loaded.data = loaded.data.add_column("id", [str(i) for i in range(1, len(loaded.data) + 1)])
    return loaded


def check_label(value: Any) -> str | None:
    """A filtering label must be 0 (bad) or 1 (good)."""
    return None if value in (0, 1) and not isinstance(value, float) else f"label must be 0 or 1, got {value!r}"


def check_score(value: Any) -> str | None:
    """A gold similarity must be a finite number."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return None if ok else f"score must be a finite number, got {value!r}"
