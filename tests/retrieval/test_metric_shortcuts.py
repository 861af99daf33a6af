"""Faster paths of the retrieval metrics and tasks give the bits of the straightforward computation they replace."""

from __future__ import annotations

import numpy as np
import pytest

from harness_tasks.retrieval import metrics as M
from harness_tasks.retrieval.metrics import rows_of


def reference_inverse_norms(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1)
    return np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0).astype(np.float32)


@pytest.mark.parametrize("rows", [1, 7])  # blocks of one row; of 7 rows and a last one of 1
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_inverse_norms_in_blocks_of_rows_equal_those_at_once(monkeypatch, rows, layout, dtype):
    monkeypatch.setattr(M, "NORM_ROWS", rows)
    rng = np.random.default_rng(2)
    matrix = (rng.standard_normal((50, 301)) * 10).astype(dtype)
    matrix[3] = 0  # a zero row: inverse norm 0
    vectors = {"C": matrix, "F": np.asfortranarray(matrix), "strided": matrix[:, ::3]}[layout]
    got = M.inverse_norms(vectors)
    assert got.dtype == np.float32 and got[3] == 0
    assert got.tobytes() == reference_inverse_norms(vectors).tobytes()


def test_image_hit_keys_are_distinct_so_any_sort_orders_them_alike():
    # rounded vectors and repeated images: many tied similarities, each (seed, target, source) still once
    rng = np.random.default_rng(4)
    images = np.round(rng.standard_normal((30, 3)))
    images[10:15] = images[0]
    perms = [np.random.default_rng(s).permutation(30) for s in range(5)]
    sources, targets = [p[:12] for p in perms], [p[12:24] for p in perms]
    keys, probs = M._image_hits(M._Side(images), sources, targets, 3, "expected", 1e-6, 30)
    assert len(keys) > 5 * 12 * 3  # ties widen the lists beyond k per target
    assert np.all(np.diff(keys) > 0) and np.all(probs > 0)


def test_rows_of_all_items_in_order_is_the_matrix_itself_else_those_rows():
    matrix = np.arange(12.0).reshape(4, 3)
    assert rows_of(matrix, np.arange(4)) is matrix
    for items in (np.array([0, 1, 3, 2]), np.array([1, 2]), np.array([0, 1, 2, 2])):  # reordered, fewer, repeated
        picked = rows_of(matrix, items)
        assert picked is not matrix and np.array_equal(picked, matrix[items])


def reference_average_ranks(values: np.ndarray, tol: float) -> np.ndarray:
    """Mid-ranks of groups anchored to their first value (each holds the values within ``tol`` of it), ordered by
    ``np.argsort``, one group at a time."""
    flat = values.ravel()
    order = np.argsort(flat)
    ordered = flat[order].astype(np.float64)
    ranks = np.empty(len(flat))
    start = 0
    while start < len(flat):
        end = start + 1
        while end < len(flat) and ordered[end] <= ordered[start] + tol:
            end += 1
        ranks[order[start:end]] = 0.5 * (start + end + 1)
        start = end
    return ranks


def edge_floats(size: int, seed: int) -> np.ndarray:
    """float32 values with negatives, both zeros, infinities, subnormals and many repeats."""
    rng = np.random.default_rng(seed)
    special = np.array([0.0, -0.0, np.inf, -np.inf, 1e-45, -1e-45, 1e-38, -1.0, 1.0], dtype=np.float32)
    values = np.round(rng.standard_normal(size), 2).astype(np.float32)
    values[rng.integers(0, size, size // 4)] = rng.choice(special, size // 4)
    return values


@pytest.mark.parametrize("seed", range(5))
def test_ascending_order_sorts_float32_with_its_edge_values(seed):
    values = edge_floats(5000, seed)
    order = M._ascending_order(values)
    assert np.array_equal(np.sort(order), np.arange(len(values)))  # each position once
    assert np.array_equal(values[order], np.sort(values))  # ascending (-0.0 == 0.0)


@pytest.mark.parametrize("tol", [0.0, 1e-6, 0.015])
@pytest.mark.parametrize("seed", range(3))
def test_average_ranks_equal_those_of_an_argsort(seed, tol):
    values = np.nan_to_num(edge_floats(3600, seed), posinf=5.0, neginf=-5.0).reshape(60, 60)  # cosines: finite
    assert M.average_ranks(values, tol).tobytes() == reference_average_ranks(values, tol).tobytes()


def test_side_takes_consecutive_rows_of_a_c_ordered_matrix_without_a_copy():
    matrix = np.arange(40, dtype=np.float32).reshape(10, 4) + 1
    side = M._Side(matrix)
    for items, shared in ((np.arange(3, 7), True), (np.arange(10), True), (np.array([3, 5, 4, 6]), False)):
        vectors, inv = side.take(items)
        assert np.shares_memory(vectors, side.vectors) == shared
        assert np.array_equal(vectors, matrix[items]) and np.array_equal(inv, side.inv[items])
    columns = M._Side(np.asfortranarray(matrix))  # another layout: copied rows (C-ordered, as before)
    vectors, _ = columns.take(np.arange(3, 7))
    assert not np.shares_memory(vectors, columns.vectors) and np.array_equal(vectors, matrix[3:7])


def reference_membership(items: np.ndarray, sets: list[np.ndarray]) -> np.ndarray:
    member = np.zeros((len(items), len(sets)), dtype=bool)
    for b, chosen in enumerate(sets):
        member[np.searchsorted(items, chosen), b] = True
    return member


@pytest.mark.parametrize(
    "items",
    [np.array([0, 3, 4, 9, 12]), np.array([2, 2, 5, 7, 7]), np.array([5]), np.zeros(0, dtype=np.int64)],
    ids=["distinct", "repeated", "one", "none"],
)
def test_membership_by_position_table_equals_binary_search(items):
    rng = np.random.default_rng(len(items))
    sets = [rng.choice(items, size=min(3, len(items)), replace=False) for _ in range(4)] + [items[:0]]
    got = M._membership(items, sets)
    assert got.shape == (len(items), 5) and np.array_equal(got, reference_membership(items, sets))
