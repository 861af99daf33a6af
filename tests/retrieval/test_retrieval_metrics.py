"""The retrieval metrics: hand-computed cases (ties, duplicates, n < k), an oracle and a random
encoder, and a property test against a brute-force reference over chunking and pooling paths."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from harness_tasks.retrieval import metrics as M

# --- hand-computed cases -------------------------------------------------------------------

# xlr: items 0..2; cosines S[i, j] = cos(src_i, tgt_j):
#   item 0: [1, .707, 0]   own target best                  -> better 0, tied 0
#   item 1: [0, .707, 1]   target 2 better                  -> better 1, tied 0
#   item 2: [.707, 1, .707] target 1 better, target 0 tied  -> better 1, tied 1
XLR_SRC = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32)
XLR_TGT = np.array([[1, 0], [1, 1], [0, 1]], dtype=np.float32)
ALL3 = [np.arange(3)]


@pytest.mark.parametrize(
    ("k", "rule", "expected"),
    [
        (1, "expected", 1 / 3),
        (2, "expected", (1 + 1 + 0.5) / 3),
        (2, "optimistic", 1.0),
        (2, "pessimistic", 2 / 3),
        (3, "pessimistic", 1.0),
    ],
)
def test_xlr_recall_by_hand(k, rule, expected):
    (metrics,) = M.xlr(XLR_SRC, XLR_TGT, ALL3, k, rule).metrics
    assert metrics["recall@k"] == pytest.approx(expected)


def test_xlr_mrr_and_median_rank_by_hand():
    (metrics,) = M.xlr(XLR_SRC, XLR_TGT, ALL3, 1).metrics
    # reciprocal ranks 1, 1/2 and (1/2 + 1/3) / 2 (rank 2 or 3); expected ranks 1, 2, 2.5
    assert metrics["mrr"] == pytest.approx((1 + 1 / 2 + 5 / 12) / 3)
    assert metrics["median_rank"] == pytest.approx(2.0)
    optimistic = M.xlr(XLR_SRC, XLR_TGT, ALL3, 1, "optimistic").metrics[0]
    assert optimistic["mrr"] == pytest.approx((1 + 1 / 2 + 1 / 2) / 3) and optimistic["median_rank"] == 2.0


def test_xlr_duplicate_targets_share_the_hit():
    src = np.eye(3, dtype=np.float32)
    tgt = np.array([[1, 0, 0], [1, 0, 0], [0, 0, 1]], dtype=np.float32)  # target 1 duplicates target 0
    result = M.xlr(src, tgt, ALL3, 1)
    # item 0: own target tied with target 1 -> 1/2; item 1: its target scores 0 like target 2,
    # while target 0 (= its duplicate) scores 0 too -> 3-way tie -> 1/3; item 2: exact -> 1
    assert result.queries[0].hit.tolist() == pytest.approx([0.5, 1 / 3, 1.0])


def test_xlr_with_n_below_k_is_one():
    rng = np.random.default_rng(0)
    src, tgt = rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    assert M.xlr(src, tgt, [np.array([0, 3, 4])], k=10).metrics[0]["recall@k"] == 1.0


# backretrieval: sources 0..2, targets 3..5 (k = 1 and 2), worked out in the comments.
#   text: q0 ties targets 3 and 4 (duplicate vectors); q1 -> target 5; q2 ties all three (all 0).
#   images (g): sources 0=[1,0], 1=[0,1], 2=[1,1]; targets 3=[1,0] (duplicates source 0's), 4=[0,1], 5=[1,1].
#   q0 via 3: its image is the best -> hit; via 4: two sources better -> miss.
#   q1 via 5: source 2 better, source 0 tied with q1 -> k=1: 0, k=2: (2-1)/(1+1) = 1/2.
#   q2 via 3 or 4: one better (k=1: 0, k=2: 1); via 5: best (hit).
BKR_SRC = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [9, 9, 9], [9, 9, 9], [9, 9, 9]], dtype=np.float32)
BKR_TGT = np.array([[9, 9, 9], [9, 9, 9], [9, 9, 9], [1, 0, 0], [1, 0, 0], [0, 1, 0]], dtype=np.float32)
BKR_IMG = np.array([[1, 0], [0, 1], [1, 1], [1, 0], [0, 1], [1, 1]], dtype=np.float32)
SOURCES, TARGETS = [np.array([0, 1, 2])], [np.array([3, 4, 5])]


@pytest.mark.parametrize(
    ("k", "rule", "hits"),
    [
        (1, "expected", [0.5, 0.0, 1 / 3]),
        (1, "optimistic", [1.0, 0.0, 1.0]),
        (1, "pessimistic", [0.0, 0.0, 0.0]),
        (2, "expected", [0.5, 0.5, 1.0]),
        (2, "optimistic", [1.0, 1.0, 1.0]),
        (2, "pessimistic", [0.0, 0.0, 1.0]),
    ],
)
def test_backretrieval_by_hand(k, rule, hits):
    result = M.backretrieval(BKR_SRC, BKR_TGT, BKR_IMG, SOURCES, TARGETS, k, rule)
    assert result.queries[0].hit.tolist() == pytest.approx(hits)
    assert result.metrics[0]["recall@k"] == pytest.approx(sum(hits) / 3)
    assert result.queries[0].match[1] == 5  # q1's retrieved target


def test_backretrieval_with_n_below_k_is_one():
    assert M.backretrieval(BKR_SRC, BKR_TGT, BKR_IMG, SOURCES, TARGETS, k=10).metrics[0]["recall@k"] == 1.0


def test_backretrieval_refuses_overlapping_samples():
    with pytest.raises(ValueError, match="disjoint"):
        M.backretrieval(BKR_SRC, BKR_TGT, BKR_IMG, [np.array([0, 1])], [np.array([1, 2])])


# corr: pairs (q0,t2), (q0,t3), (q1,t2), (q1,t3); text cosines rank (4, 2, 1, 3), image cosines
# .949, .707, .316, .707 rank (4, 2.5, 1, 2.5); Spearman = Pearson of the ranks = sqrt(0.9).
CORR_SRC = np.array([[1, 0], [0, 1], [0, 0], [0, 0]], dtype=np.float32)
CORR_TGT = np.array([[0, 0], [0, 0], [5, 1], [1, 2]], dtype=np.float32)
CORR_IMG = np.array([[1, 0], [0, 1], [3, 1], [1, 1]], dtype=np.float32)


def test_corr_by_hand_with_tied_ranks():
    (value,) = M.corr(CORR_SRC, CORR_TGT, CORR_IMG, [np.array([0, 1])], [np.array([2, 3])])
    assert value["spearman"] == pytest.approx(math.sqrt(0.9))


def test_corr_caps_pairs_with_a_square_sub_block():
    assert M.corr_side(3, 9) == 3 and M.corr_side(3, 8) == 2 and M.corr_side(1000, 1_000_000) == 1000
    src, tgt, img = (np.vstack([a, a[:1]]) for a in (CORR_SRC, CORR_TGT, CORR_IMG))  # item 4 copies item 0
    capped = M.corr(src, tgt, img, [np.array([0, 1, 4])], [np.array([2, 3, 4])], max_pairs=4)
    assert capped[0]["spearman"] == pytest.approx(math.sqrt(0.9))


def test_corr_is_undefined_for_constant_distances():
    flat = np.ones((4, 2), dtype=np.float32)
    assert M.corr(CORR_SRC, CORR_TGT, flat, [np.array([0, 1])], [np.array([2, 3])])[0]["spearman"] is None


def test_corr_is_undefined_when_distances_differ_only_by_rounding():
    """One-dimensional positive image features: every cosine is 1 but for float32 rounding (the g-sweep's
    truncation to one dimension), which ranked would give a spurious correlation."""
    one_dim = np.array([[0.1], [0.3], [0.7], [1.9], [2.3], [3.7], [5.1], [7.3]], dtype=np.float32)
    src, tgt = np.random.default_rng(0).normal(size=(2, 8, 4)).astype(np.float32)
    sources, targets = [np.arange(4)], [np.arange(4, 8)]
    image = M._cosine(M._Side(one_dim), sources[0], M._Side(one_dim), targets[0])
    assert 0 < np.ptp(image) <= M.TIE_TOLERANCE  # equal up to rounding, not exactly (the old rule ranked these)
    assert M.corr(src, tgt, one_dim, sources, targets)[0]["spearman"] is None
    two_dim = np.hstack([one_dim, np.arange(8, dtype=np.float32)[:, None]])  # distances that really differ
    assert M.corr(src, tgt, two_dim, sources, targets)[0]["spearman"] is not None


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 10**4)), min_size=1, max_size=20))
def test_the_expected_reciprocal_rank_is_the_digamma_difference(pairs):
    """The mean of 1/r over tied ranks as (digamma(b + t + 2) - digamma(b + 1)) / (t + 1), SciPy's, to 1e-12."""
    better, tied = (np.array(column, dtype=np.float64) for column in zip(*pairs))
    expected = (special.digamma(better + tied + 2) - special.digamma(better + 1)) / (tied + 1)
    assert M.reciprocal_rank(better, tied) == pytest.approx(expected, rel=1e-12)


