"""``bootstrap.seed_sums``: the per-seed moment sums of resamples, adding only the seeds each unit has, are
``unit_sums``' bits (``values[index].sum(axis=1)`` added position after position)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.results.bootstrap import Units, _moments, interval, seed_sums, unit_sums


def test_by_hand():
    values = np.zeros((3, 2, 6))
    values[0, 0] = [1, 2, 3, 4, 5, 6]
    values[1, 1] = [10, 20, 30, 40, 50, 60]
    values[2, 0], values[2, 1] = [100] * 6, [0.5] * 6
    index = np.array([[0, 0, 2], [1, 2, 1]])
    expected = np.zeros((2, 2, 6))
    expected[0, 0] = [102, 104, 106, 108, 110, 112]  # unit 0 twice, then unit 2
    expected[0, 1] = [0.5] * 6
    expected[1, 0] = [100] * 6
    expected[1, 1] = [20.5, 40.5, 60.5, 80.5, 100.5, 120.5]
    assert seed_sums(values, index).tobytes() == expected.tobytes()


def test_the_order_of_the_resample_is_kept():
    values = np.zeros((3, 1, 6))
    values[:, 0, 1] = [1e16, 1.0, -1e16]
    # 1e16 + 1.0 + -1e16 = 0.0 in this order; 1.0 in the order -1e16, 1e16, 1.0
    sums = seed_sums(values, np.array([[0, 1, 2], [2, 0, 1]]))
    assert sums[:, 0, 1].tolist() == [0.0, 1.0]


@pytest.mark.parametrize("seed", range(6))
def test_same_bits_as_unit_sums(seed):
    rng = np.random.default_rng(seed)
    units, seeds = int(rng.integers(2, 80)), int(rng.integers(1, 9))
    values = np.zeros((units, seeds, 6))
    has = rng.random((units, seeds)) < rng.random()
    values[has] = rng.standard_normal((has.sum(), 6)) * 10.0 ** rng.integers(-5, 17, (has.sum(), 6))
    values[has & (rng.random((units, seeds)) < 0.2)] = 0.0  # a unit with a seed whose sums are all zero
    values[rng.random((units, seeds, 6)) < 0.05] = -0.0
    index = rng.integers(0, units, (int(rng.integers(1, 60)), units))
    assert seed_sums(values, index).tobytes() == unit_sums(values, index).tobytes()


def test_no_entries_and_other_shapes():
    assert seed_sums(np.zeros((4, 3, 6)), np.array([[0, 1, 2, 3]])).tobytes() == np.zeros((1, 3, 6)).tobytes()
    flat = np.arange(12.0).reshape(4, 3)  # not per-seed sums: unit_sums
    assert seed_sums(flat, np.array([[3, 3, 0, 1]])).tolist() == [[21.0, 25.0, 29.0]]


def test_moments_intervals_unchanged():
    rng = np.random.default_rng(9)
    values = np.zeros((200, 5, 6))
    for unit, seed in zip(range(200), rng.integers(0, 5, 200)):
        x, y = rng.random(2)
        values[unit, seed] = [1, x, y, x * x, y * y, x * y]
    found = interval(Units("moments", values, np.zeros(200)), 300, 0, 0.95)
    index = np.random.default_rng(0).integers(0, 200, size=(300, 200))  # the resamples interval draws (one chunk)
    resampled = _moments(unit_sums(values, index))
    low, high = np.quantile(resampled[np.isfinite(resampled)], [0.025, 0.975])
    assert (found.low, found.high) == (float(low), float(high))


def test_moments_take_seed_sums_only_where_most_entries_are_absent(monkeypatch):
    import harness.results.bootstrap as bootstrap

    called = []
    monkeypatch.setattr(bootstrap, "seed_sums", lambda v, i: called.append("seed") or unit_sums(v, i))
    dense = np.ones((10, 5, 6))  # every unit in every seed
    sparse = np.zeros((10, 5, 6))
    sparse[np.arange(10), np.arange(10) % 5] = 1.0  # one seed each: 10 of 50 entries, the 0.2 share
    index = np.zeros((2, 10), dtype=int)
    Units("moments", dense, np.zeros(10)).statistic(index)
    assert called == []
    Units("moments", sparse, np.zeros(10)).statistic(index)
    assert called == ["seed"]
