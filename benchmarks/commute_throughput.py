"""Benchmark: CoMMuTE scoring throughput of the batched scorers against a one-triple-at-a-time loop.

The peer is what the reference VGAMT evaluation does (``evaluate_commute``, batch size 1): for
every (source, image, translation) triple, tokenize, run the whole model with ``labels`` and
take the mean token loss. Ours is ``score_translations`` with ``--batch-size``: each distinct
(source, image) encoded once, its translations scored in one decoder batch, length-sorted.

The model is the same for both: a randomly initialised mBART-like model (``--d-model`` wide,
``--layers`` encoder and decoder layers, weights drawn with std 1/sqrt(d_model), a Unigram
vocabulary trained on the text), once
text-only (``seq2seq``) and once as VGAMT (CLIP image token, adapters; stand-in images). The
triples are the four TC triples of each tuple of CoMMuTE en-fr from ../shared/data (synthetic
sentences when absent). CPU, same threads; per-token log-probabilities are checked to agree;
best of ``--repeats``.

    python benchmarks/commute_throughput.py [--batch-size 32] [--repeats 3]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
DATA = REPO.parent / "shared" / "data" / "commute"

from commute import mmt_builders as build  # noqa: E402

from harness.adapters.cached_model import image_content_key  # noqa: E402
from harness.adapters.capabilities import ScoreRequest  # noqa: E402
from harness_models.translation import vgamt_modules  # noqa: E402
from harness_models.translation.seq2seq import Seq2SeqScorer  # noqa: E402
from harness_models.translation.vgamt import VgamtScorer  # noqa: E402


def tuples() -> tuple[list[tuple[str, str, str, str, str]], str]:
    """(source, t^a, t^b, image a, image b) per tuple, and where they come from."""
    folder = DATA / "en-fr"
    if folder.is_dir():
        lines = {
            name: (folder / name).read_text(encoding="utf-8").split("\n")
            for name in ("src.en", "correct.fr", "img.order")
        }
        rows = [
            (
                lines["src.en"][i],
                lines["correct.fr"][i],
                lines["correct.fr"][i + 1],
                lines["img.order"][i],
                lines["img.order"][i + 1],
            )
            for i in range(0, len(lines["src.en"]) - 1, 2)
        ]
        return rows, "CoMMuTE en-fr (154 tuples)"
    rng = np.random.default_rng(0)
    words = " ".join(build.CORPUS).split()
    rows = []
    for j in range(154):
        source, a, b = (" ".join(rng.choice(words, size=int(rng.integers(6, 14)))) for _ in range(3))
        rows.append((source, a, b, f"{j}a.png", f"{j}b.png"))
    return rows, "generated sentences (154 tuples; ../shared/data absent)"


def triples(rows, images) -> list[ScoreRequest]:
    """The TC triples: each image with both translations."""
    keys = {name: image_content_key(image) for name, image in images.items()}
    return [
        ScoreRequest(source, target, images[name], keys[name], "en", "fr")
        for source, t_a, t_b, image_a, image_b in rows
        for name in (image_a, image_b)
        for target in (t_a, t_b)
    ]


def reference_loop(scorer, requests, multimodal: bool) -> list[float]:
    """One triple at a time, as evaluate_commute: full forward with labels, mean token loss."""
    tokenizer, model = scorer.tokenizer, scorer.model
    tokenizer.src_lang, tokenizer.tgt_lang = "en_XX", "fr_XX"
    losses = []
    with torch.inference_mode():
        for request in requests:
            source = tokenizer(request.source, return_tensors="pt")
            target = tokenizer(text_target=request.target, return_tensors="pt").input_ids
            if multimodal:  # VGAMT: image token in the encoder; decoder inputs [lang] x, labels x </s>
                features = scorer.vision_features(scorer.image_spec.batch([request.image]))
                hidden = vgamt_modules.encode(model, source.input_ids, source.attention_mask, features)
                logits = model(
                    encoder_outputs=(hidden,), attention_mask=source.attention_mask, decoder_input_ids=target[:, :-1]
                ).logits
                labels = target[:, 1:]
            else:  # mBART-50 text-only: labels [lang] x </s>, the model shifts them
                logits = model(**source, labels=target).logits
                labels = target
            logprobs = torch.log_softmax(logits[0], -1)[torch.arange(labels.shape[1]), labels[0]]
            losses.append(float(-(logprobs[1:] if not multimodal else logprobs).mean()))
    return losses


def best_time(function, repeats: int) -> tuple[float, object]:
    """The fastest of ``repeats`` runs and the last result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--d-model", type=int, default=256)
    parser.add_argument("--layers", type=int, default=3)
    args = parser.parse_args()
    rows, source = tuples()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "vgamt"
        texts = [text for row in rows for text in row[:3]] + build.CORPUS
        sizes = {
            "d_model": args.d_model,
            "encoder_layers": args.layers,
            "decoder_layers": args.layers,
            "encoder_attention_heads": 4,
            "decoder_attention_heads": 4,
            "encoder_ffn_dim": 4 * args.d_model,
            "decoder_ffn_dim": 4 * args.d_model,
            "init_std": args.d_model**-0.5,
        }
        build.tiny_mbart50(folder / "mbart", texts, vocab_size=4000, **sizes)
        build.tiny_vgamt(folder)
        names = sorted({name for row in rows for name in row[3:]})
        build.stand_in_images(Path(tmp) / "images", names, size=48)
        from PIL import Image

        images = {name: Image.open(Path(tmp) / "images" / name).convert("RGB") for name in names}
        requests = triples(rows, images)
        table = []
        for label, scorer, multimodal in (
            (
                "mBART-like, text-only (seq2seq)",
                Seq2SeqScorer("m", {"pretrained": str(folder / "mbart")}, batch_size=args.batch_size),
                False,
            ),
            (
                "VGAMT (image token + adapters)",
                VgamtScorer("v", {"pretrained": str(folder)}, batch_size=args.batch_size),
                True,
            ),
        ):
            scorer.ensure_loaded()
            ours_time, ours = best_time(partial(scorer.score_translations, requests), args.repeats)
            peer_time, peer = best_time(partial(reference_loop, scorer, requests, multimodal), args.repeats)
            gap = max(abs(float(-np.mean(o)) - p) for o, p in zip(ours, peer))
            table.append((label, len(requests) / ours_time, len(requests) / peer_time, peer_time / ours_time, gap))
    print(
        f"CoMMuTE scoring throughput, {len(requests)} TC triples from {source}; mBART-like d_model={args.d_model}, "
        f"{args.layers}+{args.layers} layers, vocabulary {scorer.vocab_size}; CPU threads {torch.get_num_threads()}; "
        f"batch size {args.batch_size}; best of {args.repeats}\n"
    )
    print(
        "| model | batched (triples/s) | one at a time, as VGAMT's evaluation (triples/s) | speed-up | max |mean log-prob gap| |"
    )
    print("|---|---:|---:|---:|---:|")
    for label, ours, peer, ratio, gap in table:
        print(f"| {label} | {ours:.1f} | {peer:.1f} | {ratio:.1f}x | {gap:.1e} |")


if __name__ == "__main__":
    main()
