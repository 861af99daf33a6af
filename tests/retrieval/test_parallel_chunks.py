"""The metrics' chunks and seeds on worker threads (``metrics._Workers``) give the bits of the serial path."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from harness_tasks.retrieval import metrics as M


def tie_heavy(n_items: int = 40, seed: int = 5) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Small-integer vectors (many exactly equal cosines) and repeated rows (equal up to float noise)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(-1, 2, size=(n_items, 4)).astype(np.float32)
    tgt = rng.integers(-1, 2, size=(n_items, 4)).astype(np.float32)
    images = rng.integers(0, 2, size=(n_items, 5)).astype(np.float32)
    tgt[::7] = src[::7]
    images[1::5] = images[0]
    return src, tgt, images


def samples(n_items: int = 40, n: int = 15, seeds: int = 4) -> tuple[list[np.ndarray], list[np.ndarray]]:
    perms = [np.random.default_rng(s).permutation(n_items) for s in range(seeds)]
    return [p[:n] for p in perms], [p[n : 2 * n] for p in perms]


def all_metrics(rule: str, retrieval: str) -> list:
    """Every metric of the family and its per-query values on the tie-heavy case."""
    src, tgt, images = tie_heavy()
    sources, targets = samples()
    if retrieval == "cosine":
        results = M.xlr_and_backretrieval(src, tgt, images, sources, sources, targets, 3, rule)
    else:
        results = (
            M.xlr(src, tgt, sources, 3, rule, retrieval=retrieval, neighbours=4),
            M.backretrieval(src, tgt, images, sources, targets, 3, rule, retrieval=retrieval, neighbours=4),
        )
    out: list = []
    for result in results:
        out.append(result.metrics)
        for query in result.queries:
            out.append([None if a is None else a.tobytes() for a in vars(query).values()])
    values, moments = M.corr_with_moments(src, tgt, images, sources, targets, max_pairs=100)
    return [*out, values, [m.tobytes() for m in moments]]


def computed_with(monkeypatch, threads: int, rule: str, retrieval: str) -> tuple[list, set[int]]:
    """``all_metrics`` with ``threads`` workers and three rows per chunk; and the threads that ran the products."""
    ran_on: set[int] = set()
    product = M._Product.__call__

    def recorded(self, part):
        ran_on.add(threading.get_ident())
        return product(self, part)

    with monkeypatch.context() as patch:
        patch.setattr(M, "_blas_threads", lambda: threads)
        patch.setattr(M, "PARALLEL_MIN_SIMILARITIES", 0)  # small as they are, on the workers
        patch.setattr(M, "CHUNK_BYTES", 4 * 30 * 3)  # three rows of 30 columns per chunk
        patch.setattr(M._Product, "__call__", recorded)
        return all_metrics(rule, retrieval), ran_on


@pytest.mark.parametrize("retrieval", M.RETRIEVALS)
@pytest.mark.parametrize("rule", M.TIE_RULES)
def test_workers_give_the_bits_of_the_serial_path(monkeypatch, rule, retrieval):
    serial, serial_threads = computed_with(monkeypatch, 1, rule, retrieval)
    parallel, parallel_threads = computed_with(monkeypatch, 2, rule, retrieval)
    assert serial_threads == {threading.get_ident()}  # one thread: everything on the caller's
    assert threading.get_ident() not in parallel_threads  # two: every product on a worker
    assert parallel == serial


def test_workers_return_results_in_the_order_of_the_pieces(monkeypatch):
    # piece 0 waits until piece 1 has finished: the results still come back as 0, 1, 2
    monkeypatch.setattr(M, "_blas_threads", lambda: 2)
    second_done = threading.Event()

    def work(piece: int) -> int:
        if piece == 0:
            assert second_done.wait(timeout=60)
        if piece == 1:
            second_done.set()
        return piece * 10

    with M._Workers() as workers:
        assert list(workers.map(work, range(3), M.PARALLEL_MIN_SIMILARITIES)) == [0, 10, 20]


def blas_threads() -> int:
    return max(info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas")


def test_workers_run_blas_on_one_thread_and_restore_it(monkeypatch):
    monkeypatch.setattr(M, "_blas_threads", lambda: 2)
    before = blas_threads()
    with M._Workers() as workers:
        inside = list(workers.map(lambda _: blas_threads(), range(2), M.PARALLEL_MIN_SIMILARITIES))
        with M._Workers() as nested:  # opened inside (CSLS penalties): as many threads as the outer ones
            assert nested.threads == 2
            assert list(nested.map(lambda _: blas_threads(), range(2), M.PARALLEL_MIN_SIMILARITIES)) == [1, 1]
        assert blas_threads() == 1  # still the outer workers' limit
    assert inside == [1, 1]
    assert blas_threads() == before


def test_a_nested_start_limits_blas_when_the_outer_workers_have_not(monkeypatch):
    monkeypatch.setattr(M, "_blas_threads", lambda: 2)
    before = blas_threads()
    with M._Workers(), M._Workers() as nested:  # the outer ones started no thread (CSLS: penalties come first)
        assert list(nested.map(lambda _: blas_threads(), range(2), M.PARALLEL_MIN_SIMILARITIES)) == [1, 1]
    assert blas_threads() == before


def test_small_work_or_one_piece_runs_on_the_calling_thread(monkeypatch):
    monkeypatch.setattr(M, "_blas_threads", lambda: 2)
    caller = threading.get_ident()
    with M._Workers() as workers:
        small = set(workers.map(lambda _: threading.get_ident(), range(4), M.PARALLEL_MIN_SIMILARITIES - 1))
        single = set(workers.map(lambda _: threading.get_ident(), range(1), M.PARALLEL_MIN_SIMILARITIES))
        large = set(workers.map(lambda _: threading.get_ident(), range(4), M.PARALLEL_MIN_SIMILARITIES))
    assert small == single == {caller} and caller not in large
