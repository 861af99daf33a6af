"""Results records as a pandas DataFrame (pandas is optional: imported only here)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from harness.errors import HarnessError, HarnessWarning
from harness.results.metrics import info_of, interval_of, undefined_reason
from harness.results.records import ResultRecord


def language_pair(task_args: Mapping[str, Any]) -> str | None:
    """``src-tgt`` from a record's task arguments (``en-<lang>`` for a task with one target ``lang``), or None."""
    src, tgt, lang = task_args.get("src"), task_args.get("tgt"), task_args.get("lang")
    if isinstance(src, str) and isinstance(tgt, str):
        return f"{src}-{tgt}"
    return f"en-{lang}" if isinstance(lang, str) else None


def _spread(std: float | None, seeds: int) -> float:
    """The standard deviation over seeds; NaN where it is undefined (one seed, or none recorded)."""
    return float(std) if std is not None and seeds > 1 and math.isfinite(std) else math.nan


def to_dataframe(records: Iterable[Any]) -> Any:
    """One row per results record, keeping what the command line shows.

    Columns: task, model, dataset, pair (``en-de``; None when the task has no language pair),
    main metric, seeds, signature, warnings (a list), then per metric ``<m>`` (mean over seeds;
    NaN when undefined), ``<m>_std`` (NaN where the spread over seeds is undefined, never 0),
    ``<m>_low`` / ``<m>_high`` (the 95 % bootstrap interval over items, NaN without one),
    ``<m>_chance`` and ``<m>_undefined`` (the reason, or None).

    Accepts ``ResultRecord`` objects (as ``harness.evaluate`` returns; skipped or sharded
    outcomes are left out) or their dicts (lines of ``results.jsonl``).
    """
    try:
        import pandas as pd
    except ImportError:
        raise HarnessError("to_dataframe needs pandas: pip install pandas") from None
    rows = []
    for item in records:
        if isinstance(item, ResultRecord):
            record = item
        elif isinstance(item, dict) and "metrics" in item:
            record = ResultRecord.from_dict(item)
        else:
            continue
        row: dict[str, Any] = {
            "task": record.task,
            "model": record.model.get("name"),
            "dataset": record.task_args.get("dataset") or record.dataset.get("loader"),
            "pair": language_pair(record.task_args),
            "main_metric": record.main_metric,
            "seeds": len(record.seeds),
            "signature": record.signature,
            "warnings": list(record.warnings),
        }
        for name, value in record.metrics.items():
            bounds = interval_of(record, name)
            row[name] = math.nan if value is None else value
            row[f"{name}_std"] = _spread(record.metrics_std.get(name), len(record.seeds))
            row[f"{name}_low"], row[f"{name}_high"] = (bounds[0], bounds[1]) if bounds else (math.nan, math.nan)
            chance = info_of(record, name).chance
            row[f"{name}_chance"] = math.nan if chance is None else chance
            row[f"{name}_undefined"] = undefined_reason(record, name)
        rows.append(row)
    return pd.DataFrame(rows)


def warn_about(outcomes: Iterable[Any]) -> None:
    """Issue each record's warnings and undefined-metric reasons as ``HarnessWarning`` (what the CLI prints)."""
    for record in outcomes:
        if not isinstance(record, ResultRecord):
            continue
        for metric, reason in record.undefined.items():
            warnings.warn(f"{record.task}: {metric} is n/a: {reason}", HarnessWarning, stacklevel=3)
        for text in record.warnings:
            named = text if text.startswith(f"{record.task}:") else f"{record.task}: {text}"
            warnings.warn(named, HarnessWarning, stacklevel=3)
