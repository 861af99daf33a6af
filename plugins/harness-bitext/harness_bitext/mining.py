"""The ``bitext_mining`` task: find each source sentence's translation among all targets.

For unit-normalised vectors x (sources) and y (targets), with cos = x . y:

- ``accuracy``: the fraction of sources whose most similar target is their own translation.
- ``accuracy_margin``: the same with the ratio margin of Artetxe and Schwenk (2019),
  margin(x, y) = cos(x, y) / (sum_{z in NN_k(x)} cos(x, z) / 2k + sum_{v in NN_k(y)} cos(y, v) / 2k),
  where NN_k(x) are the k most similar targets of x and NN_k(y) the k most similar sources of y.
- ``xsim``: the error rate of the margin retrieval, 1 - accuracy_margin (LASER's xsim).

Ties never favour the model: when t candidates share the best score and the translation is
one of them, the source counts 1/t (the expected accuracy under random tie-breaking).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from datasets import Dataset

from harness import CachedModel, Capability, Metric, Param, RunContext, Task, TaskOutput

CHUNK = 1024  # rows of the similarity matrix held in memory at once


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def mean_top_k(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """For each row of a, the mean of its k largest cosines with the rows of b (chunked)."""
    k = min(k, len(b))
    out = np.empty(len(a), dtype=np.float64)
    for start in range(0, len(a), CHUNK):
        sims = a[start : start + CHUNK] @ b.T
        out[start : start + CHUNK] = np.partition(sims, -k, axis=1)[:, -k:].mean(axis=1)
    return out


def tie_aware_hits(scores: np.ndarray, gold: np.ndarray, tolerance: float = 1e-6) -> np.ndarray:
    """Per row: 1/t if the gold column is among the t columns tied at the row maximum, else 0."""
    best = scores.max(axis=1, keepdims=True)
    tied = scores >= best - tolerance
    own = tied[np.arange(len(scores)), gold]
    return np.where(own, 1.0 / tied.sum(axis=1), 0.0)


def mine(src: np.ndarray, tgt: np.ndarray, k: int = 4) -> dict[str, Any]:
    """Per-source hits (cosine and margin) for aligned ``src[i]`` <-> ``tgt[i]``."""
    src, tgt = normalise(src.astype(np.float64)), normalise(tgt.astype(np.float64))
    n = len(src)
    if n == 0:
        return {"cosine": np.zeros(0), "margin": np.zeros(0)}
    src_density = mean_top_k(src, tgt, k)
    tgt_density = mean_top_k(tgt, src, k)
    cosine_hits, margin_hits = np.empty(n), np.empty(n)
    for start in range(0, n, CHUNK):
        rows = np.arange(start, min(start + CHUNK, n))
        sims = src[rows] @ tgt.T
        cosine_hits[rows] = tie_aware_hits(sims, rows)
        denominator = (src_density[rows, None] + tgt_density[None, :]) / 2
        margin = np.divide(sims, denominator, out=np.zeros_like(sims), where=denominator > 0)
        margin_hits[rows] = tie_aware_hits(margin, rows)
    return {"cosine": cosine_hits, "margin": margin_hits}


class BitextMining(Task[Dataset]):
    """Translation retrieval between two sides of a parallel corpus (Multi30K by default)."""

    family = "bitext"  # declared once, here: the leaderboard's family and `harness list --family` read it
    role = "bitext_mining"
    version = 1
    requires = (Capability.TEXT_ENCODER,)
    dataset = "multi30k"
    main_metric = "accuracy"
    metrics = (
        Metric(
            "accuracy",
            "accuracy",
            True,
            lambda v: 1 / v["items"] if v.get("items") else None,
            "mean:hit",
            "share of sources whose most similar target is their translation",
        ),
        Metric(
            "accuracy_margin",
            "accuracy (margin)",
            True,
            lambda v: 1 / v["items"] if v.get("items") else None,
            "mean:hit_margin",
            "accuracy with the ratio margin of Artetxe and Schwenk (2019), k = {k}",
        ),
        Metric("xsim", "xsim", False, None, None, "error rate of the margin retrieval, 1 - accuracy (margin)"),
    )
    params = {
        # the meanings make them the same arguments as xlr's src and tgt (one unscoped --task-args src=... for both)
        "src": Param("en", "source language code", meaning="lang.source"),
        "tgt": Param("de", "target language code", meaning="lang.target"),
        "split": Param("test_2016_flickr", "split of the dataset"),
        "k": Param(4, "neighbourhood size of the margin score", min=1),
    }

    def evaluate(self, data: Dataset, model: CachedModel, ctx: RunContext) -> TaskOutput:
        """Encode both sides once and retrieve."""
        src, tgt = self.args["src"], self.args["tgt"]
        src_vectors = model.encode_texts(data[f"text_{src}"], lang=src)
        tgt_vectors = model.encode_texts(data[f"text_{tgt}"], lang=tgt)
        hits = mine(src_vectors, tgt_vectors, self.args["k"])
        n = max(len(hits["cosine"]), 1)
        accuracy, margin = float(hits["cosine"].sum() / n), float(hits["margin"].sum() / n)
        samples = [
            {"id": item_id, "hit": float(c), "hit_margin": float(m)}
            for item_id, c, m in zip(data["id"], hits["cosine"], hits["margin"])
        ]
        return TaskOutput(
            [{"accuracy": accuracy, "accuracy_margin": margin, "xsim": 1.0 - margin}], samples, {"items": len(samples)}
        )
