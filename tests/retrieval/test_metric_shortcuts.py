"""Faster paths of the retrieval metrics and tasks give the bits of the straightforward computation they replace."""

from __future__ import annotations

import numpy as np
import pytest

from harness_tasks.retrieval import metrics as M
from harness_tasks.retrieval.tasks import rows_of


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


def test_rows_of_all_items_in_order_is_the_matrix_itself_else_a_copy():
    matrix = np.arange(12.0).reshape(4, 3)
    assert rows_of(matrix, np.arange(4)) is matrix
    for items in (np.array([0, 1, 3, 2]), np.array([1, 2]), np.array([0, 1, 2, 2])):  # reordered, fewer, repeated
        picked = rows_of(matrix, items)
        assert picked is not matrix and np.array_equal(picked, matrix[items])