def test_tie_formulas():
    assert M.hit_probability([0, 1, 3, 9], [0, 1, 3, 0], 2).tolist() == pytest.approx([1.0, 0.5, 0.0, 0.0])
    assert M.hit_probability([1], [4], 3).tolist() == pytest.approx([0.4])  # ranks 2..6, two of five in the top 3
    assert M.reciprocal_rank([0, 2], [0, 1]).tolist() == pytest.approx([1.0, (1 / 3 + 1 / 4) / 2])
    assert M.reciprocal_rank([4, 0], [0, 0]).tolist() == [1 / 5, 1.0]  # nothing tied: exactly 1 / (better + 1)
    assert M.reciprocal_rank([1], [2]).tolist() == pytest.approx([(1 / 2 + 1 / 3 + 1 / 4) / 3], rel=1e-15)
    assert M.rank([2], [3]).tolist() == [4.5]
    with pytest.raises(ValueError, match="tie rule"):
        M.hit_probability([0], [0], 1, "random")


def test_zero_vectors_tie_with_everything():
    src = np.zeros((3, 2), dtype=np.float32)
    tgt = np.eye(3, 2, dtype=np.float32)
    assert M.xlr(src, tgt, ALL3, 1).metrics[0]["recall@k"] == pytest.approx(1 / 3)


