"""What a results line says about each of its metrics, with the fallbacks for older lines.

A line may carry ``metric_info`` (display name, direction, chance level), ``intervals`` (the
bootstrap interval over items) and ``undefined`` (why a metric is null). A line written before
these fields existed shows the metric's own name, counts higher as better, and has no interval.
A metric whose ``higher_is_better`` is null (counts, tie rates, hubness) is not a score: it has no
direction, and tables neither rank by it nor mark a best value in it.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.results.records import ResultRecord, finite_number


@dataclass(frozen=True)
class MetricInfo:
    """How to show and rank one metric."""

    display: str
    higher_is_better: bool | None  # None: not a score (no direction, never ranked)
    chance: float | None

    @property
    def rank_sign(self) -> float:
        """+1 when higher is better, -1 when lower is, 0 when the metric has no direction."""
        return 0.0 if self.higher_is_better is None else (1.0 if self.higher_is_better else -1.0)


def info_of(record: ResultRecord, metric: str) -> MetricInfo:
    """The metric's display name, direction and chance level (fallbacks: its name, higher is better, none).

    An explicit ``higher_is_better: null`` stays None (no direction); only a missing key or entry
    falls back to higher is better.
    """
    info = record.metric_info.get(metric) or {}
    display = info.get("display")
    higher = info.get("higher_is_better", True)
    return MetricInfo(
        display if isinstance(display, str) and display.strip() else metric,
        higher if isinstance(higher, bool) or higher is None else True,
        finite_number(info.get("chance")),
    )


def interval_of(record: ResultRecord, metric: str) -> tuple[float, float, float | None] | None:
    """The metric's interval over items as (low, high, confidence), if the line has a finite one."""
    interval = record.intervals.get(metric) or {}
    low, high = finite_number(interval.get("low")), finite_number(interval.get("high"))
    if low is None or high is None:
        return None
    return low, high, finite_number(interval.get("confidence"))


def undefined_reason(record: ResultRecord, metric: str) -> str | None:
    """Why the metric is undefined, when the line says (its value is then null)."""
    reason = record.undefined.get(metric)
    return reason if isinstance(reason, str) and reason else None
