"""Results records as a pandas DataFrame (pandas is optional: imported only here)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.errors import HarnessError


def to_dataframe(records: Iterable[Any]) -> Any:
    """One row per results record: task, model, main metric, signature, then one column per metric.

    Accepts ``ResultRecord`` objects (as ``harness.evaluate`` returns; skipped or sharded
    outcomes are left out) or their dicts (lines of ``results.jsonl``). Metric columns hold the
    mean over seeds; ``<metric>_std`` columns the standard deviation.
    """
    try:
        import pandas as pd
    except ImportError:
        raise HarnessError("to_dataframe needs pandas: pip install pandas") from None
    rows = []
    for record in records:
        data = record if isinstance(record, dict) else getattr(record, "__dict__", None)
        if data is None or "metrics" not in data:
            continue
        row: dict[str, Any] = {
            "task": data["task"],
            "model": data["model"].get("name"),
            "main_metric": data["main_metric"],
            "seeds": len(data["seeds"]),
            "signature": data["signature"],
        }
        row.update(data["metrics"])
        row.update({f"{name}_std": value for name, value in data["metrics_std"].items()})
        rows.append(row)
    return pd.DataFrame(rows)
