"""Benchmark: xlr + backretrieval + corr from cached embeddings, against a plain NumPy implementation.

The plain implementation is what one writes first: per seed, build the full similarity matrices
of the sample, argsort them, read off ranks (and Spearman on the same pairs as ``corr``, its cosines
tied within 1e-6 of the first of their group as corr version 4 defines it). Both run on the same synthetic embeddings
(N = 2n items; text 768-d, image 2048-d, float32) and seeds; their numbers are checked to agree
(the retrieval similarities are continuous random values, without ties), then time and peak
memory (tracemalloc: every array allocated during the computation, inputs excluded) are compared.

    python benchmarks/retrieval_metrics.py [--sizes 1000,5000,10000,20000] [--seeds 25]
    python benchmarks/retrieval_metrics.py --floor-only --sizes 10000,20000 --repeats 2   # ours against the BLAS floor
    python benchmarks/retrieval_metrics.py --profile --sizes 10000                         # where ours spends its time

The BLAS floor is the similarity products the three metrics need, timed alone in the same run
(same embeddings, seeds, chunk size and float32 BLAS as ours, results thrown away): the cosines
of every source with every target over the union of the seeds' samples (xlr's and
backretrieval's text similarities are both read from that one product), of every target image
with every source image (backretrieval), and corr's per-seed text and image products.
``ours`` computes xlr and backretrieval in one pass (``metrics.xlr_and_backretrieval``);
``separate`` calls ``metrics.xlr`` and then ``metrics.backretrieval``, as the harness's two tasks
do, and its floor is ``floor, text twice``: the text product computed once for each. With
``--repeats`` R, the implementations alternate (ours, floor, separate, floor twice; then the reverse)
and each ratio is the median of the per-round ratios.

Each measurement runs in a fresh process. The plain implementation does the same work for every
seed, so above ``--plain-max-n`` it runs ``--plain-seeds`` seeds and its time is scaled to all
seeds (marked *); above ``--plain-up-to`` it is not run (at n = 20,000 it would hold about
14 GB: n x n float32 similarities and int64 argsort orders).
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import time
import tracemalloc

import numpy as np

from harness_tasks.retrieval import metrics

D_TEXT, D_IMAGE, K = 768, 2048, 10


def embeddings(n_items: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Source and target text vectors (targets are noisy copies) and non-negative image vectors."""
    rng = np.random.default_rng(seed)
    src = rng.standard_normal((n_items, D_TEXT), dtype=np.float32)
    tgt = src + 2.5 * rng.standard_normal((n_items, D_TEXT), dtype=np.float32)
    images = np.maximum(rng.standard_normal((n_items, D_IMAGE), dtype=np.float32), 0)
    return src, tgt, images


