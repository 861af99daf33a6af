"""The CoMMuTE metrics, as pure functions of perplexity tables.

Tuple j is (s, i^a, t^a, i^b, t^b); P(s, i, t) = exp(-(1/N) sum_k log p(t_k | s, i, t_<k)).
For a direction (m, n), with u^m the file's incorrect translation of line m (= t^n except
for two en-fr pairs):

- TC^{m,n} = 1[P(s, i^m, t^m) < P(s, i^m, u^m)], TC = (1/2N) sum_j (TC^{a,b} + TC^{b,a})
- IC^{m,n} = 1[P(s, i^m, t^m) < P(s, i^n, t^m)], IC likewise
- GTC = (1/N) sum_j TC^{a,b} TC^{b,a}, GIC = (1/N) sum_j IC^{a,b} IC^{b,a}

A tie (perplexities within a relative ``TIE_RTOL``, which absorbs the float noise of batching)
counts as wrong with ``ties="wrong"`` (CoMMuTE's evaluate.py) or right with ``ties="right"``
(VGAMT's scorer). With no tuples every metric is NaN (undefined).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TIE_RTOL = 1e-5
TIES = ("wrong", "right")


def perplexity(logprobs: Sequence[float] | np.ndarray) -> float:
    """exp of the negative mean log-probability of the scored tokens."""
    values = np.asarray(logprobs, dtype=np.float64)
    if values.size == 0:
        raise ValueError("perplexity of zero tokens is undefined")
    mean = float(values.mean())
    return math.exp(-mean) if -mean < 709.0 else math.inf  # exp overflows float64 beyond ~709


def is_tie(p: float, q: float) -> bool:
    """Two perplexities equal up to ``TIE_RTOL`` (relative)."""
    return abs(p - q) <= TIE_RTOL * max(abs(p), abs(q))


def prefers(p_correct: float, p_other: float, ties: str) -> int:
    """1 when the correct side has the lower perplexity; a tie counts as ``ties`` says."""
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    if is_tie(p_correct, p_other):
        return int(ties == "right")
    return int(p_correct < p_other)


@dataclass(frozen=True)
class Pair:
    """The two directions of one tuple: (m, n) = (a, b) and (b, a)."""

    ab: int
    ba: int


def mean_rate(pairs: Sequence[Pair]) -> float:
    """(1/2N) sum (ab + ba): TC or IC."""
    return sum(p.ab + p.ba for p in pairs) / (2 * len(pairs)) if pairs else math.nan


def joint_rate(pairs: Sequence[Pair]) -> float:
    """(1/N) sum ab * ba: GTC or GIC."""
    return sum(p.ab * p.ba for p in pairs) / len(pairs) if pairs else math.nan


def tc_pair(p_aa: float, p_a_inc: float, p_bb: float, p_b_inc: float, ties: str) -> Pair:
    """TC^{a,b} and TC^{b,a}: each image's correct translation against its incorrect one."""
    return Pair(prefers(p_aa, p_a_inc, ties), prefers(p_bb, p_b_inc, ties))


def ic_pair(p_aa: float, p_ba: float, p_bb: float, p_ab: float, ties: str) -> Pair:
    """IC^{a,b} and IC^{b,a}; ``p_ba`` is P(s, i^b, t^a), ``p_ab`` is P(s, i^a, t^b)."""
    return Pair(prefers(p_aa, p_ba, ties), prefers(p_bb, p_ab, ties))


def consistency_rates(image: Sequence[Pair], baseline: Sequence[Pair]) -> dict[str, float]:
    """IPR, INR, CPR, CNR of TC decisions with the true image against a pseudo text-only baseline.

    Over the 2N directions: C (consistent) when the decision with the true image equals the
    baseline's (the 50/50 mixed image), I (inconsistent) otherwise; P (positive) when the
    decision with the true image is right, N when wrong. Each rate is a count over 2N, so
    CPR + IPR = TC; and because the mixed image is the same for both directions of a tuple,
    the baseline is right in exactly one of them (no baseline ties, u^m = t^n), whence
    CPR + INR = IPR + CNR = 0.5.
    """
    if len(image) != len(baseline):
        raise ValueError("image and baseline decisions must cover the same tuples")
    counts = {"ipr": 0, "inr": 0, "cpr": 0, "cnr": 0}
    for true, mixed in zip(image, baseline):
        for decision, reference in ((true.ab, mixed.ab), (true.ba, mixed.ba)):
            kind = "c" if decision == reference else "i"
            counts[f"{kind}{'p' if decision else 'n'}r"] += 1
    total = 2 * len(image)
    return {name: (count / total if total else math.nan) for name, count in counts.items()}


@dataclass(frozen=True)
class OracleChoice:
    """The chosen candidate indexes (0 = the original image) and the IC decisions there."""

    a: int
    b: int
    ic: Pair
    margin: float


def oracle_choices(
    p_aa: Sequence[float], p_ba: Sequence[float], p_bb: Sequence[float], p_ab: Sequence[float], ties: str
) -> tuple[OracleChoice, OracleChoice]:
    """The image pairs of one tuple that maximise and that minimise GIC.

    ``p_aa[i]`` = P(s, a_i, t^a), ``p_ab[i]`` = P(s, a_i, t^b) over the candidates a_i for t^a;
    ``p_ba[j]`` = P(s, b_j, t^a), ``p_bb[j]`` = P(s, b_j, t^b) over the candidates b_j for t^b.
    Ties in GIC are broken by Eq. 10 of Kashani Motlagh et al. (2024),
    D = {P(s,a,t^a) - P(s,b,t^a)} + {P(s,b,t^b) - P(s,a,t^b)}: the smallest D when maximising,
    the largest when minimising; remaining ties keep the earliest pair (originals first).
    """
    if not p_aa or not p_bb or len(p_aa) != len(p_ab) or len(p_bb) != len(p_ba):
        raise ValueError("every side needs at least one candidate, with both perplexities")
    options = []
    for i in range(len(p_aa)):
        for j in range(len(p_bb)):
            ic = ic_pair(p_aa[i], p_ba[j], p_bb[j], p_ab[i], ties)
            options.append(OracleChoice(i, j, ic, (p_aa[i] - p_ba[j]) + (p_bb[j] - p_ab[i])))
    best = min(options, key=lambda o: (-o.ic.ab * o.ic.ba, o.margin))
    worst = min(options, key=lambda o: (o.ic.ab * o.ic.ba, -o.margin))
    return best, worst


def replacement_rate(choices: Sequence[OracleChoice]) -> float:
    """The fraction of the 2N images the oracle replaced (a chosen candidate that is not the original)."""
    return sum((c.a != 0) + (c.b != 0) for c in choices) / (2 * len(choices)) if choices else math.nan


def failure_iou(first: set[tuple[str, str]], second: set[tuple[str, str]]) -> float:
    """|F1 & F2| / |F1 | F2| of two models' failed (tuple, direction) sets; NaN when neither fails."""
    union = first | second
    return len(first & second) / len(union) if union else math.nan
