"""Benchmark: 2 ranks against 1 on encoding-bound work, the gather volume, and a paper calculation.

1. Wall time of ``harness run --tasks xlr`` on the built-in benchmark (``--task-args
   dataset=xling-shapes,size=N,n=N``: 2N texts to encode) with a text encoder: one process with
   2 threads against ``torchrun --standalone --nproc_per_node=2`` with 1 thread per rank, each
   from an empty cache, same machine, same run of this script. Each run is repeated over its
   filled cache; the difference is the encoding alone (the rerun pays start-up, generating the
   data and the metrics, which every rank repeats). The encoder is the packaged
   ``minilm`` when installed, else a randomly initialised MiniLM-sized BERT built locally.
2. Bytes each rank sends when the ranks gather 10,000 x 768 float32 embeddings (the pickled
   ``all_gather_object`` payload the harness exchanges: content key -> .npy bytes).
3. The wall time of the SIGIR protocol (10 models x 3 datasets x 25 seeds, N = 10,000) on 8 GPUs,
   from the per-item encoding cost and the per-seed metric cost measured here, with the GPU
   speed-up over this CPU stated as an assumption.

    python benchmarks/distributed_scaling.py [--size 1000] [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from harness.adapters.cache import array_to_bytes, make_key
from harness_tasks.retrieval import metrics

HARNESS = str(Path(sys.executable).with_name("harness"))
GPU_SPEEDUP = 50.0  # assumption: one data-centre GPU encodes this many times faster than this 2-core CPU


def text_model(folder: Path) -> str:
    """``minilm`` if the offline-models extra is installed, else a local MiniLM-sized random BERT."""
    listing = subprocess.run([HARNESS, "list", "models"], capture_output=True, text=True).stdout
    if any(line.split()[:1] == ["minilm"] for line in listing.splitlines()):
        return "minilm"
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from tiny_models import DEFAULT_CORPUS, tiny_bert

    return str(tiny_bert(folder / "bert", DEFAULT_CORPUS, layers=6, hidden=384))


def timed_run(command: list[str], threads: int, cache: Path, output: Path) -> float:
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "HARNESS_CACHE_DIR": str(cache)}
    start = time.perf_counter()
    done = subprocess.run([*command, "--output", str(output)], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed with exit code {done.returncode}:\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def gather_bytes_per_rank(n: int = 10_000, dim: int = 768, ranks: int = 2) -> int:
    rng = np.random.default_rng(0)
    share = {
        make_key("bench", i): array_to_bytes(rng.standard_normal(dim).astype(np.float32)) for i in range(n // ranks)
    }
    return len(pickle.dumps(share))


def metric_seconds_per_seed(n: int = 10_000) -> float:
    rng = np.random.default_rng(0)
    src = rng.standard_normal((2 * n, 768), dtype=np.float32)
    tgt = src + rng.standard_normal((2 * n, 768), dtype=np.float32)
    images = np.maximum(rng.standard_normal((2 * n, 2048), dtype=np.float32), 0)
    perm = rng.permutation(2 * n)
    start = time.perf_counter()
    metrics.xlr(src, tgt, [perm[:n]], 10)
    metrics.backretrieval(src, tgt, images, [perm[:n]], [perm[n:]], 10)
    metrics.corr(src, tgt, images, [perm[:n]], [perm[n:]])
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000, help="items of the built-in benchmark (2x texts encoded)")
    parser.add_argument("--repeats", type=int, default=1, help="timed pairs of runs (the medians are reported)")
    args = parser.parse_args()
    ones, twos, fixed_ones, fixed_twos = [], [], [], []
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        model = text_model(folder)
        run = [
            "run",
            "--tasks",
            "xlr",
            "--model",
            model,
            "--task-args",
            f"dataset=xling-shapes,size={args.size},n={args.size}",
            "--seeds",
            "1",
        ]
        launcher = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node=2",
            "-m",
            "harness",
        ]
        for repeat in range(args.repeats):  # alternate the two forms so that drifting load hits both alike
            for command, threads, times, fixed in (
                ([HARNESS, *run], 2, ones, fixed_ones),
                ([*launcher, *run], 1, twos, fixed_twos),
            ):
                cache = folder / f"cache-{threads}-{repeat}"
                times.append(timed_run(command, threads, cache, folder / f"out-{threads}-{repeat}"))
                # the same run again over the filled cache: start-up, data generation and metrics, no encoding
                fixed.append(timed_run(command, threads, cache, folder / f"again-{threads}-{repeat}"))
    one, two = float(np.median(ones)), float(np.median(twos))
    encode_one = float(np.median(np.subtract(ones, fixed_ones)))
    encode_two = float(np.median(np.subtract(twos, fixed_twos)))
    texts = 2 * args.size
    per_item = encode_one / texts
    volume = gather_bytes_per_rank()
    per_seed = metric_seconds_per_seed()
    models, datasets, seeds, n, gpus = 10, 3, 25, 10_000, 8
    run_encode = 2 * n * per_item  # one (model, dataset) run encodes every text once: the seeds reuse the cache
    run_metrics = seeds * per_seed
    waves = -(-models * datasets // gpus)  # the 30 independent runs, 8 at a time, one GPU each
    print("| measurement | value |\n|---|---|")
    print(f"| text encoder | {Path(model).name if os.sep in model else model} |")
    print(f"| 1 process, 2 threads, {texts} texts (median of {len(ones)}) | {one:.1f} s |")
    print(f"| torchrun 2 ranks x 1 thread (median of {len(twos)}) | {two:.1f} s |")
    print(f"| speed-up (1 process / 2 ranks) | {one / two:.2f}x |")
    print(f"| speed-up of each pair | {', '.join(f'{a / b:.2f}x' for a, b in zip(ones, twos))} |")
    print(
        f"| encoding alone (run minus its rerun over the filled cache): 1 process / 2 ranks | "
        f"{encode_one:.1f} s / {encode_two:.1f} s = {encode_one / encode_two:.2f}x |"
    )
    print(f"| bytes each rank sends to gather 10,000 x 768 float32 (2 ranks) | {volume / 1e6:.1f} MB |")
    print(f"| measured CPU cost per text (encoding alone / texts, 1 process) | {per_item * 1e3:.2f} ms |")
    print(f"| measured metric cost per seed, N = 10,000 (xlr + backretrieval + corr) | {per_seed:.2f} s |")
    print(
        f"| SIGIR protocol on this CPU, one run after another | {models * datasets * (run_encode + run_metrics) / 3600:.1f} h |"
    )
    print(
        f"| SIGIR protocol on {gpus} GPUs: {waves} waves of runs, encoding {GPU_SPEEDUP:.0f}x faster (assumed) | "
        f"{waves * (run_encode / GPU_SPEEDUP + run_metrics) / 60:.1f} min |"
    )


if __name__ == "__main__":
    main()