def samples(n_items: int, n: int, seeds: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    perms = [np.random.default_rng(s).permutation(n_items) for s in range(seeds)]
    return [p[:n] for p in perms], [p[n : 2 * n] for p in perms]


def ours(src, tgt, images, sources, targets, joint: bool = True) -> dict[str, list[float]]:
    """The three metrics; ``joint``: xlr and backretrieval in one text pass (``xlr_and_backretrieval``),
    else one after the other, as the harness's tasks ``xlr`` and ``backretrieval`` call them."""
    if joint:
        xlr_results, bkr_results = metrics.xlr_and_backretrieval(src, tgt, images, sources, sources, targets, K)
    else:
        xlr_results = metrics.xlr(src, tgt, sources, K)
        bkr_results = metrics.backretrieval(src, tgt, images, sources, targets, K)
    xlr, bkr = xlr_results.metrics, bkr_results.metrics
    corr = metrics.corr_with_moments(src, tgt, images, sources, targets)[0]  # as the task corr calls it
    return {
        "xlr": [m["recall@k"] for m in xlr],
        "mrr": [m["mrr"] for m in xlr],
        "median_rank": [m["median_rank"] for m in xlr],
        "bkr": [m["recall@k"] for m in bkr],
        "corr": [m["spearman"] for m in corr],
    }


def unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def plain(src, tgt, images, sources, targets) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"xlr": [], "mrr": [], "median_rank": [], "bkr": [], "corr": []}
    for q, t in zip(sources, targets):
        text = unit(src[q]) @ unit(tgt[q]).T  # xlr: sources against their own targets
        order = np.argsort(-text, axis=1)
        ranks = np.argmax(order == np.arange(len(q))[:, None], axis=1) + 1
        out["xlr"].append(float(np.mean(ranks <= K)))
        out["mrr"].append(float(np.mean(1.0 / ranks)))
        out["median_rank"].append(float(np.median(ranks)))
        text = unit(src[q]) @ unit(tgt[t]).T  # backretrieval: sources against disjoint targets
        best = np.argmax(text, axis=1)
        image = unit(images[t]) @ unit(images[q]).T
        image_order = np.argsort(-image, axis=1)
        own_rank = np.argmax(image_order[best] == np.arange(len(q))[:, None], axis=1) + 1
        out["bkr"].append(float(np.mean(own_rank <= K)))
        side = metrics.corr_side(len(q), 1_000_000)
        pairs = (q[:side], t[:side])
        text_ranks = tolerant_ranks(cosines(src, tgt, *pairs).ravel(), metrics.TIE_TOLERANCE)
        image_ranks = tolerant_ranks(cosines(images, images, *pairs).ravel(), metrics.TIE_TOLERANCE)
        out["corr"].append(float(np.corrcoef(text_ranks, image_ranks)[0, 1]))
    return out


