"""What both halves of ``harness g-sweep`` share (the degraded-feature sweep, g_quality.py, and the image-encoder
ladder, g_ladder.py): the tasks they run, a model given on the command line, cosines, and meta's summary.

g_quality imports g_ladder (for ``--image-models``); both import this module, never each other the other way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness_tasks.retrieval.analysis import meta
from harness_tasks.retrieval.metrics import inverse_norms

TASKS = ("xlr", "backretrieval", "corr")


def cosines(features: np.ndarray) -> np.ndarray:
    """All-pairs cosine similarities (a zero vector has cosine 0 with everything)."""
    unit = np.asarray(features, dtype=np.float64) * inverse_norms(np.asarray(features, dtype=np.float64))[:, None]
    return unit @ unit.T


@dataclass(frozen=True)
class ModelSpec:
    """A model for the sweep: a registered name or folder, with optional adapter arguments (``NAME:k=v;k=v``)."""

    name: str
    args: str | None = None

    @classmethod
    def parse(cls, text: str) -> ModelSpec:
        name, _, args = text.partition(":")
        return cls(name, args.replace(";", ",") or None)


def meta_summary(folder: Path) -> dict[str, Any]:
    """``harness meta``'s evaluation of the results in ``folder``: correlations, BkR vs CORR, BkR per model."""
    result = meta.meta_evaluate(meta.group_models(meta.load_records([str(folder)])))
    return {
        "correlations": result["correlations"],
        "significance": {
            m: result["significance"][m]["bootstrap"] for m in ("pearson", "spearman") if m in result["significance"]
        },
        "bkr": {r["label"]: r["backretrieval"]["mean"] for r in result["models"]},
    }
