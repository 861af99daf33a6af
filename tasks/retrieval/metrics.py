"""The metrics of the image-pivoted family, computed in row chunks with bounded memory.

Inputs are embedding matrices whose rows are items (``src``: source-language text vectors,
``tgt``: target-language text vectors, ``images``: image vectors, row i of each belonging to
item i) and, per seed, arrays of item indices (the samples). Similarities are cosines; a zero
vector has cosine 0 with everything.

Ties. Two similarities within ``tol`` of each other are tied. Ties are never resolved in the
model's favour: under the default rule ``expected``, a candidate with ``better`` strictly
better and ``tied`` other tied candidates is in the top k with probability
``clip((k - better) / (tied + 1), 0, 1)``, its reciprocal rank is the mean of 1/r over the
ranks it may take, and its rank is ``better + 1 + tied / 2`` (the expected values under
uniformly random tie-breaking); an argmax shared by several candidates averages over them.
``optimistic`` and ``pessimistic`` resolve every tie for or against the model (for analysis).

Work is shared across seeds: when the seeds' samples overlap enough (the union of the
samples, squared, is smaller than the sum of the samples' squares) the similarities of the
union are computed once, in chunks of rows, and each seed reads its own rows and columns from
them (per-seed counts come from one matrix product with the seeds' membership masks); otherwise
each seed is computed on its own sample. Either way a chunk of rows times all columns is the
largest array held, one per thread (``_Workers``: as many chunks at a time as BLAS has threads,
each product on one of them), so memory grows linearly, not quadratically, with the sample size.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import TypeVar

import numpy as np
from threadpoolctl import ThreadpoolController

TIE_TOLERANCE = 1e-6
TIE_RULES = ("expected", "optimistic", "pessimistic")
RETRIEVALS = ("cosine", "csls")
CSLS_NEIGHBOURS = 10  # K of CSLS (Conneau, Lample, Ranzato, Denoyer and Jégou, ICLR 2018, sect. 2.3)
CHUNK_BYTES = 32 << 20  # size of one chunk of similarities (rows x all columns, float32)
SAMPLE_STRIDE = 16  # _candidates: every 16th column of a long row bounds its depth-th largest value
SAMPLE_MIN_COLUMNS = 1024  # shorter rows are partitioned whole
NORM_ROWS = 1024  # inverse_norms: rows at a time
PARALLEL_MIN_SIMILARITIES = 1 << 22  # _Workers: less work runs on the calling thread


def hit_probability(better: np.ndarray, tied: np.ndarray, k: int, rule: str = "expected") -> np.ndarray:
    """Probability of being within the top ``k`` with ``better`` strictly better and ``tied`` tied others."""
    better, tied = np.asarray(better, dtype=np.float64), np.asarray(tied, dtype=np.float64)
    if rule == "expected":
        return np.clip((k - better) / (tied + 1), 0.0, 1.0)
    if rule == "optimistic":
        return (better < k).astype(np.float64)
    if rule == "pessimistic":
        return (better + tied < k).astype(np.float64)
    raise ValueError(f"unknown tie rule {rule!r} (one of {', '.join(TIE_RULES)})")


def reciprocal_rank(better: np.ndarray, tied: np.ndarray, rule: str = "expected") -> np.ndarray:
    """1/rank under the tie rule (``expected``: the mean of 1/r over ranks better+1 .. better+tied+1)."""
    better, tied = np.asarray(better, dtype=np.float64), np.asarray(tied, dtype=np.float64)
    if rule == "expected":
        return _mean_reciprocal(better, tied)
    return 1.0 / (better + 1 + (tied if rule == "pessimistic" else 0))


def _mean_reciprocal(better: np.ndarray, tied: np.ndarray) -> np.ndarray:
    """The mean of 1/r over r = better+1 .. better+tied+1 (whole counts): 1/(better+1) where nothing is tied,
    else a difference of harmonic numbers (H(better+tied+1) - H(better), partial sums of 1/k, relative error
    about 1e-13 at a million candidates), divided by tied+1."""
    mean = 1.0 / (better + 1)
    ties = np.flatnonzero(tied > 0)
    if len(ties):
        b, t = better[ties].astype(np.int64), tied[ties].astype(np.int64)
        harmonic = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, (b + t).max() + 2))))
        mean[ties] = (harmonic[b + t + 1] - harmonic[b]) / (t + 1)
    return mean


def rank(better: np.ndarray, tied: np.ndarray, rule: str = "expected") -> np.ndarray:
    """The 1-based rank under the tie rule (``expected``: better + 1 + tied / 2)."""
    better, tied = np.asarray(better, dtype=np.float64), np.asarray(tied, dtype=np.float64)
    share = {"expected": 0.5, "optimistic": 0.0, "pessimistic": 1.0}[rule]
    return better + 1 + share * tied


@dataclass
class PerQuery:
    """One seed's per-query values: the query items and what each scored."""

    items: np.ndarray
    hit: np.ndarray
    rank: np.ndarray | None = None
    match: np.ndarray | None = None  # backretrieval: the retrieved target (first of a tied argmax)
    reciprocal: np.ndarray | None = None  # xlr: 1/rank under the tie rule (the per-query MRR term)


@dataclass
class SeedResults:
    """Metrics per seed (in the order of the samples) and the per-query values behind them."""

    metrics: list[dict[str, float | None]]
    queries: list[PerQuery]


@dataclass(frozen=True)
class Block:
    """Seeds computed together: the union of their row and column items and who belongs where."""

    seeds: tuple[int, ...]
    rows: np.ndarray  # sorted item indices
    cols: np.ndarray
    row_member: np.ndarray  # bool (len(rows), len(seeds))
    col_member: np.ndarray  # bool (len(cols), len(seeds))


def plan_blocks(row_sets: Sequence[np.ndarray], col_sets: Sequence[np.ndarray]) -> list[Block]:
    """All seeds in one block when the union of the samples is cheaper than the seeds one by one."""
    rows_all, cols_all = _union(row_sets), _union(col_sets)
    if len(rows_all) * len(cols_all) <= _separate_size(row_sets, col_sets):
        groups = [tuple(range(len(row_sets)))]
    else:
        groups = [(i,) for i in range(len(row_sets))]
    blocks = []
    for group in groups:
        rows = rows_all if len(groups) == 1 else np.sort(row_sets[group[0]])
        cols = cols_all if len(groups) == 1 else np.sort(col_sets[group[0]])
        row_member = _membership(rows, [row_sets[seed] for seed in group])
        col_member = _membership(cols, [col_sets[seed] for seed in group])
        blocks.append(Block(group, rows, cols, row_member, col_member))
    return blocks


def _union(sets: Sequence[np.ndarray]) -> np.ndarray:
    return np.unique(np.concatenate(sets)) if sets else np.zeros(0, dtype=np.int64)


