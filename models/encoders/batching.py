"""Batched inference shared by model adapters: length-sorted batches, results in input order.

Sorting inputs by length before batching keeps padding (and wasted compute) small; the
results are written back at each input's own position, so callers never see the order.
``run_prefetched`` prepares the next batches (image decoding and preprocessing) in a worker
thread while the model computes the current one; PIL, NumPy and torch release the GIL in
their heavy parts, so the two overlap. ``map_batches`` computes batches in ``workers`` threads
at once (each batch whole in one thread: an ONNX Runtime session of one thread per call, which
releases the GIL): on small inputs that scales better than splitting every operation across threads.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

import numpy as np

Prepared = TypeVar("Prepared")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, which a container or ``taskset`` narrows), or
    ``OMP_NUM_THREADS`` when the user set it lower (torchrun's ranks, a shared machine)."""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else os.cpu_count() or 1
    asked = os.environ.get("OMP_NUM_THREADS", "")
    return max(1, min(cores, int(asked))) if asked.isdigit() and int(asked) > 0 else cores


def length_sorted_batches(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """Index batches of at most ``batch_size`` inputs of one length each, longest first (ties keep input order).

    A batch never mixes lengths, so nothing is padded: a padded batch sums the same values in
    another order (about 1e-7 apart in float32), and a near-tie in a ranking metric then flipped
    with the batch size (issue 29). Without padding an input's output does not depend on the batch
    size or on which inputs share its batch. Sorted data has few distinct lengths, so the number
    of batches grows little.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    values = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-values, kind="stable")
    runs = np.flatnonzero(np.diff(values[order])) + 1  # where the length changes along the sorted order
    return [
        group[start : start + batch_size]
        for group in np.split(order, runs)
        for start in range(0, len(group), batch_size)
    ]


def run_batches(
    count: int, batches: Sequence[np.ndarray], compute: Callable[[np.ndarray], Any], workers: int = 1
) -> np.ndarray:
    """Call ``compute(indices)`` per batch under ``torch.inference_mode()``, in ``workers`` threads at once;
    row i of the result is input i's.

    ``compute`` returns one row per index, as a NumPy array or a torch tensor.
    """
    done = map_batches(batches, compute, workers)
    return _collect(count, ((indices, partial(next, done)) for indices in batches))


Result = TypeVar("Result")


def map_batches(
    batches: Sequence[np.ndarray], compute: Callable[[np.ndarray], Result], workers: int = 1
) -> Iterator[Result]:
    """``compute(indices)`` of each batch, in order, each under ``torch.inference_mode()`` (it is per thread);
    with ``workers`` > 1 that many batches run at once in worker threads."""
    import torch

    def inferred(indices: np.ndarray) -> Result:
        with torch.inference_mode():
            return compute(indices)

    if workers <= 1 or len(batches) <= 1:
        yield from map(inferred, batches)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="batch") as pool:
        yield from pool.map(inferred, batches)


def run_prefetched(
    count: int,
    batches: Sequence[np.ndarray],
    prepare: Callable[[np.ndarray], Prepared],
    compute: Callable[[Prepared], Any],
    ahead: int = 2,
) -> np.ndarray:
    """Like ``run_batches``, with ``prepare(indices)`` run in a worker thread: while ``compute(prepared)``
    runs on one batch, the next ``ahead`` batches are prepared; row i of the result is input i's.

    An exception in ``prepare`` is raised when its batch is reached (after the earlier batches were computed).
    """
    if ahead < 1:
        raise ValueError(f"ahead must be at least 1, got {ahead}")
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="prepare") as pool:
        pending: deque[Future[Prepared]] = deque()
        upcoming = iter(batches)

        def steps() -> Iterable[tuple[np.ndarray, Callable[[], Any]]]:
            for indices in batches:
                while len(pending) <= ahead and (following := next(upcoming, None)) is not None:
                    pending.append(pool.submit(prepare, following))
                prepared = pending.popleft().result()
                yield indices, partial(compute, prepared)

        try:
            return _collect(count, steps())
        finally:
            for future in pending:
                future.cancel()


def _collect(count: int, steps: Iterable[tuple[np.ndarray, Callable[[], Any]]]) -> np.ndarray:
    """Run each step's computation under ``torch.inference_mode()`` and write its rows at its indices."""
    import torch

    out: np.ndarray | None = None
    with torch.inference_mode():
        for indices, step in steps:
            rows = step()
            rows = (
                rows.detach().float().cpu().numpy()
                if isinstance(rows, torch.Tensor)
                else np.asarray(rows, dtype=np.float32)
            )
            if out is None:
                out = np.empty((count, rows.shape[1]), dtype=np.float32)
            out[indices] = rows
    return out if out is not None else np.zeros((0, 0), dtype=np.float32)
