"""run_prefetched and run_batches with workers: the next batches are prepared while the current one is computed, rows land in input order,
and a failure in preparation surfaces at its batch after the earlier batches were computed."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.errors import HarnessError
from harness_models.encoders.batching import length_sorted_batches, run_batches, run_prefetched


def test_rows_come_back_in_input_order():
    values = [5.0, 1.0, 4.0, 2.0, 3.0]
    batches = [np.array([4, 0]), np.array([2]), np.array([1, 3])]
    out = run_prefetched(
        5, batches, lambda idx: np.array([[values[i], 10 * values[i]] for i in idx]), lambda rows: rows
    )
    np.testing.assert_array_equal(out, [[5, 50], [1, 10], [4, 40], [2, 20], [3, 30]])
    assert out.dtype == np.float32


def test_no_batches_give_an_empty_array():
    out = run_prefetched(0, [], lambda idx: idx, lambda rows: rows)
    assert out.shape == (0, 0)


def test_the_next_batch_is_prepared_while_the_current_one_is_computed():
    second_prepared = threading.Event()
    log = []

    def prepare(indices):
        log.append(("prepare", int(indices[0])))
        if indices[0] == 1:
            second_prepared.set()
        return indices

    def compute(indices):
        if indices[0] == 0:  # without prefetching, batch 1 is prepared only after this returns: the wait fails
            assert second_prepared.wait(timeout=10), "batch 1 was not prepared during batch 0's computation"
        log.append(("compute", int(indices[0])))
        return np.asarray(indices, dtype=np.float32)[:, None]

    out = run_prefetched(3, [np.array([0]), np.array([1]), np.array([2])], prepare, compute, ahead=1)
    np.testing.assert_array_equal(out[:, 0], [0, 1, 2])
    assert log.index(("prepare", 1)) < log.index(("compute", 0))


def test_preparation_runs_at_most_ahead_batches_in_advance():
    computed, started = [], []

    def prepare(indices):
        started.append((int(indices[0]), len(computed)))
        return indices

    batches = [np.array([i]) for i in range(6)]
    run_prefetched(6, batches, prepare, lambda idx: computed.append(int(idx[0])) or np.zeros((1, 1)), ahead=2)
    # two ahead of the one computed: batch b (b >= 3) is submitted right after batch b - 3 was computed
    assert all(done >= batch - 2 for batch, done in started), started
    assert computed == [0, 1, 2, 3, 4, 5]


def test_a_failing_preparation_surfaces_at_its_batch():
    computed = []

    def prepare(indices):
        if 4 in indices:
            raise HarnessError("images row 4: cannot read the image file")
        return indices

    with pytest.raises(HarnessError, match="row 4"):
        run_prefetched(
            6,
            [np.array([0, 1]), np.array([2, 3]), np.array([4, 5])],
            prepare,
            lambda idx: computed.append(list(idx)) or np.zeros((len(idx), 1)),
        )
    assert computed == [[0, 1], [2, 3]]


def test_ahead_must_be_positive():
    with pytest.raises(ValueError, match="ahead must be at least 1"):
        run_prefetched(1, [np.array([0])], lambda idx: idx, lambda rows: rows, ahead=0)


@settings(max_examples=30, deadline=None)
@given(lengths=st.lists(st.integers(0, 9), max_size=40), batch_size=st.integers(1, 7), ahead=st.integers(1, 3))
def test_prefetched_equals_plain_batches(lengths, batch_size, ahead):
    batches = length_sorted_batches(lengths, batch_size)
    rows = lambda idx: np.array([[lengths[i], i] for i in idx], dtype=np.float32)  # noqa: E731
    expected = run_batches(len(lengths), batches, rows)
    np.testing.assert_array_equal(run_prefetched(len(lengths), batches, rows, lambda r: r, ahead=ahead), expected)
    if lengths:
        np.testing.assert_array_equal(expected, np.column_stack([lengths, np.arange(len(lengths))]))


def test_batches_in_worker_threads_come_back_in_order_under_inference_mode():
    import torch

    seen: dict[int, tuple[str, bool]] = {}
    gate = threading.Barrier(2, timeout=10)  # two batches must run at the same time to pass it

    def compute(idx):
        seen[int(idx[0])] = (threading.current_thread().name, torch.is_inference_mode_enabled())
        if int(idx[0]) < 2:
            gate.wait()
        return np.array([[float(i) * 10] for i in idx], dtype=np.float32)

    batches = [np.array([0, 4]), np.array([1]), np.array([2, 3])]
    out = run_batches(5, batches, compute, workers=2)
    np.testing.assert_array_equal(out[:, 0], [0.0, 10.0, 20.0, 30.0, 40.0])
    assert all(inference for _, inference in seen.values())
    assert all(name.startswith("batch") for name, _ in seen.values())
    alone = run_batches(5, batches[2:], lambda idx: np.ones((len(idx), 1)), workers=2)  # one batch: no thread
    np.testing.assert_array_equal(alone[2:4, 0], [1.0, 1.0])
