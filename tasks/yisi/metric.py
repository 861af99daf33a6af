"""YiSi-2 and the bert_sum baseline on per-token vectors (Lo and Simard, CoNLL 2019).

For a pair (e, f) with unit vectors v(u) of the token units u of each sentence:

- s(e_i, f_j) = max(0, cos(v(e_i), v(f_j)));
- w(u) = idf(u) = log(1 + (|E| + 1) / (df(u) + 1)), from the sentences of the unit's own side;
- precision P = sum_i w(e_i) max_j s(e_i, f_j) / sum_i w(e_i) (over the units of e),
  recall R = sum_j w(f_j) max_i s(e_i, f_j) / sum_j w(f_j) (over the units of f);
- YiSi-2 = P R / (alpha P + (1 - alpha) R), and 0 when P or R is 0 (in particular when either
  sentence has no units).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from harness.adapters.capabilities import TokenEmbeddings


def idf_table(sentences: Iterable[Sequence[str]]) -> tuple[Counter[str], int]:
    """Document frequency of each unit (sentences containing it) and the number of sentences."""
    counts: Counter[str] = Counter()
    total = 0
    for units in sentences:
        counts.update(set(units))
        total += 1
    return counts, total


def idf_weight(df: int, total: int) -> float:
    """YiSi's idf, natural log: log(1 + (total + 1) / (df + 1)); an unseen unit has df = 0."""
    return math.log1p((total + 1) / (df + 1))


@dataclass(frozen=True)
class Weighted:
    """One sentence ready for scoring: unit-normalised vectors and one weight per unit."""

    vectors: np.ndarray  # (n, dim) float32, rows of norm 1 (zero rows stay zero)
    weights: np.ndarray  # (n,) float64


def prepare(embeddings: TokenEmbeddings, table: tuple[Counter[str], int] | None) -> Weighted:
    """Normalise a sentence's vectors and weight its units by idf (``table``) or uniformly (None)."""
    vectors: np.ndarray = np.asarray(embeddings.vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1, norms)
    if table is None:
        weights = np.ones(len(embeddings.tokens))
    else:
        counts, total = table
        weights = np.array([idf_weight(counts[u], total) for u in embeddings.tokens], dtype=np.float64)
    return Weighted(vectors, weights)


def yisi(e: Weighted, f: Weighted, alpha: float = 0.5) -> tuple[float, float, float]:
    """(precision, recall, YiSi-2) of sentence e against sentence f."""
    if len(e.weights) == 0 or len(f.weights) == 0:
        return 0.0, 0.0, 0.0
    sims = np.maximum(e.vectors @ f.vectors.T, 0.0).astype(np.float64)
    precision = float(e.weights @ sims.max(axis=1) / e.weights.sum())
    recall = float(f.weights @ sims.max(axis=0) / f.weights.sum())
    return precision, recall, combine(precision, recall, alpha)


def combine(precision: float, recall: float, alpha: float) -> float:
    """P R / (alpha P + (1 - alpha) R); 0 when P or R is 0."""
    if precision <= 0 or recall <= 0:
        return 0.0
    return precision * recall / (alpha * precision + (1 - alpha) * recall)


def bert_sum(e: TokenEmbeddings, f: TokenEmbeddings) -> float:
    """Cosine of the sums of the two sentences' token vectors (0 when either sum is zero)."""
    a = np.asarray(e.vectors, dtype=np.float64).sum(axis=0) if len(e.tokens) else None
    b = np.asarray(f.vectors, dtype=np.float64).sum(axis=0) if len(f.tokens) else None
    if a is None or b is None:
        return 0.0
    denominator = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / denominator) if denominator > 0 else 0.0
