"""Mean and sample standard deviation over seeds: the one definition the runner, ``harness meta`` and the plots use."""

from __future__ import annotations

import math
from collections.abc import Iterable


def defined_values(values: Iterable[float | None]) -> list[float]:
    """The values that are neither None nor NaN/infinite, as floats, in order."""
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


def mean_and_std(values: Iterable[float | None]) -> tuple[float | None, float | None]:
    """Mean and sample standard deviation (ddof = 1; 0 for one value) of the defined values; (None, None) when none is."""
    defined = defined_values(values)
    if not defined:
        return None, None
    mean = sum(defined) / len(defined)
    std = math.sqrt(sum((v - mean) ** 2 for v in defined) / (len(defined) - 1)) if len(defined) > 1 else 0.0
    return mean, std
