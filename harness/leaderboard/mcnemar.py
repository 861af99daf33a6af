"""McNemar's test of two paired binary decisions (McNemar, Psychometrika 1947).

Each example is decided right (1) or wrong (0) twice: by two models on one task, or by one model
under two tasks on the same examples (CoMMuTE's TC and IC decisions of one tuple direction). Only
the discordant examples carry information: ``b`` right under A and wrong under B, ``c`` the other
way round. Under the null hypothesis that A and B are right equally often, b given b + c is
Binomial(b + c, 1/2). The p-value is the exact two-sided binomial test (``binomial_two_sided``, what
``scipy.stats.binomtest(b, b + c, 0.5)`` computes, without importing ``scipy.stats``: 0.3 s of a
leaderboard build), used at every count: it needs no large-sample approximation (the chi-square form
is one for large b + c) and is quick for any b + c.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from harness.errors import HarnessError

Key = TypeVar("Key", bound=Hashable)  # a sample's key in an aligned log

METHOD = "exact two-sided binomial test (Binomial(b + c, 1/2))"


@dataclass(frozen=True)
class McNemar:
    """The 2x2 table of paired decisions and the exact test on its discordant cells."""

    both_right: int
    a_only: int  # b: right under A, wrong under B
    b_only: int  # c: wrong under A, right under B
    both_wrong: int
    p_value: float
    method: str = METHOD

    @property
    def examples(self) -> int:
        """All paired decisions."""
        return self.both_right + self.a_only + self.b_only + self.both_wrong


def is_binary(values: Mapping[Key, tuple[float, ...]]) -> bool:
    """Whether every value is 0 or 1 (decisions, not rates or fractional tie shares)."""
    return bool(values) and all(v in (0.0, 1.0) for row in values.values() for v in row)


def decisions(
    first: Mapping[Key, tuple[float, ...]], second: Mapping[Key, tuple[float, ...]]
) -> tuple[np.ndarray, np.ndarray]:
    """The paired decisions of two aligned logs, one per (sample, field position); both must be 0/1."""
    keys = sorted(first, key=str)
    a = np.array([v for key in keys for v in first[key]], dtype=float)
    b = np.array([v for key in keys for v in second[key]], dtype=float)
    if not (np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all()):
        raise HarnessError(
            "McNemar's test needs right/wrong (0/1) decisions, but the per-sample values include others "
            "(fractional shares of ties, rates, scores): use the bootstrap"
        )
    return a, b


def mcnemar(a: np.ndarray, b: np.ndarray) -> McNemar:
    """McNemar's exact test of paired 0/1 decisions ``a`` and ``b`` (p = 1 when no example is discordant)."""
    a, b = np.asarray(a, dtype=bool), np.asarray(b, dtype=bool)
    if a.shape != b.shape:
        raise HarnessError(f"McNemar's test needs paired decisions, got {a.size} and {b.size}")
    a_only, b_only = int((a & ~b).sum()), int((~a & b).sum())
    discordant = a_only + b_only
    p_value = binomial_two_sided(a_only, discordant)
    return McNemar(int((a & b).sum()), a_only, b_only, int((~a & ~b).sum()), p_value)


def binomial_two_sided(k: int, n: int) -> float:
    """The exact two-sided p of ``k`` successes in ``n`` trials with success probability 1/2: twice the smaller
    tail P(X <= min(k, n - k)), at most 1 (1 when n = 0). The distribution is symmetric, so this is the sum of
    every outcome's probability at most that of ``k``, as ``scipy.stats.binomtest`` defines it. The tail is
    summed from its largest term down, each term the one above times i / (n - i + 1), until the terms no
    longer change the sum; the largest term comes from log-gamma (relative error about 1e-13)."""
    low = min(k, n - k)
    if 2 * low >= n:
        return 1.0
    largest = math.exp(math.lgamma(n + 1) - math.lgamma(low + 1) - math.lgamma(n - low + 1) - n * math.log(2))
    terms, term = [], 1.0
    for i in range(low, 0, -1):
        terms.append(term)
        term *= i / (n - i + 1)
        if term < 1e-17 * terms[0]:
            break
    else:
        terms.append(term)
    return min(1.0, 2 * largest * math.fsum(terms))


def format_mcnemar(test: McNemar, label_a: str, label_b: str) -> list[str]:
    """The 2x2 table and the p-value as plain lines."""
    return [
        f"McNemar over {test.examples} paired decisions: both right {test.both_right}, only {label_a} {test.a_only}, "
        f"only {label_b} {test.b_only}, both wrong {test.both_wrong}",
        f"McNemar p = {test.p_value:.4g}: {test.method} on the {test.a_only + test.b_only} discordant decisions",
    ]
