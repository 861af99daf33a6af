"""Training a small Gated Fusion model on the default benchmark's captions, on the CPU, deterministically.

The result is an ordinary Gated Fusion folder (``config.json`` with ``model_type`` gated_fusion,
``text/`` a multilingual Marian with ``>>deu<<``-style target codes, ``resnet/`` a tiny
transformers ResNet with its ``preprocessor_config.json``, ``fusion.safetensors``), so it loads
exactly as a converted real checkpoint does. The recipe (docs/commute.md, "A model that uses
its images"):

1. Tokenizer: one SentencePiece unigram model (single thread) on every training text.
2. Vision: the ResNet plus a linear head is trained to name the object's shape (8 classes) from
   the rendered pixels of one-object scenes, prepared exactly as the adapter prepares an image
   (``ImageSpec`` from the same preprocessor configuration); the head is then dropped.
3. Translation: Marian (encoder, decoder) and the fusion are trained together by teacher
   forcing on the (frozen) ResNet's pooled features: the benchmark's captions (en -> de, fr,
   es, cs, every scene with its image) and the pronoun sentences of ``pronouns`` ("It is
   red." about one object), where only the image tells the gender the translation needs.

``torch.manual_seed`` before each stage, a fixed thread count, fixed data order: the same
weights on a given machine and torch version.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

CODES = {"de": ">>deu<<", "fr": ">>fra<<", "es": ">>spa<<", "cs": ">>ces<<"}
SPECIALS = {"<pad>": 0, "</s>": 1, "<unk>": 2}
IMAGE_SIDE = 64
SHAPE_CLASSES = 8
VISION_WIDTHS = [16, 32, 64]  # the tiny ResNet's stages; its pooled feature is the last width
PREPROCESSOR = {
    "image_processor_type": "ConvNextImageProcessor",
    "size": {"height": IMAGE_SIDE, "width": IMAGE_SIDE},
    "do_center_crop": False,
    "resample": 3,
    "image_mean": [0.5, 0.5, 0.5],
    "image_std": [0.5, 0.5, 0.5],
}


@dataclass(frozen=True)
class Recipe:
    """Sizes and budgets of the recipe (the default is the ``xling-shapes-mmt`` preset)."""

    captions: int = 600  # benchmark scenes whose captions are used (every target language)
    pronouns: int = 2400  # one-object scenes with a pronoun sentence (every target language)
    vision_images: int = 1600  # of the pronoun scenes, how many train the shape classifier
    vision_steps: int = 800
    translation_steps: int = 2000
    batch: int = 32
    d_model: int = 64
    layers: int = 2
    vocab: int = 600
    seed: int = 0
    threads: int = 1

    def key(self) -> dict[str, Any]:
        """What names the trained folder."""
        return asdict(self)


@dataclass
class Example:
    """One training pair: the image index, the source, the target language and the target."""

    image: int
    source: str
    lang: str
    target: str


Data = tuple[list[np.ndarray], list[int], list[Example]]


def training_data(
    recipe: Recipe,
    captions: Callable[[int, int], tuple[list[np.ndarray], list[dict[str, str]]]],
    pronouns: Callable[[int, int], list[tuple[np.ndarray, str, dict[str, str], int]]],
) -> Data:
    """Images (the pronoun scenes first), the shape class of each (-1 for caption scenes), and the examples."""
    images: list[np.ndarray] = []
    labels: list[int] = []
    examples: list[Example] = []
    for pixels, source, targets, shape in pronouns(recipe.pronouns, recipe.seed + 1):
        images.append(pixels)
        labels.append(shape)
        examples += [Example(len(images) - 1, source, lang, text) for lang, text in targets.items()]
    scenes, texts = captions(recipe.captions, recipe.seed)
    for pixels, text in zip(scenes, texts):
        images.append(pixels)
        labels.append(-1)
        examples += [Example(len(images) - 1, text["en"], lang, text[lang]) for lang in CODES]
    return images, labels, examples


def train(
    folder: Path,
    recipe: Recipe,
    data: Data,
    log: Callable[[str], None] = lambda _: None,
) -> None:
    """Write the trained Gated Fusion folder into ``folder`` (``data`` from ``training_data``)."""
    import torch

    from harness_models.token_embedders.hf import quiet_transformers

    previous = torch.get_num_threads()
    torch.set_num_threads(recipe.threads)
    try:
        with quiet_transformers():  # no third-party bars: ensure_built has said what happens
            images, labels, examples = data
            texts = [e.source for e in examples] + [e.target for e in examples]
            tokenizer = write_tokenizer(folder / "text", texts, recipe)
            count = min(recipe.vision_images, recipe.pronouns)
            vision = train_vision(folder / "resnet", images[:count], labels[:count], recipe, log)
            features = pooled_features(vision, images)
            train_translation(folder, tokenizer, features, examples, recipe, log)
    finally:
        torch.set_num_threads(previous)
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "gated_fusion",
                "text_model": "text",
                "image_model": "resnet",
                "fusion": "fusion.safetensors",
                "recipe": recipe.key(),
            },
            indent=1,
        )
    )


def write_tokenizer(folder: Path, texts: list[str], recipe: Recipe) -> Any:
    """A Marian tokenizer: one SentencePiece model for both sides, the four target codes, the pieces."""
    import io

    import sentencepiece as spm
    from transformers import MarianTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sorted(set(texts))),
        model_writer=proto,
        vocab_size=recipe.vocab,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        num_threads=1,
        minloglevel=2,
        bos_id=-1,
        pad_id=0,
        eos_id=1,
        unk_id=2,
    )
    for name in ("source.spm", "target.spm"):
        (folder / name).write_bytes(proto.getvalue())
    pieces = spm.SentencePieceProcessor(model_proto=proto.getvalue())
    vocab = {**SPECIALS, **{code: 3 + i for i, code in enumerate(CODES.values())}}
    for index in range(pieces.get_piece_size()):
        vocab.setdefault(pieces.id_to_piece(index), len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    tokenizer = MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"))
    tokenizer.save_pretrained(folder)
    return tokenizer


def pixel_batch(images: Sequence[np.ndarray]) -> Any:
    """Pixels prepared as the adapter prepares them (``ImageSpec`` of ``PREPROCESSOR``)."""
    from PIL import Image

    from harness_models.translation.images import ImageSpec

    return ImageSpec.from_config(PREPROCESSOR).batch([Image.fromarray(pixels) for pixels in images])


def train_vision(
    folder: Path, images: list[np.ndarray], labels: list[int], recipe: Recipe, log: Callable[[str], None]
) -> Any:
    """A tiny ResNet trained (with a linear head, then dropped) to name the shape; saved to ``folder``."""
    import torch
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(recipe.seed)
    config = ResNetConfig(embedding_size=16, hidden_sizes=VISION_WIDTHS, depths=[1, 1, 1], layer_type="basic")
    model = ResNetModel(config)
    head = torch.nn.Linear(VISION_WIDTHS[-1], SHAPE_CLASSES)
    optimiser = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=3e-3)
    targets = torch.tensor(labels)
    generator = torch.Generator().manual_seed(recipe.seed)
    model.train()
    for step in range(recipe.vision_steps):
        chosen = torch.randint(len(images), (recipe.batch,), generator=generator)
        pooled = model(pixel_values=pixel_batch([images[i] for i in chosen.tolist()])).pooler_output.flatten(1)
        loss = torch.nn.functional.cross_entropy(head(pooled), targets[chosen])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % 100 == 0 or step == recipe.vision_steps - 1:
            accuracy = (head(pooled).argmax(1) == targets[chosen]).float().mean().item()
            log(f"vision step {step}: loss {loss.item():.3f}, batch accuracy {accuracy:.2f}")
    model.eval()
    model.save_pretrained(folder)
    (folder / "preprocessor_config.json").write_text(json.dumps(PREPROCESSOR))
    return model


def pooled_features(vision: Any, images: list[np.ndarray]) -> Any:
    """The frozen ResNet's pooled feature of every image."""
    import torch

    rows = []
    with torch.inference_mode():
        for start in range(0, len(images), 128):
            rows.append(vision(pixel_values=pixel_batch(images[start : start + 128])).pooler_output.flatten(1))
    return torch.cat(rows)


