"""What a results line says about each of its metrics, with the fallbacks for older lines.

A line may carry ``metric_info`` (display name, direction, chance level), ``intervals`` (the
bootstrap interval over items) and ``undefined`` (why a metric is null). A line written before
these fields existed shows the metric's own name, counts higher as better, and has no interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from harness.results import ResultRecord


@dataclass(frozen=True)
class MetricInfo:
    """How to show and rank one metric."""

    display: str
    higher_is_better: bool
    chance: float | None


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def info_of(record: ResultRecord, metric: str) -> MetricInfo:
    """The metric's display name, direction and chance level (fallbacks: its name, higher is better, none)."""
    info = record.metric_info.get(metric) or {}
    display = info.get("display")
    higher = info.get("higher_is_better")
    return MetricInfo(display if isinstance(display, str) and display.strip() else metric,
                      higher if isinstance(higher, bool) else True, _finite(info.get("chance")))


def interval_of(record: ResultRecord, metric: str) -> tuple[float, float, float | None] | None:
    """The metric's interval over items as (low, high, confidence), if the line has a finite one."""
    interval = record.intervals.get(metric) or {}
    low, high = _finite(interval.get("low")), _finite(interval.get("high"))
    if low is None or high is None:
        return None
    return low, high, _finite(interval.get("confidence"))


def undefined_reason(record: ResultRecord, metric: str) -> str | None:
    """Why the metric is undefined, when the line says (its value is then null)."""
    reason = record.undefined.get(metric)
    return reason if isinstance(reason, str) and reason else None