def test_plan_pools_overlapping_samples_and_splits_disjoint_ones():
    overlapping = [np.array([0, 1, 2]), np.array([2, 1, 0])]
    (block,) = M.plan_blocks(overlapping, overlapping)
    assert block.seeds == (0, 1) and block.row_member.all()
    disjoint = [np.array([0, 1]), np.array([2, 3]), np.array([4, 5])]
    blocks = M.plan_blocks(disjoint, disjoint)
    assert [b.seeds for b in blocks] == [(0,), (1,), (2,)] and blocks[1].rows.tolist() == [2, 3]


# --- oracle and random encoders ------------------------------------------------------------


def test_oracle_encoder_gives_exactly_one():
    one_hot = np.eye(500, dtype=np.float32)  # item id as vector: a text and its translation are identical
    samples = [np.random.default_rng(s).permutation(500)[:200] for s in range(5)]
    result = M.xlr(one_hot, one_hot.copy(), samples, k=1)
    assert all(m["recall@k"] == 1.0 and m["mrr"] == 1.0 and m["median_rank"] == 1.0 for m in result.metrics)


def test_random_encoder_is_near_chance():
    rng = np.random.default_rng(42)
    n_items, n, k, seeds = 3000, 500, 10, 20
    src, tgt = rng.standard_normal((n_items, 32)), rng.standard_normal((n_items, 32))
    samples = [np.random.default_rng(s).permutation(n_items)[:n] for s in range(seeds)]
    recall = np.mean([m["recall@k"] for m in M.xlr(src, tgt, samples, k).metrics])
    chance = k / n
    # n * seeds queries, nearly independent (the samples overlap by a sixth): 5 standard errors
    assert abs(recall - chance) < 5 * math.sqrt(chance * (1 - chance) / (n * seeds))


# --- brute force over chunking and pooling --------------------------------------------------


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = a.astype(np.float64), b.astype(np.float64)
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    return (a / np.where(na == 0, 1, na)[:, None]) @ (b / np.where(nb == 0, 1, nb)[:, None]).T


