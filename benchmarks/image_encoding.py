"""Benchmark: image encoding on CPU, `efficientnet-lite0` and `hf-image-encoder`, against the plain forward pass.

Part 1, the forward pass alone (pixels prepared beforehand), on the real EfficientNet-Lite0 weights:
the package's own ``extract_features`` + mean pooling as the adapter ran it before (batches of 32
under ``torch.inference_mode()``), against each optimisation on its own and the combinations the
adapter can use (``fused``: batch norms and stride-1 padding folded, in-place ReLU6, channels-last,
``onnxruntime``: the package's network exported to ONNX). Each variant's
features are checked against the plain ones (max abs difference printed, must be under 1e-4).

Part 2, end to end: ``encode_images`` on JPEG-compressed photographs (decoded, resized,
cropped and normalised per batch), with preparation of the next batch overlapped with the
forward pass of the current one (``run_prefetched``) against the same steps one after the other.

Part 3, ``hf-image-encoder`` on a locally built, randomly initialised ResNet-50 (the real
architecture, ``ResNetConfig()`` defaults) and CLIP ViT-B/32 vision tower: the adapter's forward
against ``AutoModel``'s plain forward.

Every variant runs once per round, the rounds alternate the variants, and each ratio is the
median over rounds of (plain seconds / variant seconds) within the round, so that a machine
shared with other jobs slows both sides of a ratio alike.

    python benchmarks/image_encoding.py [--images 64] [--rounds 5] [--parts 1,2,3]
"""

from __future__ import annotations

import argparse
import copy
import io
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np

BATCH = 32
SLICE = 8  # a measured option the adapter does not take: batches run in slices of 8 images


def photographs(count: int) -> list[bytes]:
    """``count`` JPEG files made from the three real photographs the tests use (crops of varied size)."""
    import importlib.util

    from PIL import Image

    sources = [
        ("matplotlib", "mpl-data/sample_data/grace_hopper.jpg"),
        ("sklearn", "datasets/images/china.jpg"),
        ("sklearn", "datasets/images/flower.jpg"),
    ]
    images = []
    for module, relative in sources:
        with Image.open(Path(importlib.util.find_spec(module).origin).parent / relative) as image:
            images.append(image.convert("RGB"))
    rng, out = np.random.default_rng(0), []
    for i in range(count):
        image = images[i % len(images)]
        w, h = int(image.width * rng.uniform(0.6, 1.0)), int(image.height * rng.uniform(0.6, 1.0))
        left, top = int(rng.integers(0, image.width - w + 1)), int(rng.integers(0, image.height - h + 1))
        buffer = io.BytesIO()
        image.crop((left, top, left + w, top + h)).save(buffer, format="JPEG", quality=90)
        out.append(buffer.getvalue())
    return out


class Decoded:
    """A sequence that decodes its JPEG files on access, as a dataset of image files does."""

    def __init__(self, files: list[bytes]):
        self.files = files

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, index: int):
        from PIL import Image

        return Image.open(io.BytesIO(self.files[index])).convert("RGB")


def rounds(variants: dict[str, Callable[[], object]], count: int, reference: str) -> dict[str, tuple[float, float]]:
    """Per variant: (median seconds, median ratio reference / variant within a round)."""
    for run in variants.values():  # warm-up (oneDNN primitive creation, ONNX Runtime arenas)
        run()
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    for r in range(count):
        names = list(variants) if r % 2 == 0 else list(reversed(variants))
        for name in names:
            start = time.perf_counter()
            variants[name]()
            seconds[name].append(time.perf_counter() - start)
        print(f"  round {r + 1}: " + ", ".join(f"{name} {seconds[name][-1]:.2f}s" for name in variants), flush=True)
    return {
        name: (statistics.median(values), statistics.median(ref / own for ref, own in zip(seconds[reference], values)))
        for name, values in seconds.items()
    }


def table(results: dict[str, tuple[float, float]], images: int, reference: str, errors: dict[str, float]) -> None:
    print(f"\n| variant | images/s (median) | speed-up vs {reference} (median of per-round ratios) | max abs diff |")
    print("|---|---:|---:|---:|")
    for name, (seconds, ratio) in results.items():
        error = f"{errors[name]:.1e}" if name in errors else "-"
        print(f"| {name} | {images / seconds:.1f} | {ratio:.2f}x | {error} |")
    print()


def sliced(function: Callable, pixels, size: int):
    import torch

    return torch.cat([function(pixels[i : i + size]) for i in range(0, len(pixels), size)])


