"""Hubness (skewness of the k-occurrences N_k, share of anti-hubs; Radovanovic et al., JMLR 2010) and
CSLS retrieval (Lample et al., ICLR 2018, sect. 2.3) in ``xlr`` and ``backretrieval``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness_tasks.retrieval import metrics

SKEW_3_0_0 = 2 / 2**1.5  # N = [3, 0, 0]: mean 1, deviations (2, -1, -1), m2 = 2, m3 = 2

# Three sources, three one-hot targets: every source's most similar target is t0 (a hub).
HUB_SRC = np.array([[1.0, 0.0, 0.0], [1.0, 0.9, 0.0], [1.0, 0.0, 0.9]])
EYE = np.eye(3)


def test_one_hub_at_k_1():
    (result,) = metrics.xlr(HUB_SRC, EYE, [np.arange(3)], k=1).metrics
    assert result["hub_skew"] == pytest.approx(SKEW_3_0_0) and result["antihubs"] == pytest.approx(2 / 3)
    assert result["recall@k"] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("rule", "skew", "antihubs"),
    [
        ("expected", 0.0, 0.0),  # N = [1.5, 0.5, 1]: symmetric about its mean 1, skew 0 (defined: not constant)
        ("optimistic", SKEW_3_0_0, 0.0),  # N = [2, 1, 1]: deviations (2/3, -1/3, -1/3), m2 = 2/9, m3 = 2/27: 1/sqrt(2)
        ("pessimistic", -SKEW_3_0_0, 1 / 3),  # N = [1, 0, 1]: the tied pair counts for nobody; the mirror image
    ],
)
def test_a_tied_argmax_under_each_tie_rule(rule, skew, antihubs):
    src = np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # source 0: t0 and t1 tied at 1/sqrt(2)
    (result,) = metrics.xlr(src, EYE, [np.arange(3)], k=1, rule=rule).metrics
    assert result["antihubs"] == pytest.approx(antihubs)
    assert result["hub_skew"] == pytest.approx(skew, abs=1e-9)


def test_occurrences_count_each_rows_top_k_with_tied_entries_sharing():
    rows, cols = np.array([0, 0, 0, 1, 1]), np.array([0, 1, 2, 1, 2])
    values = np.array([0.9, 0.9, 0.5, 0.8, 0.7])
    assert metrics.occurrences(rows, cols, values, 1, "expected", 1e-6, 4).tolist() == [0.5, 1.5, 0.0, 0.0]
    assert metrics.occurrences(rows, cols, values, 2, "expected", 1e-6, 4).tolist() == [1.0, 2.0, 1.0, 0.0]


def test_equal_occurrences_leave_the_skew_undefined():
    assert metrics.hubness(np.array([1.0, 1.0, 1.0])) == {"hub_skew": None, "antihubs": 0.0}
    assert metrics.hubness(np.zeros(0)) == {"hub_skew": None, "antihubs": None}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1 / 3, 2.0, 7.5, 40.0]), min_size=2, max_size=300),
    st.floats(min_value=1e-3, max_value=1e6),
)
def test_the_skew_is_scipys_to_the_last_bit(values, scale):
    """``hubness`` computes the skewness without importing SciPy; it must be SciPy's float, not a close one."""
    from scipy import stats

    counts = np.array(values) * scale
    expected = None if np.ptp(counts) <= 1e-12 else float(stats.skew(counts, bias=True))
    assert metrics.hubness(counts)["hub_skew"] == expected


def test_importing_the_metrics_imports_no_scipy():
    import subprocess
    import sys

    code = "import sys, harness_tasks.retrieval.metrics; print(sorted(m for m in sys.modules if m.startswith('scipy')))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_csls_by_hand_turns_the_hub_away():
    """K = 1. cos(s1, t0) = a = 1/sqrt(1.81), cos(s1, t1) = b = 0.9/sqrt(1.81); r_T(s1) = a, r_S(t0) = 1,
    r_S(t1) = b. CSLS(s1, t0) = 2a - a - 1 = a - 1 < CSLS(s1, t1) = 2b - a - b = b - a; s2 alike; s0 keeps t0."""
    a, b = 1 / math.sqrt(1.81), 0.9 / math.sqrt(1.81)
    assert a - 1 < b - a
    (result,) = metrics.xlr(HUB_SRC, EYE, [np.arange(3)], k=1, retrieval="csls", neighbours=1).metrics
    assert result["recall@k"] == 1.0 and result["antihubs"] == 0.0 and result["hub_skew"] is None  # N = [1, 1, 1]


def test_csls_with_k_at_least_the_candidates_subtracts_the_mean_similarity():
    """With K = 3 = all candidates, r_S(t) is the column mean of the cosines and r_T(s) the row mean."""
    cos = HUB_SRC / np.linalg.norm(HUB_SRC, axis=1, keepdims=True)
    csls = 2 * cos - cos.mean(axis=1, keepdims=True) - cos.mean(axis=0, keepdims=True)
    own = np.diag(csls)
    expected_hits = [(row > own[i] + 1e-6).sum() < 1 for i, row in enumerate(csls)]
    (result,) = metrics.xlr(HUB_SRC, EYE, [np.arange(3)], k=1, retrieval="csls", neighbours=3).metrics
    assert result["recall@k"] == pytest.approx(np.mean(expected_hits))