def train_translation(
    folder: Path, tokenizer: Any, features: Any, examples: list[Example], recipe: Recipe, log: Callable[[str], None]
) -> None:
    """Marian and the fusion trained together by teacher forcing; saved as ``text/`` and ``fusion.safetensors``."""
    import torch
    from safetensors.torch import save_file
    from transformers import MarianConfig, MarianMTModel
    from transformers.modeling_outputs import BaseModelOutput

    from harness_models.translation.base import pad_batch
    from harness_models.translation.gated_fusion import FusionWeights, GateFusion

    torch.manual_seed(recipe.seed)
    config = MarianConfig(
        vocab_size=len(tokenizer),
        d_model=recipe.d_model,
        encoder_layers=recipe.layers,
        decoder_layers=recipe.layers,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=2 * recipe.d_model,
        decoder_ffn_dim=2 * recipe.d_model,
        max_position_embeddings=64,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        dropout=0.1,
    )
    model = MarianMTModel(config)
    fusion = GateFusion(recipe.d_model, features.shape[1])
    sources = [tokenizer(f"{CODES[e.lang]} {e.source}").input_ids for e in examples]
    labels = [tokenizer(text_target=e.target).input_ids for e in examples]
    optimiser = torch.optim.Adam([*model.parameters(), *fusion.parameters()], lr=2e-3)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, (step + 1) / 100) * max(0.05, 1 - step / recipe.translation_steps)
    )
    generator = torch.Generator().manual_seed(recipe.seed + 1)
    model.train()
    fusion.train()
    for step in range(recipe.translation_steps):
        chosen = torch.randint(len(examples), (recipe.batch,), generator=generator).tolist()
        ids, mask = pad_batch([sources[i] for i in chosen], 0)
        target, target_mask = pad_batch([labels[i] for i in chosen], 0)
        decoder_input = torch.cat([torch.zeros_like(target[:, :1]), target[:, :-1]], dim=1)
        hidden = model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
        fused = fusion(hidden, features[[examples[i].image for i in chosen]])
        logits = model(
            encoder_outputs=BaseModelOutput(last_hidden_state=fused),
            attention_mask=mask,
            decoder_input_ids=decoder_input,
            decoder_attention_mask=torch.cat([torch.ones_like(target_mask[:, :1]), target_mask[:, :-1]], dim=1),
            use_cache=False,
        ).logits
        loss = torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), target.masked_fill(target_mask == 0, -100).flatten()
        )
        optimiser.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([*model.parameters(), *fusion.parameters()], 1.0)
        optimiser.step()
        schedule.step()
        if step % 200 == 0 or step == recipe.translation_steps - 1:
            log(f"translation step {step}: loss {loss.item():.3f}")
    model.eval().save_pretrained(folder / "text")
    tokenizer.save_pretrained(folder / "text")
    state = {key: value.detach().contiguous() for key, value in FusionWeights(fusion).state_dict().items()}
    save_file(state, str(folder / "fusion.safetensors"))