def _separate_size(row_sets: Sequence[np.ndarray], col_sets: Sequence[np.ndarray]) -> int:
    """The similarities of the seeds computed one by one."""
    return sum(len(r) * len(c) for r, c in zip(row_sets, col_sets))


def _membership(items: np.ndarray, sets: Sequence[np.ndarray]) -> np.ndarray:
    """bool (len(items), len(sets)): which of the sorted ``items`` each set holds (each set's items are among
    them). Distinct non-negative items are found through a table of positions, others by binary search."""
    member = np.zeros((len(items), len(sets)), dtype=bool)
    distinct = len(items) > 0 and items[0] >= 0 and bool(np.all(items[1:] > items[:-1]))
    if distinct:
        position = np.zeros(int(items[-1]) + 1, dtype=np.intp)
        position[items] = np.arange(len(items))
    for b, chosen in enumerate(sets):
        member[position[chosen] if distinct else np.searchsorted(items, chosen), b] = True
    return member


def inverse_norms(vectors: np.ndarray) -> np.ndarray:
    """1 / the L2 norm of each row (0 for a zero row, whose cosines are then 0)."""
    norms = _row_norms(np.asarray(vectors))
    return np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0).astype(np.float32)


def _row_norms(vectors: np.ndarray) -> np.ndarray:
    """``np.linalg.norm(vectors, axis=1)``, for a C-ordered matrix ``NORM_ROWS`` rows at a time: each row's norm is
    the same sum over that row's values, without the squares of the whole matrix held at once (their memory
    took most of the time). Other layouts may be summed in another order by blocks: computed at once."""
    if not vectors.flags.c_contiguous or len(vectors) <= NORM_ROWS:
        return np.linalg.norm(vectors, axis=1)
    return np.concatenate(
        [np.linalg.norm(vectors[i : i + NORM_ROWS], axis=1) for i in range(0, len(vectors), NORM_ROWS)]
    )