def hub_dominated(seed: int = 0, n: int = 300, d: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Non-negative high-dimensional data: cosine neighbourhoods have hubs (Radovanovic et al. 2010, sect. 4)."""
    rng = np.random.default_rng(seed)
    base = rng.exponential(size=(n, d))
    return base + 2 * rng.exponential(size=(n, d)), base + 2 * rng.exponential(size=(n, d))


def test_a_hub_dominated_case_has_high_skew_and_csls_reduces_it():
    src, tgt = hub_dominated()
    (cosine,) = metrics.xlr(src, tgt, [np.arange(300)], k=10).metrics
    (csls,) = metrics.xlr(src, tgt, [np.arange(300)], k=10, retrieval="csls").metrics
    assert cosine["hub_skew"] > 2 and csls["hub_skew"] < 0.6 * cosine["hub_skew"]
    assert csls["antihubs"] < cosine["antihubs"]
    assert csls["recall@k"] > cosine["recall@k"]
    q, t = [np.arange(150)], [np.arange(150, 300)]
    (bk_cos,) = metrics.backretrieval(src, tgt, src, q, t, k=10).metrics
    (bk_csls,) = metrics.backretrieval(src, tgt, src, q, t, k=10, retrieval="csls").metrics
    assert bk_csls["hub_skew"] < bk_cos["hub_skew"]


def test_csls_is_the_same_for_a_seed_alone_and_in_small_chunks(monkeypatch):
    src, tgt = hub_dominated(1, 60, 20)
    samples = [np.random.default_rng(s).permutation(60)[:40] for s in range(3)]
    whole = metrics.xlr(src, tgt, samples, k=5, retrieval="csls").metrics
    alone = [metrics.xlr(src, tgt, [s], k=5, retrieval="csls").metrics[0] for s in samples]
    monkeypatch.setattr(metrics, "CHUNK_BYTES", 4 * 60 * 3)  # three rows per chunk
    chunked = metrics.xlr(src, tgt, samples, k=5, retrieval="csls").metrics
    for a, b, c in zip(whole, alone, chunked):
        assert a == pytest.approx(b) and a == pytest.approx(c)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 6), st.sampled_from(metrics.TIE_RULES))
def test_k_occurrences_sum_to_queries_times_k(seed, k, rule):
    """The expected k-occurrences sum to (queries x k) when k <= candidates; rounded vectors make ties."""
    rng = np.random.default_rng(seed)
    src, tgt = np.round(rng.normal(size=(12, 3))), np.round(rng.normal(size=(12, 3)))
    rows = list(
        metrics._top_lists(
            metrics.scored_blocks(metrics._Side(src), metrics._Side(tgt), [np.arange(6)], [np.arange(6, 12)]), k, 2e-6
        )
    )
    total = sum(metrics.occurrences(r, c, v, k, rule, 1e-6, 12).sum() for _, _, r, c, v in rows)
    if rule == "expected":
        assert total == pytest.approx(6 * k)
    elif rule == "optimistic":
        assert total >= 6 * k - 1e-9
    else:
        assert total <= 6 * k + 1e-9


def test_an_unknown_retrieval_fails():
    with pytest.raises(ValueError, match="unknown retrieval 'dot'"):
        metrics.xlr(HUB_SRC, EYE, [np.arange(3)], retrieval="dot")


def test_the_tasks_report_hubness_with_metric_info_and_take_csls_as_an_argument():
    from retrieval.test_retrieval_tasks import LookupEncoder, item_of, synthetic

    from harness.run.context import RunContext
    from harness_tasks.retrieval.tasks import Xlr

    src, tgt = hub_dominated(2, 40, 30)
    model = LookupEncoder(lambda text, lang: (src if lang == "en" else tgt)[item_of(text, lang)])
    cosine = Xlr("xlr", {"n": 40, "k": 5})
    csls = Xlr("xlr", {"n": 40, "k": 5, "retrieval": "csls", "csls_k": 10})
    out_cos, out_csls = (t.evaluate(synthetic(40), model, RunContext([0])) for t in (cosine, csls))
    (direct,) = metrics.xlr(src, tgt, [np.arange(40)], k=5, retrieval="csls").metrics
    assert out_csls.per_seed[0] == pytest.approx(direct) and out_cos.per_seed[0] != out_csls.per_seed[0]
    info = cosine.metric_info(out_cos)
    assert info["hub_skew"]["display"] == "N5 skew" and info["hub_skew"]["higher_is_better"] is None
    assert info["antihubs"]["display"] == "anti-hubs" and info["antihubs"]["statistic"] is None


def test_a_csls_neighbourhood_below_one_is_refused():
    from harness.errors import HarnessError
    from harness_tasks.retrieval.tasks import BackRetrieval

    with pytest.raises(HarnessError, match="argument csls_k=0 must be at least 1"):
        BackRetrieval("backretrieval", {"retrieval": "csls", "csls_k": 0})
