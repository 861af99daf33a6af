"""Builders for the retrieval tests: tiny vision models, images, and small data folders in the raw layouts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

CAPTIONS = {
    "en": ["a red chair", "a blue table", "a green lamp", "a white shelf", "a black sofa", "a yellow rug"],
    "de": [
        "ein roter Stuhl",
        "ein blauer Tisch",
        "eine grüne Lampe",
        "ein weißes Regal",
        "ein schwarzes Sofa",
        "ein gelber Teppich",
    ],
    "fr": [
        "une chaise rouge",
        "une table bleue",
        "une lampe verte",
        "une étagère blanche",
        "un canapé noir",
        "un tapis jaune",
    ],
}


def write_images(folder: Path, count: int, seed: int = 0, size: tuple[int, int] = (40, 30)) -> list[str]:
    """``count`` PNG images of random colour blocks (modes RGB, L and RGBA mixed); returns their file names."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    names = []
    for i in range(count):
        pixels = rng.integers(0, 256, (size[1] // 10, size[0] // 10, 3), dtype=np.uint8).repeat(10, 0).repeat(10, 1)
        image = Image.fromarray(pixels).convert(("RGB", "L", "RGBA")[i % 3])
        names.append(f"img{i}.png")
        image.save(folder / names[-1])
    return names


def write_multi30k(folder: Path, images: Sequence[str] | None = None, split: str = "test_2016_flickr") -> Path:
    """A Multi30K-layout folder with the captions above (and an image list when names are given)."""
    folder.mkdir(parents=True, exist_ok=True)
    for lang, lines in CAPTIONS.items():
        (folder / f"{split}.{lang}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if images is not None:
        (folder / f"{split}.images.txt").write_text("\n".join(images) + "\n", encoding="utf-8")
    return folder


def write_ikea(
    folder: Path,
    split: str = "test",
    pair: str = "en.de",
    features: np.ndarray | None = None,
    images: Sequence[str] | None = None,
) -> Path:
    """An IKEA-layout folder (``<folder>/<pair>/``) with the captions above and 4-d image features."""
    src, tgt = pair.split(".")
    pair_folder = folder / pair
    pair_folder.mkdir(parents=True, exist_ok=True)
    for lang in (src, tgt):
        (pair_folder / f"{split}.{lang}").write_text(
            "\n".join(f"{split} {c}" for c in CAPTIONS[lang]) + "\n", encoding="utf-8"
        )
    names = images if images is not None else [f"{split}{i}.jpg" for i in range(len(CAPTIONS[src]))]
    (pair_folder / f"{split}.images.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
    if features is None:
        features = np.random.default_rng(len(split)).random((len(CAPTIONS[src]), 4)).astype(np.float32)
    np.save(pair_folder / f"{split}.image_features.npy", features)
    return folder


def tiny_resnet(folder: Path, seed: int = 0) -> Path:
    """A randomly initialised two-stage ResNet and a ConvNeXt-style image processor (resize 32, crop)."""
    import torch
    from transformers import ConvNextImageProcessorPil, ResNetConfig, ResNetModel

    config = ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], layer_type="basic", num_channels=3)
    torch.manual_seed(seed)
    ResNetModel(config).eval().save_pretrained(folder, safe_serialization=True)
    ConvNextImageProcessorPil(size={"shortest_edge": 32}).save_pretrained(folder)
    return folder


def tiny_clip(folder: Path, seed: int = 0) -> Path:
    """A randomly initialised CLIP (vision tower 32x32 inputs, projection 8) and its image processor."""
    import torch
    from transformers import CLIPConfig, CLIPImageProcessorPil, CLIPModel

    config = CLIPConfig(
        text_config={
            "hidden_size": 16,
            "intermediate_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "vocab_size": 64,
            "bos_token_id": 0,
            "eos_token_id": 1,
            "pad_token_id": 1,
        },
        vision_config={
            "hidden_size": 16,
            "intermediate_size": 32,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "image_size": 32,
            "patch_size": 8,
        },
        projection_dim=8,
    )
    torch.manual_seed(seed)
    CLIPModel(config).eval().save_pretrained(folder, safe_serialization=True)
    CLIPImageProcessorPil(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(folder)
    return folder


def bert_variants(folder: Path, texts: Sequence[str], specs: dict[str, dict[str, int]]) -> dict[str, Path]:
    """Several randomly initialised BERTs (``name -> {layers, hidden, seed}``) sharing one tokenizer trained on ``texts``."""
    import torch
    from tiny_models import train_wordpiece
    from transformers import BertConfig, BertModel

    tokenizer = train_wordpiece(texts, vocab_size=2000)
    out = {}
    for name, spec in specs.items():
        config = BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=spec["hidden"],
            num_hidden_layers=spec["layers"],
            num_attention_heads=2,
            intermediate_size=spec["hidden"] * 2,
            max_position_embeddings=256,
        )
        torch.manual_seed(spec.get("seed", 0))
        path = folder / name
        BertModel(config).eval().save_pretrained(path, safe_serialization=True)
        tokenizer.save_pretrained(path)
        out[name] = path
    return out