class _Side:
    """One side of a similarity computation: vectors, their inverse norms and, for CSLS, each item's
    mean similarity to its K nearest neighbours on the other side (``penalty``)."""

    def __init__(self, vectors: np.ndarray):
        self.vectors = np.asarray(vectors, dtype=np.float32)
        self.inv = inverse_norms(self.vectors)
        self.penalty: np.ndarray | None = None

    def penalized(self, penalty: np.ndarray) -> _Side:
        """The same vectors with a CSLS penalty per item (no copy of the vectors)."""
        side = object.__new__(_Side)
        side.vectors, side.inv, side.penalty = self.vectors, self.inv, penalty.astype(np.float32)
        return side

    def take(self, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The vectors and inverse norms of ``items`` (``rows_of``)."""
        return rows_of(self.vectors, items), rows_of(self.inv, items)


def rows_of(matrix: np.ndarray, items: np.ndarray) -> np.ndarray:
    """``matrix[items]``, without a copy where that keeps the layout: the matrix itself when ``items`` are all its
    rows in order, a view when they are consecutive rows of a C-ordered one (a chunk: the same products); else copied.
    """
    if len(items) == len(matrix) and np.array_equal(items, np.arange(len(matrix))):
        return matrix
    if len(items) and matrix.flags.c_contiguous and np.array_equal(items, items[0] + np.arange(len(items))):
        return matrix[int(items[0]) : int(items[0]) + len(items)]
    return matrix[items]


def _chunk_parts(block: Block) -> list[slice]:
    """The block's rows in chunks of about ``CHUNK_BYTES`` of similarities (rows x all block columns)."""
    step = max(1, CHUNK_BYTES // (4 * max(1, len(block.cols))))
    return [slice(start, min(start + step, len(block.rows))) for start in range(0, len(block.rows), step)]


Piece = TypeVar("Piece")
Result = TypeVar("Result")


class _Product:
    """The similarities of a chunk of a block's rows with all its columns: cosines, or with penalties
    on both sides CSLS(x, y) = 2 cos(x, y) - r(x) - r(y)."""

    def __init__(self, block: Block, row_side: _Side, col_side: _Side):
        self.block, self.row_side, self.row_penalty = block, row_side, row_side.penalty
        self.cols, self.cols_inv = col_side.take(block.cols)
        self.col_penalty = None if col_side.penalty is None else col_side.penalty[block.cols]

    def __call__(self, part: slice) -> np.ndarray:
        """The similarities of the block rows ``part`` (a chunk of ``_chunk_parts``)."""
        rows, rows_inv = self.row_side.take(self.block.rows[part])
        sims = rows @ self.cols.T
        sims *= rows_inv[:, None]
        sims *= self.cols_inv[None, :]
        if self.row_penalty is not None and self.col_penalty is not None:
            sims *= 2
            sims -= self.row_penalty[self.block.rows[part]][:, None]
            sims -= self.col_penalty[None, :]
        return sims

    def apply(self, function: Callable[[Block, slice, np.ndarray], Result], part: slice) -> Result:
        """``function`` of the block, the rows ``part`` and their similarities."""
        return function(self.block, part, self(part))


def _blas_threads() -> int:
    """How many threads BLAS uses for a product (1 when it cannot be told)."""
    return max((info["num_threads"] for info in ThreadpoolController().select(user_api="blas").info()), default=1)


class _Workers:
    """Threads for independent pieces of work (chunks, seeds), as many as BLAS would use for a product;
    while they run, every BLAS call runs on one thread, so that the products of two pieces run side by side
    with the work between them instead of one product on all cores with one core idle in between.

    A piece's product gives the same bits on one thread as on several (BLAS splits a product by rows
    and columns of the result, each entry summed by one thread in the same order), and results come
    back in the order of the pieces, so every number is what the pieces one after the other give.
    Work of fewer than ``PARALLEL_MIN_SIMILARITIES`` similarities, or of one piece, runs on the calling
    thread (starting threads would cost more). Workers opened while others are (CSLS penalties between
    blocks) take as many threads as the outer ones.
    """

    opened: list[int] = []  # the thread counts of the open workers, innermost last
    blas_limited = False  # whether open workers have limited BLAS to one thread

    def __init__(self) -> None:
        self.threads = self.opened[-1] if self.opened else _blas_threads()
        self.pool: ThreadPoolExecutor | None = None
        self.limit = None

    def __enter__(self) -> _Workers:
        self.opened.append(self.threads)
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.opened.pop()
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)  # after a failure, pieces not yet started are not run
        if self.limit is not None:
            self.limit.restore_original_limits()
            _Workers.blas_limited = False

    def _started(self) -> ThreadPoolExecutor:
        if self.pool is None:
            if not _Workers.blas_limited:  # the first to start limits BLAS, and restores it on exit
                self.limit = ThreadpoolController().select(user_api="blas").limit(limits=1)
                _Workers.blas_limited = True
            self.pool = ThreadPoolExecutor(self.threads)
        return self.pool

    def map(self, function: Callable[[Piece], Result], pieces: Sequence[Piece], similarities: int) -> Iterator[Result]:
        """``function`` of each piece, in the order of ``pieces`` (``similarities``: how many they compute together);
        at most twice as many pieces started as threads."""
        if self.threads < 2 or len(pieces) < 2 or similarities < PARALLEL_MIN_SIMILARITIES:
            yield from map(function, pieces)
            return
        pool = self._started()
        pending: deque[Future[Result]] = deque()
        for piece in pieces:
            pending.append(pool.submit(function, piece))
            if len(pending) > 2 * self.threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _chunk_map(
    workers: _Workers, blocks: Iterable[Scored], function: Callable[[Block, slice, np.ndarray], Result]
) -> Iterator[Result]:
    """``function(block, rows, similarities)`` of every chunk of every block (``_chunk_parts``), the chunks
    of a block on ``workers``; results in chunk order."""
    for block, row_side, col_side in blocks:
        product = _Product(block, row_side, col_side)
        similarities = len(block.rows) * len(block.cols)
        yield from workers.map(partial(product.apply, function), _chunk_parts(block), similarities)


Scored = tuple[Block, _Side, _Side]


def scored_blocks(
    row_side: _Side,
    col_side: _Side,
    row_sets: Sequence[np.ndarray],
    col_sets: Sequence[np.ndarray],
    retrieval: str = "cosine",
    neighbours: int = CSLS_NEIGHBOURS,
) -> Iterator[Scored]:
    """The blocks to compute and the sides to score them with.

    ``cosine``: seeds share blocks (``plan_blocks``). ``csls`` (Conneau, Lample, Ranzato, Denoyer and
    Jégou, ICLR 2018, sect. 2.3): per seed, CSLS(x, y) = 2 cos(x, y) - r_T(x) - r_S(y), where r_T(x) is the mean cosine of row
    item x with its ``neighbours`` nearest columns of the seed and r_S(y) that of column item y
    with its nearest rows of the seed; the penalties depend on the seed's sample, so each seed is
    its own block.
    """
    if retrieval == "cosine":
        yield from ((block, row_side, col_side) for block in plan_blocks(row_sets, col_sets))
        return
    if retrieval != "csls":
        raise ValueError(f"unknown retrieval {retrieval!r} (one of {', '.join(RETRIEVALS)})")
    for seed, (rows, cols) in enumerate(zip(row_sets, col_sets)):
        (block,) = plan_blocks([rows], [cols])
        row_penalty = mean_top_similarity(row_side, col_side, block, neighbours, len(row_side.vectors))
        col_penalty = mean_top_similarity(
            col_side,
            row_side,
            Block((0,), block.cols, block.rows, block.col_member, block.row_member),
            neighbours,
            len(col_side.vectors),
        )
        yield replace(block, seeds=(seed,)), row_side.penalized(row_penalty), col_side.penalized(col_penalty)


def mean_top_similarity(row_side: _Side, col_side: _Side, block: Block, neighbours: int, size: int) -> np.ndarray:
    """Per row item of a one-seed block, the mean cosine with its ``neighbours`` most similar columns
    (all of them when there are fewer), computed chunk by chunk; an array over all ``size`` items (0 elsewhere)."""
    if neighbours < 1:
        raise ValueError(f"the CSLS neighbourhood must be at least 1, got {neighbours}")
    out = np.zeros(size, dtype=np.float64)
    depth = min(neighbours, len(block.cols))

    def top_means(block: Block, part: slice, sims: np.ndarray) -> tuple[slice, np.ndarray]:
        top = np.partition(sims, len(block.cols) - depth, axis=1)[:, len(block.cols) - depth :]
        return part, top.astype(np.float64).sum(axis=1) / depth

    if depth:
        with _Workers() as workers:
            for part, means in _chunk_map(workers, [(block, row_side, col_side)], top_means):
                out[block.rows[part]] = means
    return out


Candidates = tuple[np.ndarray, np.ndarray, np.ndarray]  # padded columns, their values, per-row floor


def _candidates(sims: np.ndarray, depth: int) -> Candidates:
    """Per row, every column whose value is at least the row's ``depth``-th largest.

    Returns padded (column, value) arrays sorted by value, descending (padding: column -1,
    value -inf), and the per-row floor (the ``depth``-th largest value). The floor is found
    among the entries at or above a lower bound (``_lower_bounds``); rows where the bound
    leaves fewer than ``depth`` entries are partitioned whole.
    """
    n_rows, n_cols = sims.shape
    depth = min(depth, n_cols)
    if not n_rows:
        return np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0), dtype=np.float32), np.zeros(0, dtype=sims.dtype)
    bound = _lower_bounds(sims, depth)
    flat = np.flatnonzero(sims >= bound[:, None])
    rows, cols = np.divmod(flat, n_cols)
    values = sims.ravel()[flat]
    short = np.flatnonzero(np.bincount(rows, minlength=n_rows) < depth)
    if len(short):
        exact = np.partition(sims[short], n_cols - depth, axis=1)[:, n_cols - depth]
        redo_rows, redo_cols = np.nonzero(sims[short] >= exact[:, None])
        keep = ~np.isin(rows, short)
        rows = np.concatenate([rows[keep], short[redo_rows]])
        cols = np.concatenate([cols[keep], redo_cols])
        values = np.concatenate([values[keep], sims[short[redo_rows], redo_cols]])
        order = np.argsort(rows, kind="stable")
        rows, cols, values = rows[order], cols[order], values[order]
    idx, val = _padded(rows, cols, values, n_rows)
    floor = np.partition(val, val.shape[1] - depth, axis=1)[:, val.shape[1] - depth]
    keep = values >= floor[rows]
    idx, val = _padded(rows[keep], cols[keep], values[keep], n_rows)
    order = np.argsort(-val, axis=1, kind="stable")
    return np.take_along_axis(idx, order, axis=1), np.take_along_axis(val, order, axis=1), floor


def _lower_bounds(sims: np.ndarray, depth: int) -> np.ndarray:
    """Per row, a value at or below its ``depth``-th largest (almost always): for rows of at least
    ``SAMPLE_MIN_COLUMNS`` the j-th largest of every ``SAMPLE_STRIDE``-th column, j about twice
    depth / stride, which about 2 x depth values of the row exceed (a partition of 1/stride of
    the row); shorter rows get their exact ``depth``-th largest."""
    n_cols = sims.shape[1]
    if n_cols < SAMPLE_MIN_COLUMNS or not depth:
        return np.partition(sims, n_cols - depth, axis=1)[:, n_cols - depth]
    sample = sims[:, ::SAMPLE_STRIDE]
    j = min(sample.shape[1], 2 * math.ceil(depth / SAMPLE_STRIDE) + 4)
    return np.partition(sample, sample.shape[1] - j, axis=1)[:, sample.shape[1] - j]