def cosines(a: np.ndarray, b: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Cosines of ``a[rows]`` with ``b[cols]`` in float32, the product scaled by the inverse norms as corr computes
    them: corr ties values within 1e-6 of each other, so another rounding (normalising first) could tie others."""
    x, y = a[rows], b[cols]
    return (x @ y.T) * metrics.inverse_norms(x)[:, None] * metrics.inverse_norms(y)[None, :]


def tolerant_ranks(values: np.ndarray, tol: float) -> np.ndarray:
    """Mid-ranks as corr (version 4) defines them: in sorted order, a group opens at the first value not yet grouped
    and holds every value within ``tol`` of it (anchored, not chained); with ``tol = 0`` this is
    ``scipy.stats.rankdata(values)``."""
    order = np.argsort(values, kind="stable")
    ordered = values[order].astype(np.float64)
    ranks = np.empty(len(values))
    start = 0
    while start < len(ordered):  # one group at a time, from its first value
        end = int(np.searchsorted(ordered, ordered[start] + tol, side="right"))
        ranks[order[start:end]] = (start + end + 1) / 2
        start = end
    return ranks


def floor(src, tgt, images, sources, targets, text_passes: int = 1) -> dict[str, list[float]]:
    """The similarity products the metrics need, computed in row chunks of ``metrics.CHUNK_BYTES``; returns nothing useful."""
    union = np.unique(np.concatenate([*sources, *targets]))
    pairs = [(src, tgt)] * text_passes + [(images, images)]
    for rows_side, cols_side in pairs:
        cols = np.ascontiguousarray(cols_side[union])
        cols_inv, rows_inv = metrics.inverse_norms(cols), metrics.inverse_norms(rows_side[union])
        step = max(1, metrics.CHUNK_BYTES // (4 * len(union)))
        for start in range(0, len(union), step):
            sims = rows_side[union[start : start + step]] @ cols.T
            sims *= rows_inv[start : start + step, None]
            sims *= cols_inv[None, :]
    for q, t in zip(sources, targets):
        side = metrics.corr_side(len(q), 1_000_000)
        for a, b in ((src, tgt), (images, images)):
            x, y = a[q[:side]], b[t[:side]]
            (x @ y.T) * metrics.inverse_norms(x)[:, None] * metrics.inverse_norms(y)[None, :]
    return {}


def floor_text_twice(src, tgt, images, sources, targets) -> dict[str, list[float]]:
    """The floor with the text product computed twice (xlr, then backretrieval), as ours does."""
    return floor(src, tgt, images, sources, targets, text_passes=2)


def ours_separate(src, tgt, images, sources, targets) -> dict[str, list[float]]:
    """Ours with xlr and backretrieval called one after the other (each its own text pass)."""
    return ours(src, tgt, images, sources, targets, joint=False)


IMPLEMENTATIONS = {
    "ours": ours,
    "plain": plain,
    "floor": floor,
    "separate": ours_separate,
    "floor2": floor_text_twice,
}


def measure(function, *args) -> tuple[dict[str, list[float]], float, float, float]:
    """(result, wall seconds, CPU seconds, peak MiB allocated during the call)."""
    gc.collect()
    tracemalloc.start()
    start, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result, seconds, cpu, peak


def worker(implementation: str, n: int, seeds: int) -> None:
    """Measure one implementation at one size; print a JSON line."""
    src, tgt, images = embeddings(2 * n)
    sources, targets = samples(2 * n, n, seeds)
    result, wall, cpu, peak = measure(IMPLEMENTATIONS[implementation], src, tgt, images, sources, targets)
    print(json.dumps({"result": result, "wall": wall, "cpu": cpu, "peak": peak}))


def profile(n: int, seeds: int) -> None:
    """Ours under cProfile, timed in CPU seconds of the process (robust to other jobs' load): the 20
    functions with the most time spent in themselves (matrix products and other NumPy operators
    count in the Python function that applies them). BLAS is limited to one thread, so that the
    metrics compute their chunks and seeds on the calling thread (``metrics._Workers``), which
    cProfile sees."""
    import cProfile
    import pstats

    from threadpoolctl import threadpool_limits

    src, tgt, images = embeddings(2 * n)
    sources, targets = samples(2 * n, n, seeds)
    profiler = cProfile.Profile(time.process_time)
    with threadpool_limits(1, user_api="blas"):
        profiler.runcall(ours, src, tgt, images, sources, targets)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


def run_worker(implementation: str, n: int, seeds: int) -> dict:
    command = [sys.executable, __file__, "--worker", implementation, "--sizes", str(n), "--seeds", str(seeds)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,5000,10000,20000", help="sample sizes n (N = 2n items)")
    parser.add_argument("--seeds", type=int, default=25)
    parser.add_argument(
        "--plain-max-n", type=int, default=5000, help="largest n at which the plain version runs every seed"
    )
    parser.add_argument("--plain-seeds", type=int, default=3, help="seeds of the plain version above --plain-max-n")
    parser.add_argument(
        "--plain-up-to", type=int, default=10000, help="largest n at which the plain version runs at all"
    )
    parser.add_argument(
        "--floor-only", action="store_true", help="compare ours with the BLAS floor only (no plain peer)"
    )
    parser.add_argument("--repeats", type=int, default=1, help="alternating repetitions of ours and the floor")
    parser.add_argument(
        "--pairs",
        default="joint,separate",
        help="with --floor-only: joint (ours against the floor) and/or separate (xlr, backretrieval one after the other, against the floor with the text product twice)",
    )
    parser.add_argument("--profile", action="store_true", help="profile ours at the first size")
    parser.add_argument("--worker", choices=tuple(IMPLEMENTATIONS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.worker:
        return worker(args.worker, sizes[0], args.seeds)
    if args.profile:
        return profile(sizes[0], args.seeds)
    if args.floor_only:
        return floor_table(sizes, args.seeds, args.repeats, args.pairs.split(","))
    rows = []
    for n in sizes:
        mine = run_worker("ours", n, args.seeds)
        print(f"n={n}: ours {mine['wall']:.1f}s wall, {mine['cpu']:.1f}s CPU, {mine['peak']:.0f} MiB", flush=True)
        reference, plain_seeds = None, args.seeds if n <= args.plain_max_n else min(args.plain_seeds, args.seeds)
        if n <= args.plain_up_to:
            reference = run_worker("plain", n, plain_seeds)
            for name, values in reference["result"].items():
                np.testing.assert_allclose(
                    mine["result"][name][:plain_seeds], values, atol=1e-6, err_msg=f"{name} differs at n={n}"
                )
            scale = args.seeds / plain_seeds
            reference["wall"], reference["cpu"] = reference["wall"] * scale, reference["cpu"] * scale
            print(
                f"n={n}: plain ({plain_seeds} seeds, agrees) {reference['wall']:.1f}s wall, {reference['cpu']:.1f}s CPU, "
                f"{reference['peak']:.0f} MiB",
                flush=True,
            )
        rows.append((n, mine, reference, plain_seeds < args.seeds))
    print(
        f"\nxlr + backretrieval + corr, {args.seeds} seeds, k={K}, text {D_TEXT}-d, image {D_IMAGE}-d, N = 2n items\n"
    )
    print(
        "| n | ours wall (s) | ours CPU (s) | plain wall (s) | plain CPU (s) | speed-up wall / CPU | ours peak (MiB) | plain peak (MiB) | memory ratio |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, mine, reference, extrapolated in rows:
        if reference is None:
            print(
                f"| {n:,} | {mine['wall']:.1f} | {mine['cpu']:.1f} | not run | not run | - | {mine['peak']:.0f} | - | - |"
            )
            continue
        mark = "*" if extrapolated else ""
        print(
            f"| {n:,} | {mine['wall']:.1f} | {mine['cpu']:.1f} | {reference['wall']:.1f}{mark} | {reference['cpu']:.1f}{mark} | "
            f"{reference['wall'] / mine['wall']:.1f}x / {reference['cpu'] / mine['cpu']:.1f}x | {mine['peak']:.0f} | "
            f"{reference['peak']:.0f} | {mine['peak'] / reference['peak']:.2f} |"
        )
    if any(extrapolated for *_, extrapolated in rows):
        print(
            f"\n* the plain version ran {args.plain_seeds} seeds; its time is scaled to {args.seeds} (every seed is the same work)"
        )


PAIRS = {"joint": ("ours", "floor"), "separate": ("separate", "floor2")}


def floor_table(sizes: list[int], seeds: int, repeats: int, pairs: list[str]) -> None:
    """Each implementation against its floor (``PAIRS``), alternating, per size; the load average
    (1 minute) is printed before every run, since other jobs may share the cores."""
    import os
    import statistics

    names = [name for pair in pairs for name in PAIRS[pair]]
    rows = []
    for n in sizes:
        runs: dict[str, list[dict]] = {name: [] for name in names}
        for r in range(repeats):
            for name in names if r % 2 == 0 else names[::-1]:
                load = os.getloadavg()[0]
                runs[name].append({**run_worker(name, n, seeds), "load": load})
                run = runs[name][-1]
                print(
                    f"n={n} round {r + 1}: {name} {run['wall']:.1f}s wall, {run['cpu']:.1f}s CPU, "
                    f"{run['peak']:.0f} MiB (load average before: {load:.1f})",
                    flush=True,
                )
        rows.append((n, runs))
    print(f"\nload average at end: {os.getloadavg()[0]:.1f} (2 cores)\n")
    print(
        f"against the similarity products alone, {seeds} seeds, N = 2n items, medians of {repeats} alternating runs\n"
    )
    print("| n | what | wall / CPU (s) | floor wall / CPU (s) | ratio CPU (wall) | peak MiB / floor's | load average |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for n, runs in rows:
        med = {
            name: {key: statistics.median(run[key] for run in values) for key in ("wall", "cpu", "peak")}
            for name, values in runs.items()
        }
        for pair in pairs:
            mine, base = PAIRS[pair]
            ratio_cpu = statistics.median(o["cpu"] / f["cpu"] for o, f in zip(runs[mine], runs[base]))
            ratio = statistics.median(o["wall"] / f["wall"] for o, f in zip(runs[mine], runs[base]))
            loads = [run["load"] for run in runs[mine] + runs[base]]
            print(
                f"| {n:,} | {mine} | {med[mine]['wall']:.1f} / {med[mine]['cpu']:.1f} | {med[base]['wall']:.1f} / "
                f"{med[base]['cpu']:.1f} | {ratio_cpu:.2f}x ({ratio:.2f}x) | {med[mine]['peak']:.0f} / "
                f"{med[base]['peak']:.0f} | {min(loads):.1f}-{max(loads):.1f} |"
            )


if __name__ == "__main__":
    main()