def counts(row: np.ndarray, value: float, tol: float = M.TIE_TOLERANCE) -> tuple[int, int]:
    better = int((row > value + tol).sum())
    return better, int((row >= value - tol).sum()) - better - 1


def brute_xlr(src, tgt, samples, k, rule):
    out = []
    for sample in samples:
        sims = cosine(src[sample], tgt[sample])
        hits = [M.hit_probability(*counts(sims[i], sims[i, i]), k, rule) for i in range(len(sample))]
        out.append(float(np.mean(hits)))
    return out


def brute_backretrieval(src, tgt, images, sources, targets, k, rule):
    combine = {"expected": np.mean, "optimistic": np.max, "pessimistic": np.min}[rule]
    out = []
    for q, t in zip(sources, targets):
        text, image = cosine(src[q], tgt[t]), cosine(images[t], images[q])
        hits = []
        for a in range(len(q)):
            best = np.flatnonzero(text[a] >= text[a].max() - M.TIE_TOLERANCE)
            hits.append(combine([M.hit_probability(*counts(image[b], image[b, a]), k, rule) for b in best]))
        out.append(float(np.mean(hits)))
    return out


@st.composite
def problems(draw):
    n_items = draw(st.integers(2, 30))
    dim = draw(st.integers(1, 3))
    ints = st.integers(-2, 2)
    src, tgt, img = (
        np.array(
            draw(st.lists(st.lists(ints, min_size=dim, max_size=dim), min_size=n_items, max_size=n_items)),
            dtype=np.float32,
        )
        for _ in range(3)
    )
    n = draw(st.integers(1, n_items // 2))
    seeds = draw(st.integers(1, 4))
    perms = [np.random.default_rng(s).permutation(n_items) for s in range(seeds)]
    return (
        src,
        tgt,
        img,
        [p[:n] for p in perms],
        [p[n : 2 * n] for p in perms],
        draw(st.integers(1, 5)),
        draw(st.sampled_from(M.TIE_RULES)),
    )


@pytest.mark.parametrize("path", ["default", "tiny chunks, few candidates"])
@settings(max_examples=60, deadline=None)
@given(problem=problems())
def test_matches_brute_force(path, problem):
    src, tgt, img, sources, targets, k, rule = problem
    with pytest.MonkeyPatch.context() as patch:
        if path != "default":  # one row per chunk, and candidate lists too short: the fallbacks run
            patch.setattr(M, "CHUNK_BYTES", 1)
            patch.setattr(M, "_depth", lambda needed, block: min(len(block.cols), needed))
        xlr = [m["recall@k"] for m in M.xlr(src, tgt, sources, k, rule).metrics]
        bkr = [m["recall@k"] for m in M.backretrieval(src, tgt, img, sources, targets, k, rule).metrics]
    assert xlr == pytest.approx(brute_xlr(src, tgt, sources, k, rule))
    assert bkr == pytest.approx(brute_backretrieval(src, tgt, img, sources, targets, k, rule))


@pytest.mark.parametrize("path", ["default", "tiny chunks, few candidates"])
@settings(max_examples=60, deadline=None)
@given(problem=problems())
def test_xlr_tie_counts_match_brute_force_from_candidates_or_whole_rows(path, problem):
    """xlr counts a query's better and tied targets among its candidates when its own target is above
    their floor, else over the whole row; either way the counts are brute force's, exactly."""
    src, tgt, _, sources, _, k, rule = problem
    listed = []
    with pytest.MonkeyPatch.context() as patch:
        if path != "default":
            patch.setattr(M, "CHUNK_BYTES", 1)
            patch.setattr(M, "_depth", lambda needed, block: min(len(block.cols), needed))
        member_counts = M._member_counts
        patch.setattr(M, "_member_counts", lambda idx, *a: listed.append(len(idx)) or member_counts(idx, *a))
        result = M.xlr(src, tgt, sources, k, rule)
    share = {"expected": 0.5, "optimistic": 0.0, "pessimistic": 1.0}[rule]
    for sample, query in zip(sources, result.queries):
        sims = cosine(src[sample], tgt[sample])
        expected = [counts(sims[i], sims[i, i]) for i in range(len(sample))]
        assert query.rank.tolist() == [better + 1 + share * tied for better, tied in expected]
    queries = sum(len(s) for s in sources)
    assert sum(listed) <= 2 * queries  # each query counted once (two calls: better, tied) or over its whole row


def test_xlr_counts_from_candidates_and_from_whole_rows_by_hand(monkeypatch):
    """Five unit targets on a half circle; queries 0-3 are their own targets (cos 1, above the floor of
    their two best candidates), query 4 is target 0, whose own target 4 (cos -1) is below it."""
    angles = np.linspace(0, np.pi, 5)
    tgt = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    src = tgt.copy()
    src[4] = tgt[0]  # query 4 looks like target 0: its own target 4 is the least similar (rank 5)
    monkeypatch.setattr(M, "_depth", lambda needed, block: 2)  # candidates: each row's 2 best
    calls = []
    member_counts = M._member_counts
    monkeypatch.setattr(M, "_member_counts", lambda idx, *a: calls.append(len(idx)) or member_counts(idx, *a))
    (query,) = M.xlr(src, tgt, [np.arange(5)], k=1).queries
    assert query.rank.tolist() == [1.0, 1.0, 1.0, 1.0, 5.0]
    assert calls == [4, 4]  # four rows from their candidates (better, then tied); row 4 from its whole row


# --- one text pass for xlr and backretrieval ------------------------------------------------


@pytest.mark.parametrize("path", ["default", "tiny chunks, few candidates"])
@settings(max_examples=40, deadline=None)
@given(problem=problems(), retrieval=st.sampled_from(M.RETRIEVALS))
def test_joint_pass_equals_the_two_metrics(path, problem, retrieval):
    src, tgt, img, sources, targets, k, rule = problem
    with pytest.MonkeyPatch.context() as patch:
        if path != "default":
            patch.setattr(M, "CHUNK_BYTES", 1)
            patch.setattr(M, "_depth", lambda needed, block: min(len(block.cols), needed))
        alone = (
            M.xlr(src, tgt, sources, k, rule, retrieval=retrieval),
            M.backretrieval(src, tgt, img, sources, targets, k, rule, retrieval=retrieval),
        )
        joint = M.xlr_and_backretrieval(src, tgt, img, sources, sources, targets, k, rule, retrieval=retrieval)
    for one, other in zip(alone, joint):
        assert one.metrics == other.metrics  # exactly: the same similarities, the same arithmetic
        for a, b in zip(one.queries, other.queries):
            assert np.array_equal(a.hit, b.hit) and np.array_equal(a.items, b.items)
            assert (a.match is None and b.match is None) or np.array_equal(a.match, b.match)


def text_products(monkeypatch) -> list[int]:
    """Record the size of every chunk of similarities computed."""
    sizes: list[int] = []
    product = M._Product.__call__

    def counting(self, part):
        sims = product(self, part)
        sizes.append(sims.size)
        return sims

    monkeypatch.setattr(M._Product, "__call__", counting)
    return sizes


def test_joint_pass_computes_the_text_product_once(monkeypatch):
    # 8 items, 4 seeds: sources = first 4 of each permutation, targets = the other 4; the unions
    # of sources and of targets are all 8 items, so each text pass is one 8 x 8 product
    rng = np.random.default_rng(3)
    src, tgt, img = (rng.standard_normal((8, 3)).astype(np.float32) for _ in range(3))
    perms = [np.random.default_rng(s).permutation(8) for s in range(4)]
    sources, targets = [p[:4] for p in perms], [p[4:] for p in perms]
    assert len(np.unique(np.concatenate(sources))) == len(np.unique(np.concatenate(targets))) == 8
    sizes = text_products(monkeypatch)
    M.xlr(src, tgt, sources)
    M.backretrieval(src, tgt, img, sources, targets)
    separate = sum(sizes)
    sizes.clear()
    M.xlr_and_backretrieval(src, tgt, img, sources, sources, targets)
    # text twice (64 + 64) and the images (64) against text once and the images
    assert (separate, sum(sizes)) == (3 * 64, 2 * 64)


def test_shared_blocks_joins_overlapping_groups_and_keeps_disjoint_ones_apart():
    same = [np.array([0, 1, 2]), np.array([2, 1, 0])]
    (block,) = M.shared_blocks([(same, same), (same, same)])
    assert block.seeds == (0, 1, 2, 3) and block.rows.tolist() == [0, 1, 2]
    # each group pools its own two seeds (3 x 3 each); together 6 x 6 = 36 > 9 + 9: kept apart
    other = [np.array([3, 4, 5]), np.array([5, 4, 3])]
    blocks = M.shared_blocks([(same, same), (other, other)])
    assert [b.seeds for b in blocks] == [(0, 1), (2, 3)] and blocks[1].cols.tolist() == [3, 4, 5]


def test_joint_pass_refuses_overlapping_backretrieval_samples():
    with pytest.raises(ValueError, match="disjoint"):
        M.xlr_and_backretrieval(BKR_SRC, BKR_TGT, BKR_IMG, ALL3, [np.array([0, 1])], [np.array([1, 2])])


# --- ranks for Spearman -----------------------------------------------------------------------


def test_average_ranks_by_hand():
    # 1 -> rank 1, 2 -> rank 2, the three 3s share ranks 3, 4, 5 -> 4; -0.0 and 0.0 are equal (ranks 1, 2),
    # the two 0.5s share ranks 3, 4
    assert M.average_ranks(np.array([3, 1, 3, 2, 3])).tolist() == [4, 1, 4, 2, 4]
    assert M.average_ranks(np.array([[0.5, -0.0], [0.0, 0.5]])).tolist() == [3.5, 1.5, 1.5, 3.5]  # flattened
    assert M.average_ranks(np.zeros(0)).tolist() == []
    assert np.isnan(M.average_ranks(np.array([1.0, np.nan, 2.0]))).all()  # as rankdata: NaN propagates


def test_average_ranks_tie_values_within_the_tolerance():
    # 0.1 and 0.1 + 5e-7 tie (ranks 1, 2 -> 1.5); 0.3 and 0.3 + 2e-6 do not (3, 4)
    assert M.average_ranks(np.array([0.3 + 2e-6, 0.1, 0.3, 0.1 + 5e-7]), 1e-6).tolist() == [4, 1.5, 3, 1.5]
    # no chaining: 6e-7 is within 1e-6 of the group's first value 0 (ranks 1, 2 -> 1.5), 1.2e-6 is not: it opens
    # the next group, although it is within 1e-6 of 6e-7
    assert M.average_ranks(np.array([1.2e-6, 0.0, 6e-7]), 1e-6).tolist() == [3, 1.5, 1.5]
    assert M.average_ranks(np.array([1.2e-6, 0.0, 6e-7])).tolist() == [3, 1, 2]  # tol 0: exact ties only
    # duplicates and a long run: 0, 0, 5e-7 | 1.1e-6, 2e-6, 2e-6 | 2.2e-6 | 4e-6 (each step <= 1e-6 chained all
    # but the last); groups of 3, 3, 1, 1 take ranks 1-3, 4-6, 7, 8
    run = np.array([2e-6, 0.0, 4e-6, 1.1e-6, 5e-7, 2.2e-6, 0.0, 2e-6])
    assert M.average_ranks(run, 1e-6).tolist() == [5, 2, 8, 5, 2, 7, 2, 5]
    assert M.average_ranks(np.zeros(0), 1e-6).tolist() == []
    assert M.average_ranks(np.array([0.25]), 1e-6).tolist() == [1]
    assert M.average_ranks(np.full(4, 0.5), 1e-6).tolist() == [2.5] * 4  # all equal: one group


def anchored_openings(values: np.ndarray, tol: float) -> list[bool]:
    """The reference for ``tie_groups``: one value at a time, a group opens above its first value + tol."""
    opens, first = [], -math.inf
    for value in np.sort(values).astype(np.float64):
        opens.append(bool(value > first + tol))
        first = value if opens[-1] else first
    return opens


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(st.integers(0, 40), min_size=1, max_size=80),
    scale=st.sampled_from([1e-7, 3e-7, 1e-6, 1e-5]),
    offset=st.sampled_from([0.0, -0.5, 0.75]),
    steps=st.sampled_from([1, 2, M.FOLLOWED_STEPS]),
)
def test_tie_groups_equal_the_one_at_a_time_reference(data, scale, offset, steps):
    """Followed a step at a time, by doubling after 1 or 2 steps (runs of more groups), or both."""
    values = np.sort(offset + np.array(data) * scale)  # on a grid: many duplicates, runs shorter and longer than tol
    followed, M.FOLLOWED_STEPS = M.FOLLOWED_STEPS, steps
    try:
        assert M.tie_groups(values, 1e-6).tolist() == anchored_openings(values, 1e-6)
    finally:
        M.FOLLOWED_STEPS = followed


def crowded_block(n: int = 1000, d: int = 32) -> tuple[np.ndarray, ...]:
    """n sources and n targets whose text cosines crowd into [0.91, 0.99] (a shared direction dominates every
    vector: 10^6 cosines, most within 1e-6 of a neighbour, chain into one run) and images that vary widely."""
    rng = np.random.default_rng(7)
    latent = rng.standard_normal((2 * n, d))
    common = 6 * rng.standard_normal(d)
    src = (common + latent).astype(np.float32)
    tgt = (common + latent + 0.5 * rng.standard_normal((2 * n, d))).astype(np.float32)
    images = (latent[:, :16] + rng.standard_normal((2 * n, 16))).astype(np.float32)
    return src, tgt, images, np.arange(n), np.arange(n, 2 * n)


def test_corr_on_crowded_cosines_stays_within_1e_6_of_exact_ties():
    src, tgt, images, sources, targets = crowded_block()
    text = M._cosine(M._Side(src), sources, M._Side(tgt), targets).ravel()
    image = M._cosine(M._Side(images), sources, M._Side(images), targets).ravel()
    exact = float(stats.spearmanr(text, image).statistic)
    ((value,),) = [list(v.values()) for v in M.corr(src, tgt, images, [sources], [targets])]
    assert abs(value - exact) < 1e-6
    # the data is crowded enough to matter: chained ties (version 3) put most text cosines in one group
    ordered = np.sort(text).astype(np.float64)
    starts = np.flatnonzero(np.concatenate(([True], np.diff(ordered) > M.TIE_TOLERANCE)))
    assert np.diff(np.append(starts, len(text))).max() > 0.4 * len(text)
    groups = M.tie_groups(ordered, M.TIE_TOLERANCE)
    spans = np.maximum.reduceat(ordered, np.flatnonzero(groups)) - ordered[groups]
    assert spans.max() <= M.TIE_TOLERANCE  # every group spans at most the tolerance


def test_corr_ties_cosines_that_differ_by_float_noise():
    # items 0, 1 are the sources, 2, 3 the targets; target 3 is target 2 moved by 3e-6 along one axis, so each
    # source's two text cosines differ by float32 noise (< 1e-6) and are tied, as retrieval ties them
    src = np.array([[1, 0, 0], [1, 2, 0], [0, 0, 0], [0, 0, 0]], dtype=np.float64)
    tgt = np.array([[0, 0, 0], [0, 0, 0], [1, 1, 1], [1, 1, 1 + 3e-6]], dtype=np.float64)
    images = np.array([[1, 0], [0, 1], [2, 1], [1, 3]], dtype=np.float64)
    text = (
        np.float32(src[:2])
        @ np.float32(tgt[2:]).T
        / np.outer(np.linalg.norm(np.float32(src[:2]), axis=1), np.linalg.norm(np.float32(tgt[2:]), axis=1))
    )
    assert np.all((np.abs(text[:, 0] - text[:, 1]) > 0) & (np.abs(text[:, 0] - text[:, 1]) < M.TIE_TOLERANCE))
    ((value,),) = [list(v.values()) for v in M.corr(src, tgt, images, [np.array([0, 1])], [np.array([2, 3])])]
    # text ranks tied [[1.5, 1.5], [3.5, 3.5]]; image cosines [[.894, .316], [.447, .949]] rank [[3, 1], [2, 4]]:
    # centred x = (-1, -1, 1, 1), y = (.5, -1.5, -.5, 1.5): r = 2 / sqrt(4 * 5); ranking the noise would give 2 / 5
    assert value == pytest.approx(2 / math.sqrt(20), abs=1e-12)
    from harness_tasks.retrieval.tasks import Corr

    assert Corr.version == 4  # the definition changed numbers (3: chained ties)


values = st.one_of(st.integers(-3, 3), st.floats(-1, 1, width=32), st.just(float("nan")))


@settings(max_examples=200, deadline=None)
@given(
    data=st.lists(values, min_size=0, max_size=60),
    dtype=st.sampled_from([np.float32, np.float64]),
    columns=st.integers(1, 3),
)
def test_average_ranks_equal_scipy_rankdata(data, dtype, columns):
    array = np.array(data, dtype=dtype)
    array = array[: len(array) - len(array) % columns].reshape(-1, columns)  # 2-D too: ranked as one flat array
    expected = stats.rankdata(array, method="average", axis=None)
    assert np.array_equal(M.average_ranks(array), expected, equal_nan=True)


@settings(max_examples=100, deadline=None)
@given(data=st.lists(st.tuples(st.integers(-3, 3), st.floats(-1, 1, width=32)), min_size=2, max_size=60))
def test_rank_correlation_equals_scipy_spearmanr_exactly(data):
    a, b = (np.array(column, dtype=np.float32) for column in zip(*data))
    ours = M._rank_correlation(a, b, M.average_ranks(a), M.average_ranks(b))
    if np.ptp(a) <= M.TIE_TOLERANCE or np.ptp(b) <= M.TIE_TOLERANCE:  # constant up to the tie tolerance
        assert ours is None
    else:
        assert ours == float(stats.spearmanr(a, b).statistic)


# --- candidates: the depth-th largest found from a sampled lower bound ----------------------


def whole_row_candidates(sims: np.ndarray, depth: int):
    """The reference: a partition of every whole row, then every value at or above it."""
    depth = min(depth, sims.shape[1])
    floor = np.partition(sims, sims.shape[1] - depth, axis=1)[:, sims.shape[1] - depth]
    lists = [sorted(((-v, c) for c, v in enumerate(row) if v >= f)) for row, f in zip(sims, floor)]
    return floor, [[c for _, c in entries] for entries in lists], [[-v for v, _ in entries] for entries in lists]


def test_candidates_by_hand_with_a_sampled_bound(monkeypatch):
    monkeypatch.setattr(M, "SAMPLE_STRIDE", 2)
    monkeypatch.setattr(M, "SAMPLE_MIN_COLUMNS", 1)
    # every 2nd column of row 0 is [5, 1, 1]: its 2 * ceil(2 / 2) + 4 = 6th largest is capped at the
    # 3rd, 1, which leaves 5 values (all but the 0); their 2nd largest is 4 (tied): columns 0, 1, 5
    sims = np.array([[5, 4, 1, 0, 1, 4], [0, 0, 0, 0, 0, 0]], dtype=np.float32)
    idx, val, floor = M._candidates(sims, 2)
    assert floor.tolist() == [4, 0]
    assert idx[0, :3].tolist() == [0, 1, 5] and val[0, :3].tolist() == [5, 4, 4] and idx[0, 3:].tolist() == [-1] * 3
    assert idx[1].tolist() == [0, 1, 2, 3, 4, 5]  # all tied


@settings(max_examples=100, deadline=None)
@given(
    shape=st.tuples(st.integers(0, 6), st.integers(1, 80)),
    depth=st.integers(1, 30),
    stride=st.integers(1, 9),
    ties=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_candidates_with_sampled_bounds_equal_whole_rows(shape, depth, stride, ties, seed):
    rng = np.random.default_rng(seed)
    sims = (rng.integers(-2, 3, shape) if ties else rng.standard_normal(shape)).astype(np.float32)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(M, "SAMPLE_STRIDE", stride)
        patch.setattr(M, "SAMPLE_MIN_COLUMNS", 1)  # the sampled bound on every row, short rows redone whole
        idx, val, floor = M._candidates(sims, depth)
    expected_floor, expected_cols, expected_vals = whole_row_candidates(sims, depth)
    assert floor.tolist() == expected_floor.tolist()
    assert [[c for c in row if c >= 0] for row in idx.tolist()] == expected_cols
    assert [[v for v in row if v > -np.inf] for row in val.tolist()] == expected_vals