def _padded(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat (row, column, value) entries ordered by row as (n_rows, width) arrays, padded with column
    -1 and value -inf."""
    counts = np.bincount(rows, minlength=n_rows)
    position = np.arange(len(rows)) - (np.cumsum(counts) - counts)[rows]
    width = int(counts.max()) if n_rows else 0
    idx = np.full((n_rows, width), -1, dtype=np.int64)
    val = np.full((n_rows, width), -np.inf, dtype=np.float32)
    idx[rows, position] = cols
    val[rows, position] = values
    return idx, val


def _member_lists(
    sims: np.ndarray,
    lines: np.ndarray,
    cand: Candidates,
    member: np.ndarray,
    depth: int,
    margin: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row ``sims[lines]`` (``cand``: its candidates), the member columns whose value is at least
    (the depth-th largest member value - margin).

    With fewer than ``depth`` members, all of them. Returns flat (row, column, value) arrays,
    rows numbered 0 .. len(lines) - 1, ordered by row, then value descending. Rows whose
    candidates cannot vouch for the whole list (too few members among them, or the cut below
    their floor) are redone from the full row (read in place: ``sims`` is not copied).
    """
    idx, val, floor = cand
    n_members = int(member.sum())
    depth = min(depth, n_members)
    if depth == 0 or not len(idx):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
    in_member = (idx >= 0) & member[np.maximum(idx, 0)]
    count = in_member.sum(axis=1)
    have = count >= depth
    # the depth-th member of each row that has that many (candidates are ordered by value, descending)
    depth_th = in_member & (np.cumsum(in_member, axis=1) == depth)
    cut = np.full(len(idx), np.inf)
    cut[have] = val[depth_th].astype(np.float64) - margin
    complete = (count == n_members) | (have & (cut >= floor))
    keep = in_member & (val >= cut[:, None]) & complete[:, None]
    out_rows, positions = np.nonzero(keep)
    out_cols, out_vals = idx[out_rows, positions], val[out_rows, positions].astype(np.float64)
    missing = np.flatnonzero(~complete)
    if len(missing):
        member_cols = np.flatnonzero(member)
        extra = [_full_row_list(sims[lines[r]], member_cols, depth, margin) for r in missing]
        out_rows = np.concatenate([out_rows, *(np.full(len(c), r) for r, (c, _) in zip(missing, extra))])
        out_cols = np.concatenate([out_cols, *(c for c, _ in extra)])
        out_vals = np.concatenate([out_vals, *(v for _, v in extra)])
        order = np.lexsort((-out_vals, out_rows))
        out_rows, out_cols, out_vals = out_rows[order], out_cols[order], out_vals[order]
    return out_rows, out_cols, out_vals


def _full_row_list(
    row: np.ndarray, member_cols: np.ndarray, depth: int, margin: float
) -> tuple[np.ndarray, np.ndarray]:
    values = row[member_cols].astype(np.float64)
    order = np.argsort(-values, kind="stable")
    values, cols = values[order], member_cols[order]
    keep = values >= values[depth - 1] - margin if depth > 0 else np.zeros(len(values), dtype=bool)
    return cols[keep], values[keep]


def _tie_counts(rows: np.ndarray, values: np.ndarray, tol: float) -> tuple[np.ndarray, np.ndarray]:
    """For flat (row, value) lists ordered by row then value descending: per entry, the number
    of same-row entries strictly better (> value + tol) and tied (within tol, itself excluded).

    Rows and negated values are combined into complex keys, which NumPy orders lexicographically
    (real part, then imaginary part), so ``searchsorted`` counts within rows, comparing exactly.
    """
    keys = _complex(rows, -values)
    better_end = np.searchsorted(keys, _complex(rows, -(values + tol)), side="left")
    within_end = np.searchsorted(keys, _complex(rows, -(values - tol)), side="right")
    row_start = np.searchsorted(rows, rows, side="left")
    return better_end - row_start, within_end - better_end - 1


def _complex(real: np.ndarray, imag: np.ndarray) -> np.ndarray:
    out = np.empty(len(real), dtype=np.complex128)
    out.real, out.imag = real, imag
    return out


def _aggregate_ties(rows: np.ndarray, values: np.ndarray, n_rows: int, rule: str) -> np.ndarray:
    """Per row, the mean (expected), max (optimistic) or min (pessimistic) of its entries."""
    starts = np.searchsorted(rows, np.arange(n_rows))
    if rule == "expected":
        return np.add.reduceat(values, starts) / np.bincount(rows, minlength=n_rows)
    return (np.maximum if rule == "optimistic" else np.minimum).reduceat(values, starts)


def _check(rule: str, k: int, tol: float) -> None:
    if rule not in TIE_RULES:
        raise ValueError(f"unknown tie rule {rule!r} (one of {', '.join(TIE_RULES)})")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if tol < 0:
        raise ValueError(f"tol must be non-negative, got {tol}")


def _check_disjoint(sources: Sequence[np.ndarray], targets: Sequence[np.ndarray]) -> None:
    for seed, (q, t) in enumerate(zip(sources, targets)):
        if np.intersect1d(q, t).size:
            raise ValueError(f"seed {seed}: sources and targets share items; backretrieval needs disjoint samples")


class _XlrTally:
    """xlr's per-seed accumulators, filled chunk by chunk: per query, how many of the sample's targets
    are strictly better than and tied with its own target; per target, its k-occurrences."""

    def __init__(self, samples: Sequence[np.ndarray], size: int, k: int, rule: str, tol: float):
        self.rows = self.cols = samples
        self.k, self.rule, self.tol = k, rule, tol
        self.better = [np.zeros(len(s)) for s in samples]
        self.tied = [np.zeros(len(s)) for s in samples]
        self.counts = [np.zeros(size) for _ in samples]
        self.order = [np.argsort(s, kind="stable") for s in samples]

    def add_list(self, seed: int, items: np.ndarray, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        """One seed's top lists of some query rows (``_chunk_lists``)."""
        self.counts[seed] += occurrences(rows, cols, values, self.k, self.rule, self.tol, len(self.counts[seed]))

    def add_chunk(
        self, block: Block, part: slice, sims: np.ndarray, seeds: list[tuple[int, int]], cand: Candidates
    ) -> None:
        """The own-target counts of a chunk's rows; ``seeds``: (position in ``block.seeds``, own seed);
        ``cand``: the chunk's ``_candidates``.

        A row whose own target is more than ``tol`` above its candidate floor has every column that
        counts (strictly better, or tied within ``tol``) among its candidates, and is counted there;
        the other rows compare their whole row.
        """
        if not seeds:
            return
        positions = [b for b, _ in seeds]
        row_member = block.row_member[part][:, positions]
        mine = np.flatnonzero(row_member.any(axis=1))
        if not len(mine):
            return
        items = block.rows[part][mine]
        own = sims[mine, np.searchsorted(block.cols, items)].astype(np.float64)
        member = block.col_member[:, positions]
        above, within = np.zeros((len(mine), len(positions))), np.zeros((len(mine), len(positions)))
        listed = own - self.tol > cand[2][mine]
        if listed.any():
            idx, val, own_listed = cand[0][mine[listed]], cand[1][mine[listed]], own[listed]
            above[listed] = _member_counts(idx, val > (own_listed + self.tol)[:, None], member)
            within[listed] = _member_counts(idx, val >= (own_listed - self.tol)[:, None], member)
        rest = np.flatnonzero(~listed)
        if len(rest):
            rest_sims, columns = sims[mine[rest]], member.astype(np.float32)
            above[rest] = (rest_sims > (own[rest] + self.tol)[:, None]).astype(np.float32) @ columns
            within[rest] = (rest_sims >= (own[rest] - self.tol)[:, None]).astype(np.float32) @ columns
        for j, (_, seed) in enumerate(seeds):
            local = np.flatnonzero(row_member[mine, j])
            where = _positions(self.rows[seed], self.order[seed], items[local])
            self.better[seed][where] = above[local, j]
            self.tied[seed][where] = within[local, j] - above[local, j] - 1

    def results(self) -> SeedResults:
        metrics, queries = [], []
        for sample, b_, t_, count in zip(self.rows, self.better, self.tied, self.counts):
            hits = hit_probability(b_, t_, self.k, self.rule)
            ranks, reciprocal = rank(b_, t_, self.rule), reciprocal_rank(b_, t_, self.rule)
            defined = len(sample) > 0
            metrics.append(
                {
                    "recall@k": float(hits.mean()) if defined else None,
                    "mrr": float(reciprocal.mean()) if defined else None,
                    "median_rank": float(np.median(ranks)) if defined else None,
                    **hubness(count[np.asarray(sample, dtype=np.int64)]),
                }
            )
            queries.append(PerQuery(np.asarray(sample), hits, ranks, reciprocal=reciprocal))
        return SeedResults(metrics, queries)


class _BkrTally:
    """backretrieval's per-seed accumulators: the image step's hit probabilities (computed first), then
    per source the hit through its most similar target text, and the targets' k-occurrences."""

    def __init__(
        self,
        images: np.ndarray,
        sources: Sequence[np.ndarray],
        targets: Sequence[np.ndarray],
        size: int,
        k: int,
        rule: str,
        tol: float,
    ):
        self.rows, self.cols = sources, targets
        self.k, self.rule, self.tol = k, rule, tol
        self.n_images = len(images)
        self.hit_keys, self.hit_probs = _image_hits(_Side(images), sources, targets, k, rule, tol, len(images))
        self.hits = [np.zeros(len(q)) for q in sources]
        self.match = [np.zeros(len(q), dtype=np.int64) for q in sources]
        self.counts = [np.zeros(size) for _ in sources]
        self.order = [np.argsort(q, kind="stable") for q in sources]

    def add_list(self, seed: int, items: np.ndarray, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        """One seed's top lists of some source rows: T* (a tied argmax averaged by the tie rule) and the hit through it."""
        self.counts[seed] += occurrences(rows, cols, values, self.k, self.rule, self.tol, len(self.counts[seed]))
        first = np.searchsorted(rows, np.arange(len(items)))
        best = values >= np.maximum.reduceat(values, first)[rows] - self.tol
        rows, matches = rows[best], cols[best]
        keys = (seed * self.n_images + matches) * self.n_images + items[rows]
        where = _positions(self.rows[seed], self.order[seed], items)
        self.hits[seed][where] = _aggregate_ties(
            rows, _lookup(self.hit_keys, self.hit_probs, keys), len(items), self.rule
        )
        self.match[seed][where] = matches[np.searchsorted(rows, np.arange(len(items)))]

    def add_chunk(
        self, block: Block, part: slice, sims: np.ndarray, seeds: list[tuple[int, int]], cand: Candidates
    ) -> None:
        """Nothing beyond the top lists."""

    def results(self) -> SeedResults:
        metrics = [
            {"recall@k": float(h.mean()) if len(h) else None, **hubness(c[np.asarray(t, dtype=np.int64)])}
            for h, c, t in zip(self.hits, self.counts, self.cols)
        ]
        queries = [PerQuery(np.asarray(q), h, match=m) for q, h, m in zip(self.rows, self.hits, self.match)]
        return SeedResults(metrics, queries)


def shared_blocks(groups: Sequence[tuple[Sequence[np.ndarray], Sequence[np.ndarray]]]) -> list[Block]:
    """Blocks for the seeds of several metrics over the same similarities (per group, its per-seed row
    and column sets; seeds numbered across the groups in order): one block for all of them when its
    product is no larger than the groups' own plans (``plan_blocks``) together, else those plans."""
    if sum(1 for rows, _ in groups if len(rows)) >= 2:
        row_sets = [r for rows, _ in groups for r in rows]
        col_sets = [c for _, cols in groups for c in cols]
        union = len(_union(row_sets)) * len(_union(col_sets))
        own = sum(min(len(_union(rows)) * len(_union(cols)), _separate_size(rows, cols)) for rows, cols in groups)
        if union <= _separate_size(row_sets, col_sets) and union <= own:  # one joint block, no larger
            return plan_blocks(row_sets, col_sets)
    plans: list[Block] = []
    offset = 0
    for rows, cols in groups:
        plans += [replace(b, seeds=tuple(offset + s for s in b.seeds)) for b in plan_blocks(rows, cols)]
        offset += len(rows)
    return plans


def _text_pass(
    src: np.ndarray,
    tgt: np.ndarray,
    tallies: Sequence[_XlrTally | _BkrTally],
    retrieval: str,
    neighbours: int,
    k: int,
    tol: float,
) -> None:
    """Feed every chunk of the source x target text similarities to the metrics that read them: cosine
    similarities are computed once for all (``shared_blocks``); CSLS penalties depend on each seed's
    sample, so under ``csls`` every seed of every metric is its own block (``scored_blocks``)."""
    owners = [(tally, seed) for tally in tallies for seed in range(len(tally.rows))]
    src_side, tgt_side = _Side(src), _Side(tgt)
    if retrieval == "cosine":
        scored: Iterable[Scored] = (
            (block, src_side, tgt_side) for block in shared_blocks([(t.rows, t.cols) for t in tallies])
        )
    else:
        row_sets = [r for t in tallies for r in t.rows]
        scored = scored_blocks(
            src_side, tgt_side, row_sets, [c for t in tallies for c in t.cols], retrieval, neighbours
        )

    def feed_chunk(block: Block, part: slice, sims: np.ndarray) -> list[TopList]:
        """The chunk's top lists (fed to the tallies in chunk order by the caller) and its own-target counts."""
        cand = _candidates(sims, _depth(k, block))  # one candidate list per row for every metric and seed
        for tally in tallies:
            own = [(b, owners[s][1]) for b, s in enumerate(block.seeds) if owners[s][0] is tally]
            tally.add_chunk(block, part, sims, own, cand)
        return list(_chunk_lists(block, part, sims, k, 2 * tol, cand))

    with _Workers() as workers:
        for lists in _chunk_map(workers, scored, feed_chunk):
            for seed, items, rows, cols, values in lists:
                tally, local = owners[seed]
                tally.add_list(local, items, rows, cols, values)


def xlr(
    src: np.ndarray,
    tgt: np.ndarray,
    samples: Sequence[np.ndarray],
    k: int = 10,
    rule: str = "expected",
    tol: float = TIE_TOLERANCE,
    retrieval: str = "cosine",
    neighbours: int = CSLS_NEIGHBOURS,
) -> SeedResults:
    """Cross-lingual retrieval: each sampled source against the targets of the same sample.

    Per seed: ``recall@k`` (hit when the item's own target is within the top k of the sample's
    targets), ``mrr`` and ``median_rank`` of the own target, and the hubness of the targets
    (``hub_skew``, ``antihubs``: see ``hubness``). ``retrieval``: ``cosine`` or ``csls``
    (``scored_blocks``, with ``neighbours`` = K).
    """
    _check(rule, k, tol)
    tally = _XlrTally(samples, len(tgt), k, rule, tol)
    _text_pass(src, tgt, [tally], retrieval, neighbours, k, tol)
    return tally.results()


def backretrieval(
    src: np.ndarray,
    tgt: np.ndarray,
    images: np.ndarray,
    sources: Sequence[np.ndarray],
    targets: Sequence[np.ndarray],
    k: int = 10,
    rule: str = "expected",
    tol: float = TIE_TOLERANCE,
    retrieval: str = "cosine",
    neighbours: int = CSLS_NEIGHBOURS,
) -> SeedResults:
    """BackRetrieval: per seed, sources and disjoint targets; for each source q, T* = the target
    text most similar to q, I* = T*'s image; hit when q's own image is within the top k of all
    the seed's source images ranked by similarity to I*. Per seed: ``recall@k`` and the hubness
    of the text step (the targets' k-occurrences among the sources' k most similar targets).
    ``retrieval`` (``cosine`` or ``csls``) scores the text step; g, the image step, is always cosine.
    """
    _check(rule, k, tol)
    _check_disjoint(sources, targets)
    tally = _BkrTally(images, sources, targets, len(tgt), k, rule, tol)
    _text_pass(src, tgt, [tally], retrieval, neighbours, k, tol)
    return tally.results()


def xlr_and_backretrieval(
    src: np.ndarray,
    tgt: np.ndarray,
    images: np.ndarray,
    samples: Sequence[np.ndarray],
    sources: Sequence[np.ndarray],
    targets: Sequence[np.ndarray],
    k: int = 10,
    rule: str = "expected",
    tol: float = TIE_TOLERANCE,
    retrieval: str = "cosine",
    neighbours: int = CSLS_NEIGHBOURS,
) -> tuple[SeedResults, SeedResults]:
    """``xlr`` on ``samples`` and ``backretrieval`` on ``sources`` and ``targets`` (same numbers as
    calling the two) with one pass over the source x target text similarities both read, when
    their samples overlap enough (``shared_blocks``; cosine retrieval only)."""
    _check(rule, k, tol)
    _check_disjoint(sources, targets)
    tallies = (_XlrTally(samples, len(tgt), k, rule, tol), _BkrTally(images, sources, targets, len(tgt), k, rule, tol))
    _text_pass(src, tgt, tallies, retrieval, neighbours, k, tol)
    return tallies[0].results(), tallies[1].results()


def _positions(sample: np.ndarray, order: np.ndarray, items: np.ndarray) -> np.ndarray:
    """Where ``items`` sit in ``sample`` (``order`` = its argsort)."""
    return order[np.searchsorted(sample, items, sorter=order)]


def _member_counts(idx: np.ndarray, selected: np.ndarray, member: np.ndarray) -> np.ndarray:
    """Per row of padded candidate columns ``idx`` and per seed (a column of ``member``), how many
    ``selected`` candidates are the seed's columns (padding, column -1, never counts)."""
    rows, positions = np.nonzero(selected & (idx >= 0))
    sums = np.zeros((len(rows) + 1, member.shape[1]), dtype=np.int64)  # sums[e]: the first e entries
    np.cumsum(member[idx[rows, positions]], axis=0, out=sums[1:])
    bounds = np.searchsorted(rows, np.arange(len(idx) + 1))
    return sums[bounds[1:]] - sums[bounds[:-1]]


def _lookup(keys: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """values[keys == w] for each wanted key w (sorted ``keys``), 0 where absent."""
    if not len(keys):
        return np.zeros(len(wanted))
    found = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[found] == wanted, values[found], 0.0)


def _depth(needed: int, block: Block) -> int:
    """How many top columns per row to keep so that each seed's ``needed`` best are almost surely among them."""
    density = block.col_member.sum(axis=0).min() / max(1, len(block.cols))
    return min(len(block.cols), math.ceil(2 * (needed + 10) / max(density, 1e-9)))


def _top_lists(blocks: Iterable[Scored], needed: int, margin: float):
    """For each seed and its row items: the seed's column items whose similarity is at least (the
    ``needed``-th best - ``margin``), ordered by row then similarity, descending.

    Yields (seed, row items, entry rows as positions in the row items, entry column items, entry similarities).
    """

    def chunk_lists(block: Block, part: slice, sims: np.ndarray) -> list[TopList]:
        return list(_chunk_lists(block, part, sims, needed, margin))

    with _Workers() as workers:
        for lists in _chunk_map(workers, blocks, chunk_lists):
            yield from lists


TopList = tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # seed, row items, rows, column items, values


def _chunk_lists(
    block: Block, part: slice, sims: np.ndarray, needed: int, margin: float, cand: Candidates | None = None
) -> Iterator[TopList]:
    """``_top_lists`` of one chunk of a block's rows (``cand``: its ``_candidates`` at ``_depth(needed, block)``)."""
    if cand is None:
        cand = _candidates(sims, _depth(needed, block))
    for b, seed in enumerate(block.seeds):
        local = np.flatnonzero(block.row_member[part, b])
        if len(local):
            sub = (cand[0][local], cand[1][local], cand[2][local])
            rows, cols, values = _member_lists(sims, local, sub, block.col_member[:, b], needed, margin)
            yield seed, block.rows[part][local], rows, block.cols[cols], values


def occurrences(
    rows: np.ndarray, cols: np.ndarray, values: np.ndarray, k: int, rule: str, tol: float, size: int
) -> np.ndarray:
    """The k-occurrences N_k of a ``_top_lists`` entry list (margin >= 2 tol): per column item (an array
    over all ``size`` items), how many rows have it among their k best, ties counted by the tie rule
    (``expected``: the probability of being in the top k under random tie-breaking)."""
    probability = hit_probability(*_tie_counts(rows, values, tol), k, rule)
    return np.bincount(cols, weights=probability, minlength=size)


def hubness(counts: np.ndarray) -> dict[str, float | None]:
    """Skewness of the k-occurrence distribution (the population moment E[(N_k - mu)^3] / sigma^3,
    Radovanovic, Nanopoulos and Ivanovic, JMLR 2010, sect. 3) and the share of anti-hubs (N_k = 0)
    over the candidates; the skewness is undefined (None) when every N_k is equal."""
    if not len(counts):
        return {"hub_skew": None, "antihubs": None}
    skew = _skewness(np.asarray(counts, dtype=np.float64)) if np.ptp(counts) > 1e-12 else None
    return {"hub_skew": skew, "antihubs": float(np.mean(counts <= 0))}


def _skewness(values: np.ndarray) -> float | None:
    """m3 / m2^1.5 of the central moments, with NumPy's operations in the order of
    ``scipy.stats.skew(values, bias=True)`` (the same float); None where SciPy gives NaN
    (m2 at or below the rounding of the mean). Not SciPy itself: importing ``scipy.stats`` costs
    a run about 0.9 s."""
    mean = np.mean(values)
    centred = values - mean
    m2 = np.mean(centred**2)
    m3 = np.mean(centred**2 * centred)
    if m2 <= (np.finfo(np.float64).eps * mean) ** 2:
        return None
    return float(m3 / m2**1.5)


def _image_hits(
    images: _Side,
    sources: Sequence[np.ndarray],
    targets: Sequence[np.ndarray],
    k: int,
    rule: str,
    tol: float,
    n_items: int,
) -> tuple[np.ndarray, np.ndarray]:
    """For every seed s, target t and source q with a non-zero chance: the probability that q's
    image is within the top k of the seed's source images ranked by similarity to t's image.

    Returned as sorted keys ((s * n_items + t) * n_items + q) and their probabilities.
    """
    keys, probs = [], []
    for seed, t_items, rows, q_items, values in _top_lists(scored_blocks(images, images, targets, sources), k, 2 * tol):
        p = hit_probability(*_tie_counts(rows, values, tol), k, rule)
        keep = p > 0
        keys.append((seed * n_items + t_items[rows[keep]]) * n_items + q_items[keep])
        probs.append(p[keep])
    if not keys:
        return np.zeros(0, dtype=np.int64), np.zeros(0)
    all_keys, all_probs = np.concatenate(keys), np.concatenate(probs)
    order = np.argsort(all_keys)  # each (seed, target, source) once: any sort gives this order (SIMD sort: 3x faster)
    return all_keys[order], all_probs[order]


def corr_side(n: int, max_pairs: int) -> int:
    """How many of a seed's n sources (and of its n targets) ``corr`` pairs up: all of them when
    n * n <= max_pairs, else the first floor(sqrt(max_pairs))."""
    if max_pairs < 1:
        raise ValueError(f"max_pairs must be at least 1, got {max_pairs}")
    return n if n * n <= max_pairs else math.isqrt(max_pairs)


def corr(
    src: np.ndarray,
    tgt: np.ndarray,
    images: np.ndarray,
    sources: Sequence[np.ndarray],
    targets: Sequence[np.ndarray],
    max_pairs: int = 1_000_000,
) -> list[dict[str, float | None]]:
    """Spearman correlation of text and image cosine distances over source x target pairs.

    Cosines within ``TIE_TOLERANCE`` of the first of their tie group share their mean rank, as retrieval counts
    them tied (``average_ranks``, ``tie_groups``: a group spans at most the tolerance); version 4 of the task.

    All pairs of the seed's sources and targets when there are at most ``max_pairs``; otherwise
    the pairs between the first m sources and the first m targets of the (random) sample,
    m = floor(sqrt(max_pairs)) (``corr_side``). Undefined (None) when either side is constant: all its
    values within ``TIE_TOLERANCE`` of each other, the tolerance within which retrieval counts a tie.
    """
    return corr_with_moments(src, tgt, images, sources, targets, max_pairs)[0]


def corr_with_moments(
    src: np.ndarray,
    tgt: np.ndarray,
    images: np.ndarray,
    sources: Sequence[np.ndarray],
    targets: Sequence[np.ndarray],
    max_pairs: int = 1_000_000,
) -> tuple[list[dict[str, float | None]], list[np.ndarray]]:
    """``corr``'s values, and per seed the rank moments of each paired source (``rank_moments``); the seeds
    on ``_Workers``."""
    src_side, tgt_side, image_side = _Side(src), _Side(tgt), _Side(images)

    def seed_corr(pair: tuple[np.ndarray, np.ndarray]) -> tuple[dict[str, float | None], np.ndarray]:
        q, t = pair
        side = corr_side(max(len(q), len(t)), max_pairs)
        q, t = q[:side], t[:side]
        text = _cosine(src_side, q, tgt_side, t)
        image = _cosine(image_side, q, image_side, t)
        # ranked once for both, values within the tie tolerance tied (not ordered by float32 noise)
        text_ranks, image_ranks = average_ranks(text, TIE_TOLERANCE), average_ranks(image, TIE_TOLERANCE)
        spearman = _rank_correlation(text, image, text_ranks, image_ranks)
        return {"spearman": spearman}, _moments(text_ranks.reshape(text.shape), image_ranks.reshape(image.shape))

    pairs = list(zip(sources, targets))
    similarities = sum(corr_side(max(len(q), len(t)), max_pairs) ** 2 for q, t in pairs)
    with _Workers() as workers:
        per_seed = list(workers.map(seed_corr, pairs, similarities))
    return [value for value, _ in per_seed], [moments for _, moments in per_seed]


def rank_moments(text: np.ndarray, image: np.ndarray) -> np.ndarray:
    """Per row (source) of two equal-shape similarity blocks: (count, Σx, Σy, Σx², Σy², Σxy) of x, y =
    the mid-ranks of all the block's pairs (values tied within ``TIE_TOLERANCE``, ``tie_groups``), centred and divided by the
    number of pairs.

    Summed over all rows they give Pearson's r of the ranks, which is Spearman's rho of the
    block; summed over a resample of the rows, the bootstrap statistic over sources.
    """
    return _moments(
        average_ranks(text, TIE_TOLERANCE).reshape(text.shape), average_ranks(image, TIE_TOLERANCE).reshape(image.shape)
    )


def _moments(text_ranks: np.ndarray, image_ranks: np.ndarray) -> np.ndarray:
    """``rank_moments`` of the blocks' mid-ranks."""
    pairs = text_ranks.size
    if pairs == 0:
        return np.zeros((len(text_ranks), 6))
    x = (text_ranks - (pairs + 1) / 2) / pairs
    y = (image_ranks - (pairs + 1) / 2) / pairs
    count = np.full(len(text_ranks), float(text_ranks.shape[1]))
    return np.stack([count, x.sum(1), y.sum(1), (x * x).sum(1), (y * y).sum(1), (x * y).sum(1)], axis=1)


def average_ranks(values: np.ndarray, tol: float = 0.0) -> np.ndarray:
    """The 1-based ranks of all of ``values`` (flattened), tied values sharing the mean of their ranks;
    NaN everywhere when any value is NaN.

    Tied: with ``tol = 0`` exactly equal values (as ``scipy.stats.rankdata(values, method="average", axis=None)``);
    otherwise, in sorted order, a group opens at the smallest value not yet grouped and holds every value within
    ``tol`` of that first value (``tie_groups``): a group spans at most ``tol``, however crowded the values.
    ``corr`` ranks with ``TIE_TOLERANCE``, the tolerance within which retrieval counts a tie, so that cosines equal
    in exact arithmetic (a repeated image or text) are not ranked by float32 noise. An unstable sort orders them
    (``_ascending_order``): which of several tied values comes first does not matter once their ranks are averaged.
    """
    flat = np.asarray(values).ravel()
    if not len(flat):
        return np.zeros(0)
    if np.isnan(flat).any():
        return np.full(len(flat), np.nan)
    order = _ascending_order(flat)
    ordered = flat[order]
    opens = np.concatenate(([True], ordered[1:] != ordered[:-1])) if tol == 0 else tie_groups(ordered, tol)
    starts = np.flatnonzero(opens)
    ends = np.append(starts[1:], len(flat))
    ranks = np.empty(len(flat))
    ranks[order] = np.repeat(0.5 * (starts + ends + 1), ends - starts)  # positions start..end-1: ranks start+1..end
    return ranks


def tie_groups(ordered: np.ndarray, tol: float) -> np.ndarray:
    """bool per value of the ascending ``ordered``: whether a tie group opens there. The first value opens one,
    and each group holds every later value at most ``tol`` above its first value (anchored, never chained: a
    group spans at most ``tol``); the next value opens the next group.

    Vectorised: a run of values each within ``tol`` of the one before it that spans at most ``tol`` is one group;
    only in longer runs are the openings followed (``_run_openings``)."""
    x = ordered.astype(np.float64)
    opens = np.ones(len(x), dtype=bool)
    opens[1:] = x[1:] > x[:-1] + tol  # runs chained value to value: every run opens a group
    starts = np.flatnonzero(opens)
    ends = np.append(starts[1:], len(x))
    long = x[ends - 1] > x[starts] + tol  # runs spanning more than tol hold several groups
    if not long.any():
        return opens
    positions = np.flatnonzero(np.repeat(long, ends - starts))  # the values of the long runs, in order
    opens[positions] = False
    opens[positions[_run_openings(x[positions], (ends - starts)[long], tol)]] = True
    return opens


FOLLOWED_STEPS = 32  # openings followed one step at a time in every long run at once, before doubling


def _run_openings(v: np.ndarray, lengths: np.ndarray, tol: float) -> np.ndarray:
    """Positions in ``v`` (runs of the given lengths, one after another, each more than ``tol`` above the one
    before) where a group opens: from each run's first value, the next opening is the first value above the
    opening + tol. Followed in all runs at once, a step at a time (a run holds a few groups), for at most
    ``FOLLOWED_STEPS`` steps; what is left of the runs still open then, by doubling (``_doubled_openings``)."""
    ends = np.cumsum(lengths)
    frontier = ends - lengths
    found = []
    for _ in range(FOLLOWED_STEPS):
        found.append(frontier)
        following = np.searchsorted(v, v[frontier] + tol, side="right")
        still = following < ends  # the jump from a run's last group lands on the next run (or past the end)
        frontier, ends = following[still], ends[still]
        if not len(frontier):
            return np.concatenate(found)
    left = ends - frontier  # the runs' tails from their next opening: runs of their own, as far apart
    rest = np.repeat(frontier - (np.cumsum(left) - left), left) + np.arange(left.sum())
    found.append(rest[_doubled_openings(v[rest], tol)])
    return np.concatenate(found)


def _doubled_openings(v: np.ndarray, tol: float) -> np.ndarray:
    """``_run_openings`` of runs one after another in ``v``, followed from the first value by doubling jumps
    (about log2(groups) passes over ``v``)."""
    # next opening after an opening at i: the first value above v[i] + tol (runs are more than tol apart, so the
    # last group of a run is followed by the next run's first value); len(v) marks the end
    index = np.int32 if len(v) < 2**31 else np.intp  # gathers of 32-bit positions: less memory to move
    jump = np.append(np.searchsorted(v, v + tol, side="right").astype(index), index(len(v)))
    found = np.zeros(1, dtype=index)  # the openings 0 .. 2^j - 1 steps from the first, in order
    while True:
        further = jump[found]  # the openings 2^j .. 2^(j+1) - 1 steps from the first
        found = np.concatenate((found, further[further < len(v)]))
        if further[-1] >= len(v):
            return found
        jump = jump[jump]


def _ascending_order(flat: np.ndarray) -> np.ndarray:
    """Positions that sort the NaN-free ``flat`` ascending, equal values in any order; float32 (of fewer than
    2**32 values) by one sort of 64-bit keys, the value's bits made to sort as the values do above the position
    (NumPy's SIMD sort of integers, about 40 % faster than ``argsort``)."""
    if flat.dtype != np.float32 or len(flat) >= 2**32:
        return np.argsort(flat)
    bits = flat.view(np.uint32)
    negative = bits >= np.uint32(1 << 31)
    ordered_bits = np.where(negative, ~bits, bits | np.uint32(1 << 31))  # negatives reversed, below the positives
    keys = ordered_bits.astype(np.uint64) << np.uint64(32)
    keys |= np.arange(len(flat), dtype=np.uint64)
    keys.sort()
    return (keys & np.uint64(0xFFFFFFFF)).astype(np.intp)


def _cosine(a: _Side, rows: np.ndarray, b: _Side, cols: np.ndarray) -> np.ndarray:
    x, x_inv = a.take(rows)
    y, y_inv = b.take(cols)
    return (x @ y.T) * x_inv[:, None] * y_inv[None, :]


def _rank_correlation(a: np.ndarray, b: np.ndarray, a_ranks: np.ndarray, b_ranks: np.ndarray) -> float | None:
    """Spearman's rho of ``a`` and ``b`` from their ``average_ranks``, computed as ``scipy.stats.spearmanr``
    does (``np.corrcoef`` of the two rank columns); None when undefined (fewer than 2 values, either
    side constant up to ``TIE_TOLERANCE``, or NaN): ranking float rounding noise is no correlation."""
    if a.size < 2 or np.ptp(a) <= TIE_TOLERANCE or np.ptp(b) <= TIE_TOLERANCE:
        return None
    with np.errstate(invalid="ignore"):
        value = np.corrcoef(np.column_stack((a_ranks, b_ranks)), rowvar=False)[1, 0]
    return float(value) if np.isfinite(value) else None
