"""YiSi-2 and bert_sum on hand-made vectors: values computed by hand, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from harness.adapters.capabilities import TokenEmbeddings
from harness_tasks.yisi.metric import Weighted, bert_sum, combine, idf_table, idf_weight, prepare, yisi

# e: units a, b; f: units c, d, g. Cosines (rows e, columns f):
#   a=(1,0): c 1.0, d 0.6, g -0.6        b=(0,1): c 0.0, d 0.8, g -0.8
E = TokenEmbeddings(["a", "b"], np.array([[1, 0], [0, 1]], dtype=np.float32))
F = TokenEmbeddings(["c", "d", "g"], np.array([[2, 0], [0.6, 0.8], [-0.6, -0.8]], dtype=np.float32))


def test_idf_matches_the_reference_implementations_test_vector():
    # 5 sentences; a unit in 3 of them weighs log2(1 + 6/4) = 1.32193, one in 1 weighs log2(1 + 6/2) = 2
    table = idf_table([["x", "y"], ["x"], ["x", "z"], ["w"], ["w"]])
    counts, total = table
    assert total == 5 and counts["x"] == 3 and counts["y"] == 1
    assert idf_weight(counts["x"], total) / math.log(2) == pytest.approx(1.32193, abs=1e-5)
    assert idf_weight(counts["y"], total) / math.log(2) == pytest.approx(2.0)
    assert idf_weight(counts["unseen"], total) == pytest.approx(math.log(1 + 6))  # df = 0


def test_idf_counts_each_sentence_once_however_often_a_unit_repeats():
    counts, total = idf_table([["x", "x", "x"], ["y"]])
    assert counts["x"] == 1 and total == 2


def test_uniform_weights_with_negative_similarity_clipped():
    p, r, f = yisi(prepare(E, None), prepare(F, None))
    assert p == pytest.approx((1.0 + 0.8) / 2)  # a->c, b->d
    # c<-a 1.0, d<-b 0.8, g: best is -0.6, clipped to 0 (unclipped recall would be 0.4)
    assert r == pytest.approx((1.0 + 0.8 + 0.0) / 3)
    assert f == pytest.approx(2 * 0.9 * 0.6 / (0.9 + 0.6))  # 0.72


@pytest.mark.parametrize(("alpha", "expected"), [(0.5, 0.72), (0.8, 0.54 / 0.84), (0.0, 0.9), (1.0, 0.6)])
def test_alpha_weighs_precision_and_recall(alpha, expected):
    assert yisi(prepare(E, None), prepare(F, None), alpha)[2] == pytest.approx(expected)


def test_idf_weights_from_a_corpus():
    # a in 3 of 5 sentences, b in 1: weights proportional to 1.32193 and 2 (base 2)
    table = idf_table([["a", "b"], ["a"], ["a"], ["q"], ["q"]])
    p, _, _ = yisi(prepare(E, table), prepare(F, None))
    wa, wb = math.log2(2.5), 2.0
    assert p == pytest.approx((wa * 1.0 + wb * 0.8) / (wa + wb))


def test_explicit_weights():
    e = Weighted(prepare(E, None).vectors, np.array([2.0, 1.0]))
    f = Weighted(prepare(F, None).vectors, np.array([1.0, 1.0, 2.0]))
    p, r, _ = yisi(e, f)
    assert p == pytest.approx((2 * 1.0 + 1 * 0.8) / 3)
    assert r == pytest.approx((1.0 + 0.8 + 2 * 0.0) / 4)


def test_empty_sentence_scores_zero():
    empty = TokenEmbeddings([], np.zeros((0, 2), dtype=np.float32))
    assert yisi(prepare(empty, None), prepare(F, None)) == (0.0, 0.0, 0.0)
    assert yisi(prepare(E, None), prepare(empty, None)) == (0.0, 0.0, 0.0)


def test_all_negative_similarities_give_zero():
    opposite = TokenEmbeddings(["n"], np.array([[-1, -1]], dtype=np.float32))
    assert yisi(prepare(E, None), prepare(opposite, None)) == (0.0, 0.0, 0.0)


def test_combine_is_zero_when_either_side_is_zero():
    assert combine(0.0, 0.7, 0.5) == 0.0 and combine(0.7, 0.0, 0.5) == 0.0


def test_bert_sum_is_the_cosine_of_summed_vectors_unclipped():
    assert bert_sum(E, TokenEmbeddings(["c"], np.array([[2, 0]], dtype=np.float32))) == pytest.approx(1 / math.sqrt(2))
    assert bert_sum(E, TokenEmbeddings(["n"], np.array([[-1, -1]], dtype=np.float32))) == pytest.approx(-1.0)
    assert bert_sum(E, TokenEmbeddings([], np.zeros((0, 2), dtype=np.float32))) == 0.0


sentences = st.integers(1, 5).flatmap(
    lambda n: arrays(np.float32, (n, 3), elements=st.floats(-4, 4, width=32)).filter(
        lambda a: bool(np.all(np.linalg.norm(a, axis=1) > 1e-2))
    )
)


def _weighted(vectors: np.ndarray, seed: int) -> Weighted:
    weights = np.random.default_rng(seed).uniform(0.1, 3.0, len(vectors))
    return Weighted(prepare(TokenEmbeddings(["u"] * len(vectors), vectors), None).vectors, weights)


@settings(max_examples=150, deadline=None)
@given(sentences, sentences, st.floats(0, 1), st.integers(0, 10**6))
def test_properties(e_vectors, f_vectors, alpha, seed):
    e, f = _weighted(e_vectors, seed), _weighted(f_vectors, seed + 1)
    p, r, score = yisi(e, f, alpha)
    assert 0.0 <= p <= 1.0 + 1e-6 and 0.0 <= r <= 1.0 + 1e-6
    if p > 0 and r > 0:
        assert min(p, r) - 1e-9 <= score <= max(p, r) + 1e-9  # a weighted harmonic mean
    # swapping the sentences swaps precision and recall, and alpha with 1 - alpha
    p2, r2, score2 = yisi(f, e, 1 - alpha)
    assert (p2, r2) == pytest.approx((r, p)) and score2 == pytest.approx(score)
    # a sentence matches itself perfectly, and scaling vectors changes nothing
    assert yisi(e, e, alpha) == pytest.approx((1.0, 1.0, 1.0), abs=1e-5)
    scaled = _weighted(e_vectors * 3.5, seed)
    assert yisi(scaled, f, alpha) == pytest.approx((p, r, score), abs=1e-5)
