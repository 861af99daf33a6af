"""Benchmark: encoding throughput of ``hf-text-encoder`` against sentence-transformers' ``encode``.

Both encode the same texts (the IKEA en test+val descriptions and the Multi30K English test
captions from ../shared/data, or generated sentences when absent) with the same local model: a
randomly initialised 6-layer, 384-wide BERT (MiniLM-sized) with a WordPiece tokenizer trained
on the texts, saved as a sentence-transformers folder (Transformer, mean Pooling, Normalize).
Same batch size, same threads, CPU; the vectors are checked to agree; best of ``--repeats``.

    python benchmarks/retrieval_encoding.py [--batch-size 32] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
DATA = REPO.parent / "shared" / "data"


def texts() -> tuple[list[str], str]:
    files = [
        DATA / "ikea" / "en.de" / "test.en",
        DATA / "ikea" / "en.de" / "val.en",
        DATA / "multi30k" / "test_2016_flickr.en",
    ]
    if all(f.is_file() for f in files):
        return [
            line for f in files for line in f.read_text(encoding="utf-8").splitlines()
        ], "IKEA en test+val and Multi30K en test"
    rng = np.random.default_rng(0)
    words = [
        "the",
        "a",
        "chair",
        "table",
        "lamp",
        "red",
        "blue",
        "green",
        "with",
        "wooden",
        "legs",
        "and",
        "soft",
        "cushions",
        "for",
        "your",
        "living",
        "room",
    ]
    return [" ".join(rng.choice(words, rng.integers(3, 120))) for _ in range(2000)], "generated sentences"


def build_model(folder: Path, corpus: list[str]) -> Path:
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer
    from tiny_models import train_wordpiece
    from transformers import BertConfig, BertModel

    tokenizer = train_wordpiece(corpus, vocab_size=8000)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=384,
        num_hidden_layers=6,
        num_attention_heads=12,
        intermediate_size=1536,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    BertModel(config).eval().save_pretrained(folder / "hf", safe_serialization=True)
    tokenizer.save_pretrained(folder / "hf")
    transformer = Transformer(str(folder / "hf"), max_seq_length=256)
    modules = [transformer, Pooling(transformer.get_embedding_dimension(), pooling_mode="mean"), Normalize()]
    SentenceTransformer(modules=modules, device="cpu").save(str(folder / "st"))
    return folder / "st"


def best_times(functions: dict[str, object], repeats: int) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Best wall time of each function over ``repeats`` rounds; the functions alternate within a round."""
    best = {name: float("inf") for name in functions}
    results = {}
    for _ in range(repeats):
        for name, function in functions.items():
            start = time.perf_counter()
            results[name] = function()
            best[name] = min(best[name], time.perf_counter() - start)
    return best, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    import torch
    from sentence_transformers import SentenceTransformer

    from harness_models.encoders.text import HFTextEncoder

    corpus, source = texts()
    with tempfile.TemporaryDirectory() as tmp:
        folder = build_model(Path(tmp), corpus)
        reference = SentenceTransformer(str(folder), device="cpu")
        ours = HFTextEncoder("bench", {"pretrained": str(folder)}, batch_size=args.batch_size)
        ours.encode_texts(corpus[:64])  # load and warm up both
        reference.encode(corpus[:64], batch_size=args.batch_size)
        times, vectors = best_times(
            {
                "theirs": lambda: reference.encode(corpus, batch_size=args.batch_size, convert_to_numpy=True),
                "ours": lambda: ours.encode_texts(corpus),
            },
            args.repeats,
        )
    np.testing.assert_allclose(vectors["ours"], vectors["theirs"], atol=1e-4)
    theirs_time, ours_time = times["theirs"], times["ours"]
    print(
        f"\n{len(corpus)} texts ({source}), 6-layer 384-d BERT, mean pooling, max length 256, batch size "
        f"{args.batch_size}, {torch.get_num_threads()} threads, best of {args.repeats} alternating rounds\n"
    )
    print("| encoder | seconds | texts/s |")
    print("|---|---:|---:|")
    print(f"| sentence-transformers `encode` | {theirs_time:.2f} | {len(corpus) / theirs_time:,.0f} |")
    print(f"| xling-harness `hf-text-encoder` | {ours_time:.2f} | {len(corpus) / ours_time:,.0f} |")
    print(f"\nthroughput ratio (ours / sentence-transformers): {theirs_time / ours_time:.2f}")


if __name__ == "__main__":
    main()