def efficientnet_forward(args: argparse.Namespace) -> None:
    """Part 1: the forward pass of each variant on the same pixels."""
    import torch

    from harness_models.packaged.efficientnet import SPEC, EfficientNetLite0, fused

    torch.manual_seed(0)
    adapter = EfficientNetLite0("efficientnet-lite0")
    adapter.ensure_loaded()
    net = adapter.net
    pixels = SPEC.batch([Decoded(photographs(args.images))[i] for i in range(args.images)])
    chunks = [pixels[i : i + BATCH] for i in range(0, len(pixels), BATCH)]

    def plain(x):
        return net.extract_features(x).mean(dim=(2, 3))

    channels_last = copy.deepcopy(net).to(memory_format=torch.channels_last)
    fast = fused(net)

    class Pooled(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x):
            return self.inner.extract_features(x).mean(dim=(2, 3))

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frozen = torch.jit.optimize_for_inference(
            torch.jit.freeze(torch.jit.trace(Pooled(copy.deepcopy(net)).eval(), chunks[0][:2]))
        )
    functions = {
        "plain (package forward, no_grad)": (torch.no_grad, plain),
        "inference_mode": (torch.inference_mode, plain),
        "channels-last": (
            torch.inference_mode,
            lambda x: channels_last.extract_features(x.contiguous(memory_format=torch.channels_last)).mean(dim=(2, 3)),
        ),
        "jit.freeze + optimize_for_inference": (torch.no_grad, frozen),
        f"plain, slices of {SLICE}": (torch.inference_mode, lambda x: sliced(plain, x, SLICE)),
        "fused: folded BN + padding, channels-last, in-place ReLU6 (backend=torch)": (torch.inference_mode, fast),
        f"fused, slices of {SLICE}": (torch.inference_mode, lambda x: sliced(fast, x, SLICE)),
    }
    try:
        ort = EfficientNetLite0("efficientnet-lite0", {"backend": "onnxruntime"}, batch_size=BATCH)
        ort.ensure_loaded()
        functions["onnxruntime (backend=onnxruntime, the default where installed)"] = (
            torch.inference_mode,
            ort.forward,
        )
        functions[f"onnxruntime, slices of {SLICE}"] = (torch.inference_mode, lambda x: sliced(ort.forward, x, SLICE))
    except Exception as exc:
        print(f"onnxruntime not measured: {exc}")

    reference = functions["plain (package forward, no_grad)"]
    with torch.no_grad():
        expected = torch.cat([plain(c) for c in chunks])
    errors = {}
    for name, (mode, function) in functions.items():
        with mode():
            errors[name] = float((torch.cat([function(c) for c in chunks]) - expected).abs().max())

    def runner(mode, function):
        def run():
            with mode():
                for chunk in chunks:
                    function(chunk)

        return run

    print(
        f"Part 1: EfficientNet-Lite0 forward, {args.images} images in batches of {BATCH}, "
        f"{torch.get_num_threads()} threads"
    )
    results = rounds(
        {name: runner(*pair) for name, pair in functions.items()}, args.rounds, "plain (package forward, no_grad)"
    )
    del reference
    table(results, args.images, "plain", errors)


def efficientnet_end_to_end(args: argparse.Namespace) -> None:
    """Part 2: decoding + preprocessing + forward, overlapped or one after the other."""
    import torch

    from harness_models.encoders.batching import length_sorted_batches, run_batches
    from harness_models.packaged.efficientnet import SPEC, EfficientNetLite0

    images = Decoded(photographs(args.images))
    adapter = EfficientNetLite0("efficientnet-lite0", batch_size=BATCH)
    adapter.ensure_loaded()

    def sequential():
        batches = length_sorted_batches([0] * len(images), BATCH)
        return run_batches(len(images), batches, lambda idx: adapter.features(SPEC.batch([images[i] for i in idx])))

    def plain():
        batches = length_sorted_batches([0] * len(images), BATCH)
        return run_batches(
            len(images),
            batches,
            lambda idx: adapter.net.extract_features(SPEC.batch([images[i] for i in idx])).mean(dim=(2, 3)),
        )

    def preparation_only():
        for start in range(0, len(images), BATCH):
            SPEC.batch([images[i] for i in range(start, min(len(images), start + BATCH))])

    expected = plain()
    errors = {
        "encode_images (prepare next batch in a thread)": float(np.abs(adapter.encode_images(images) - expected).max()),
        "the same steps one after the other": float(np.abs(sequential() - expected).max()),
    }
    print(
        f"Part 2: efficientnet-lite0 end to end, {args.images} JPEG photographs, batch {BATCH}, "
        f"{torch.get_num_threads()} threads"
    )
    results = rounds(
        {
            "plain (package forward, sequential)": plain,
            "the same steps one after the other": sequential,
            "encode_images (prepare next batch in a thread)": lambda: adapter.encode_images(images),
            "decoding + preprocessing alone": preparation_only,
        },
        args.rounds,
        "plain (package forward, sequential)",
    )
    table(results, args.images, "plain", errors)


