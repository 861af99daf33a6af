"""Bootstrap intervals over the evaluated items, computed by the runner from a task's per-sample records.

For every metric whose ``metric_info`` names a ``statistic`` and whose value is defined: the
percentile interval of the statistic over resamples of the items (see ``docs/results.md``).
numpy is imported only when intervals are computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.errors import HarnessError
from harness.results.statistic import Statistic

DEFAULT_RESAMPLES = 1000
CONFIDENCE = 0.95
SEED = 0
TOLERANCE = 1e-6  # how far the statistic on all items may be from the recorded metric


def item_intervals(
    task: str,
    samples: Sequence[Mapping[str, Any]],
    info: Mapping[str, Mapping[str, Any]],
    metrics: Mapping[str, float | None],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = SEED,
    confidence: float = CONFIDENCE,
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The ``intervals`` of a results line, and warnings for metrics whose samples do not reproduce them.

    A metric gets no interval when its value is undefined, it has no statistic, fewer than two
    items carry it, or every resample is undefined. A task whose samples lack a declared field
    is a bug in the task: ``HarnessError`` naming the task, sample and field.
    """
    if resamples < 0:
        raise HarnessError(f"--resamples must be at least 0, got {resamples}")
    intervals: dict[str, dict[str, Any]] = {}
    warnings: list[str] = []
    if resamples == 0 or not samples:
        return intervals, warnings
    from harness.results.bootstrap import interval
    from harness.results.samples import sample_values, to_units

    for metric, entry in info.items():
        recorded, text = metrics.get(metric), entry.get("statistic")
        if recorded is None or not text:
            continue
        statistic = Statistic.parse(text)
        values = sample_values(enumerate(samples), statistic.fields, f"task {task!r}: {metric}: sample")
        units = to_units(values, statistic)
        if len(units) < 2:
            continue
        try:
            found = interval(units, resamples, seed, confidence)
        except HarnessError:
            continue  # undefined on (almost) every resample: no interval
        if abs(found.value - recorded) > TOLERANCE * max(1.0, abs(recorded)):
            warnings.append(
                f"{task}: no interval for {metric}: {statistic} of the samples is {found.value:.6f}, "
                f"not the recorded {recorded:.6f}"
            )
            continue
        intervals[metric] = {
            "low": found.low,
            "high": found.high,
            "confidence": confidence,
            "resamples": resamples,
            "seed": seed,
            "over": "items",
            "units": found.units,
            "statistic": str(statistic),
        }
    return intervals, warnings
