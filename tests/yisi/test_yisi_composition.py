"""A task is a scorer under a protocol: a new scorer plugged into the STS and filtering protocols."""

from __future__ import annotations

import re
from fractions import Fraction

import datasets
import numpy as np
import pytest

from harness.adapters.capabilities import TokenEmbeddings
from harness.errors import HarnessError
from harness.params import Param
from harness.run.context import RunContext
from harness_tasks.yisi.filter_data import Multi30kFilterLoader
from harness_tasks.yisi.protocols import FilterProtocol, StsProtocol, filter_metric_list, sts_metrics
from harness_tasks.yisi.scorers import PairScorer, PairScores
from harness_tasks.yisi.sts_data import StsLoader

CTX = RunContext(seeds=[0])


class Words:
    """A token embedder whose units are the whitespace words (the vectors do not matter here)."""

    def embed_tokens(self, texts, lang=None):
        return [TokenEmbeddings(t.split(), np.ones((len(t.split()), 2), dtype=np.float32)) for t in texts]


class Overlap(PairScorer):
    """Jaccard overlap of the two sides' units, at least ``floor``."""

    name = "overlap"
    params = {"floor": Param(0.0, "lowest score", min=0.0, max=1.0)}

    def score_sides(self, e_side, f_side, model):
        values = [
            max(self.args["floor"], len(set(e.tokens) & set(f.tokens)) / len(set(e.tokens) | set(f.tokens)))
            for e, f in zip(e_side, f_side)
        ]
        return PairScores(values, [{"overlap": v} for v in values], {"floor_used": self.args["floor"]})


class OverlapFilter(FilterProtocol[Overlap]):
    scorer_type = Overlap
    params = {**Multi30kFilterLoader.params, **Overlap.params}
    metrics = filter_metric_list(Overlap.name)


class OverlapSts(StsProtocol[Overlap]):
    scorer_type = Overlap
    params = {**StsLoader.params, **Overlap.params}
    metrics = sts_metrics(Overlap.name)


def test_a_new_scorer_under_the_filtering_protocol():
    data = datasets.Dataset.from_dict(
        {
            "id": ["1:good", "1:mismatch", "2:good", "2:word_swap"],
            "sentence1": ["x y", "x y", "x z", "x z"],
            "sentence2": ["x y", "z", "x", "x n"],
            "label": [1, 0, 1, 0],
            "kind": ["good", "mismatch", "good", "word_swap"],
        }
    )
    out = OverlapFilter("overlap_filter", {}).evaluate(data, Words(), CTX)
    assert [s["overlap"] for s in out.samples] == pytest.approx([1.0, 0.0, 0.5, 1 / 3])
    assert out.samples[1] == {"id": "1:mismatch", "label": 0, "kind": "mismatch", "overlap": 0.0}
    metrics = out.per_seed[0]
    assert metrics["roc_auc"] == 1.0 and metrics["roc_auc[mismatch]"] == 1.0 and metrics["roc_auc[word_swap]"] == 1.0
    # lowest first: bad 0, bad 1/3, good 1/2, good 1; bad found 1, 2, 2, 2 of E = 2; F1 = 2 TP / (2 + k)
    f1 = (Fraction(2, 3) + 1 + Fraction(4, 5) + Fraction(2, 3)) / 4
    assert metrics["mean_f1"] == pytest.approx(float(f1), abs=1e-12)
    assert out.extra == {"floor_used": 0.0}
    assert OverlapFilter.metrics[0].statistic == "auc:overlap,label"


def test_a_new_scorer_under_the_sts_protocol_with_its_own_argument():
    data = datasets.Dataset.from_dict(
        {"id": ["a", "b", "c"], "sentence1": ["x y", "x", "x y"], "sentence2": ["x y", "z", "x"], "score": [3, 1, 2]}
    )
    out = OverlapSts("overlap_sts", {}).evaluate(data, Words(), CTX)
    assert out.samples[2] == {"id": "c", "gold": 2, "overlap": 0.5}
    # overlaps 1, 0, 1/2 are linear in gold 3, 1, 2
    assert out.per_seed[0]["pearson"] == pytest.approx(1.0) and out.per_seed[0]["n"] == 3.0
    floored = OverlapSts("overlap_sts", {"floor": 0.6}).evaluate(data, Words(), CTX)
    assert [s["overlap"] for s in floored.samples] == [1.0, 0.6, 0.6]
    with pytest.raises(HarnessError, match=re.escape("argument floor=2.0 must be at most 1.0")):
        OverlapSts("overlap_sts", {"floor": 2.0})