def hf_image_encoders(args: argparse.Namespace) -> None:
    """Part 3: hf-image-encoder on a real-architecture ResNet-50 and CLIP ViT-B/32 vision tower (random weights)."""
    import torch
    from transformers import (
        AutoModel,
        CLIPImageProcessorPil,
        CLIPVisionConfig,
        CLIPVisionModelWithProjection,
        ConvNextImageProcessorPil,
        ResNetConfig,
        ResNetModel,
    )

    from harness_models.encoders.image import HFImageEncoder, image_vectors

    images = Decoded(photographs(args.images))
    pixels_for = {}
    with tempfile.TemporaryDirectory() as folder:
        torch.manual_seed(0)
        resnet = Path(folder, "resnet-50")
        model = ResNetModel(ResNetConfig()).eval()
        with torch.no_grad():  # BatchNorm statistics as a trained model has them (not 0 and 1)
            for module in model.modules():
                if isinstance(module, torch.nn.BatchNorm2d):
                    module.running_mean.uniform_(-0.1, 0.1)
                    module.running_var.uniform_(0.5, 1.5)
        model.save_pretrained(resnet)
        ConvNextImageProcessorPil(crop_pct=0.875, size={"shortest_edge": 224}).save_pretrained(resnet)
        clip = Path(folder, "clip-vit-b32")
        CLIPVisionModelWithProjection(CLIPVisionConfig(patch_size=32, projection_dim=512)).save_pretrained(clip)
        CLIPImageProcessorPil().save_pretrained(clip)
        for name, source in (("ResNet-50", resnet), ("CLIP ViT-B/32 vision", clip)):
            adapter = HFImageEncoder(name, {"pretrained": str(source)}, batch_size=BATCH)
            adapter.ensure_loaded()
            plain_model = AutoModel.from_pretrained(source).eval()
            pixels_for[name] = adapter.processor(images=[images[i] for i in range(len(images))], return_tensors="pt")[
                "pixel_values"
            ]
            pixels = pixels_for[name]
            chunks = [pixels[i : i + BATCH] for i in range(0, len(pixels), BATCH)]

            def plain(model=plain_model, chunks=chunks):
                with torch.inference_mode():
                    return torch.cat([image_vectors(model, c) for c in chunks])

            def ours(adapter=adapter, chunks=chunks):
                with torch.inference_mode():
                    return torch.cat([adapter.forward(c) for c in chunks])

            errors = {"hf-image-encoder forward": float((ours() - plain()).abs().max())}
            print(f"Part 3: {name}, forward, {args.images} images, batch {BATCH}")
            results = rounds(
                {"plain AutoModel forward (inference_mode)": plain, "hf-image-encoder forward": ours},
                args.rounds,
                "plain AutoModel forward (inference_mode)",
            )
            table(results, args.images, "plain", errors)
            print(f"Part 3: {name}, end to end (processor + forward), {args.images} JPEG photographs")

            def plain_end_to_end(model=plain_model, adapter=adapter):
                with torch.inference_mode():
                    for start in range(0, len(images), BATCH):
                        batch = [images[i] for i in range(start, min(len(images), start + BATCH))]
                        image_vectors(model, adapter.processor(images=batch, return_tensors="pt")["pixel_values"])

            results = rounds(
                {
                    "plain (processor, then AutoModel forward)": plain_end_to_end,
                    "hf-image-encoder encode_images": lambda adapter=adapter: adapter.encode_images(images),
                },
                args.rounds,
                "plain (processor, then AutoModel forward)",
            )
            table(results, args.images, "plain", {})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--parts", default="1,2,3")
    args = parser.parse_args()
    import os

    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores)")
    parts = {"1": efficientnet_forward, "2": efficientnet_end_to_end, "3": hf_image_encoders}
    for part in args.parts.split(","):
        parts[part](args)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
