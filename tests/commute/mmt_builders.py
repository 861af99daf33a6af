"""Tiny translation models with real architectures and freshly trained tokenizers, saved to folders.

Everything loads back through ``from_pretrained`` on the folder, the path a Hub id takes.
Weights are random (seeded). Also: stand-in images named as in a CoMMuTE ``img.order``, and a small CoMMuTE folder.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterable
from pathlib import Path

import numpy as np

CORPUS = [
    "a man rides a bike down the street",
    "We'll have to get rid of that mole.",
    "He finally made it to the bank.",
    "un homme fait du vélo dans la rue",
    "Il va falloir enlever ce grain de beauté.",
    "Il a réussi à aller à la banque.",
    "ein Mann fährt mit dem Fahrrad die Straße hinunter",
    "Wir müssen diesen Maulwurf loswerden.",
    "muž jede na kole po ulici",
    "Musíme se zbavit toho krtka.",
    "two dogs play in the snow",
    "deux chiens jouent dans la neige",
    "zwei Hunde spielen im Schnee",
    "la taupe, la plante, l'usine, la rive",
]
SMALL = {
    "d_model": 32,
    "encoder_layers": 2,
    "decoder_layers": 2,
    "encoder_attention_heads": 2,
    "decoder_attention_heads": 2,
    "encoder_ffn_dim": 64,
    "decoder_ffn_dim": 64,
    "max_position_embeddings": 256,
}


def unigram_vocab(texts: Iterable[str], size: int = 300) -> list[tuple[str, float]]:
    """A SentencePiece Unigram vocabulary (``<unk>``, ``<s>``, ``</s>`` first) trained on ``texts``.

    SentencePiece's trainer gives the same pieces, order and scores in every process; tokenizers'
    ``UnigramTrainer`` does not (its order and scores change from run to run), which made every model
    built on it a different model, and a property such as "no two translations tie" hold only by luck.
    """
    import sentencepiece as spm

    proto = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(texts)),
        model_writer=proto,
        vocab_size=size,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        num_threads=1,
        minloglevel=2,
        unk_id=0,
        bos_id=1,
        eos_id=2,
        pad_id=-1,
    )
    pieces = spm.SentencePieceProcessor(model_proto=proto.getvalue())
    return [(pieces.id_to_piece(index), pieces.get_score(index)) for index in range(pieces.get_piece_size())]


def tiny_mbart50(
    folder: str | Path, texts: Iterable[str] = CORPUS, seed: int = 0, vocab_size: int = 300, **overrides: float
) -> Path:
    """An mBART-50 tokenizer (Unigram, all mBART-50 language codes) and a random MBartForConditionalGeneration.

    ``overrides`` replace entries of the small default configuration (``d_model``, ``encoder_layers``,
    ``init_std``, ...); the large default ``init_std`` makes a tiny model's predictions far from uniform.
    """
    import torch
    from transformers import MBart50Tokenizer, MBartConfig, MBartForConditionalGeneration

    folder = Path(folder)
    tokenizer = MBart50Tokenizer(vocab=unigram_vocab(texts, vocab_size), src_lang="en_XX", tgt_lang="fr_XX")
    config = MBartConfig(
        vocab_size=len(tokenizer),
        scale_embedding=True,
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        **{**SMALL, "init_std": 0.3, **overrides},
    )
    torch.manual_seed(seed)
    MBartForConditionalGeneration(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def sentencepiece_files(
    folder: Path, texts: Iterable[str], specials: dict[str, int], names: Iterable[str]
) -> dict[str, int]:
    """Train a small SentencePiece Unigram model on ``texts``, write it under each of ``names`` in ``folder``,
    and write ``vocab.json``: the ``specials`` at their ids, then the model's pieces. Returns that vocabulary."""
    import sentencepiece as spm

    folder.mkdir(parents=True, exist_ok=True)
    proto = io.BytesIO()
    ids = {"<s>": "bos_id", "<pad>": "pad_id", "</s>": "eos_id", "<unk>": "unk_id"}
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(list(texts) * 3),
        model_writer=proto,
        vocab_size=120,
        model_type="unigram",
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
        **{option: specials.get(token, -1) for token, option in ids.items()},
    )
    for name in names:
        (folder / name).write_bytes(proto.getvalue())
    pieces = spm.SentencePieceProcessor(model_proto=proto.getvalue())
    vocab = dict(specials)
    for index in range(pieces.get_piece_size()):
        vocab.setdefault(pieces.id_to_piece(index), len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab))
    return vocab


def tiny_marian(folder: str | Path, texts: Iterable[str] = CORPUS, seed: int = 0) -> Path:
    """A Marian tokenizer (two SentencePiece models trained here) and a random MarianMTModel."""
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    folder = Path(folder)
    vocab = sentencepiece_files(folder, texts, {"<pad>": 0, "</s>": 1, "<unk>": 2}, ("source.spm", "target.spm"))
    tokenizer = MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"))
    config = MarianConfig(
        vocab_size=len(vocab), pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, init_std=0.3, **SMALL
    )
    torch.manual_seed(seed)
    MarianMTModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_m2m100(folder: str | Path, texts: Iterable[str] = CORPUS, seed: int = 0) -> Path:
    """An M2M100 tokenizer (a SentencePiece model trained here, ``__fr__``-style codes) and a random M2M100 model."""
    import torch
    from transformers import M2M100Config, M2M100ForConditionalGeneration, M2M100Tokenizer

    folder = Path(folder)
    sentencepiece_files(folder, texts, {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}, ("sentencepiece.bpe.model",))
    tokenizer = M2M100Tokenizer(
        str(folder / "vocab.json"), str(folder / "sentencepiece.bpe.model"), src_lang="en", tgt_lang="fr"
    )
    size = max(tokenizer.lang_token_to_id.values()) + 1 + tokenizer.num_madeup_words
    config = M2M100Config(
        vocab_size=size, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2, init_std=0.3, **SMALL
    )
    torch.manual_seed(seed)
    M2M100ForConditionalGeneration(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_nllb(folder: str | Path, texts: Iterable[str] = CORPUS, seed: int = 0) -> Path:
    """An NLLB tokenizer (BPE trained here, the FLORES-200 codes) and a random M2M100 model."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import M2M100Config, M2M100ForConditionalGeneration, NllbTokenizer

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.Metaspace()
    bpe.train_from_iterator(
        list(texts),
        trainers.BpeTrainer(vocab_size=200, show_progress=False, special_tokens=["<s>", "<pad>", "</s>", "<unk>"]),
    )
    model = json.loads(bpe.to_str())["model"]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in model["merges"]]
    tokenizer = NllbTokenizer(vocab=model["vocab"], merges=merges, src_lang="eng_Latn", tgt_lang="fra_Latn")
    config = M2M100Config(
        vocab_size=len(tokenizer),
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
        scale_embedding=True,
        **SMALL,
    )
    torch.manual_seed(seed)
    M2M100ForConditionalGeneration(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return Path(folder)


def tiny_clip(folder: str | Path, seed: int = 0, size: int = 32, projection_dim: int = 16) -> Path:
    """A random CLIPVisionModelWithProjection and a CLIP preprocessor configuration for ``size`` pixels."""
    import torch
    from transformers import CLIPVisionConfig, CLIPVisionModelWithProjection

    folder = Path(folder)
    config = CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        image_size=size,
        patch_size=8,
        projection_dim=projection_dim,
    )
    torch.manual_seed(seed)
    CLIPVisionModelWithProjection(config).eval().save_pretrained(folder)
    processor = {
        "image_processor_type": "CLIPImageProcessor",
        "size": {"shortest_edge": size},
        "crop_size": {"height": size, "width": size},
        "do_center_crop": True,
        "resample": 3,
        "image_mean": [0.48145466, 0.4578275, 0.40821073],
        "image_std": [0.26862954, 0.26130258, 0.27577711],
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(processor))
    return folder


def tiny_resnet(folder: str | Path, seed: int = 0, size: int = 32) -> Path:
    """A random ResNetModel (pooled output 32-d) with a ResNet-50-style preprocessor (crop_pct 0.875)."""
    import torch
    from transformers import ResNetConfig, ResNetModel

    folder = Path(folder)
    config = ResNetConfig(embedding_size=8, hidden_sizes=[16, 32], depths=[1, 1], layer_type="basic")
    torch.manual_seed(seed)
    ResNetModel(config).eval().save_pretrained(folder)
    processor = {
        "image_processor_type": "ConvNextImageProcessor",
        "size": {"shortest_edge": size},
        "crop_pct": 0.875,
        "resample": 3,
        "image_mean": [0.485, 0.456, 0.406],
        "image_std": [0.229, 0.224, 0.225],
    }
    (folder / "preprocessor_config.json").write_text(json.dumps(processor))
    return folder


def vgamt_state(mbart_folder: Path, clip_dim: int, adapters: bool, seed: int) -> dict:
    """The state dict of a random VGAMT on the mBART in ``mbart_folder`` (image modules made strong)."""
    import torch
    from transformers import MBartForConditionalGeneration

    from harness_models.translation import vgamt_modules

    model = MBartForConditionalGeneration.from_pretrained(mbart_folder)
    vgamt_modules.install(model, clip_dim, model.config.d_model // 8 if adapters else None)
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "img" in name or "adapters" in name:
                parameter.normal_(0.0, 0.2)
    return {key: value.clone() for key, value in model.state_dict().items()}


def region_branch(d_model: int, trained: bool, seed: int = 0) -> dict:
    """The MDETR region branch as the authors' encoder holds it (``proj_reg_img`` from 64-d region features,
    ``region_encoder`` from 4 box coordinates, ``layer_norm_reg_img``): at PyTorch's initialisation (LayerNorm
    weight 1, bias 0) as in a CLIP-only checkpoint, or ``trained`` (the LayerNorm moved)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    prefix = "model.encoder."
    branch = {
        f"{prefix}proj_reg_img.linear.weight": torch.randn(d_model, 64, generator=generator) * 0.1,
        f"{prefix}proj_reg_img.linear.bias": torch.randn(d_model, generator=generator) * 0.1,
        f"{prefix}region_encoder.linear.weight": torch.randn(d_model, 4, generator=generator) * 0.1,
        f"{prefix}region_encoder.linear.bias": torch.randn(d_model, generator=generator) * 0.1,
        f"{prefix}layer_norm_reg_img.weight": torch.ones(d_model),
        f"{prefix}layer_norm_reg_img.bias": torch.zeros(d_model),
    }
    if trained:
        branch[f"{prefix}layer_norm_reg_img.bias"][0] = 0.01
    return branch


def tiny_vgamt(folder: str | Path, seed: int = 0, adapters: bool = True, checkpoint: str = "vgamt.pth") -> Path:
    """A VGAMT folder: ``mbart/`` (kept if already there), ``clip/``, the checkpoint (authors' ``{"model": ...}``
    .pth or .safetensors) and config.json."""
    import torch

    folder = Path(folder)
    if not (folder / "mbart").is_dir():
        tiny_mbart50(folder / "mbart", seed=seed)
    tiny_clip(folder / "clip", seed=seed)
    state = vgamt_state(folder / "mbart", 16, adapters, seed)
    if checkpoint.endswith(".safetensors"):
        from safetensors.torch import save_file

        save_file(state, str(folder / checkpoint))
    else:
        torch.save(
            {"model": state, "epoch": 3, "n_total_iter": 10, "best_metrics": {"valid_mt_bleu": 1.0}},
            folder / checkpoint,
        )
    (folder / "config.json").write_text(
        json.dumps({"model_type": "vgamt", "mbart": "mbart", "clip": "clip", "checkpoint": checkpoint})
    )
    return folder


def stand_in_images(folder: str | Path, names: Iterable[str], size: int = 40) -> Path:
    """Small distinct RGB images, one per name (content seeded by the name), saved as named."""
    from PIL import Image

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in dict.fromkeys(names):
        seed = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
        pixels = np.random.default_rng(seed).integers(0, 256, (size, size + 8, 3), dtype=np.uint8)
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(pixels).save(path, format="PNG" if name.lower().endswith(".png") else "JPEG")
    return folder


def tiny_gated_fusion(folder: str | Path, text_model: Path, seed: int = 0) -> Path:
    """A Gated Fusion folder: the text model referenced by path, ``resnet/``, ``fusion.safetensors``, config.json."""
    import torch
    from safetensors.torch import save_file
    from transformers import AutoConfig

    folder = Path(folder)
    tiny_resnet(folder / "resnet", seed=seed)
    d_model = AutoConfig.from_pretrained(text_model).d_model
    generator = torch.Generator().manual_seed(seed)
    fusion = {
        "encoder.dense.weight": torch.randn(d_model, 32, generator=generator),
        "encoder.dense.bias": torch.randn(d_model, generator=generator),
        "encoder.gate_dense.weight": torch.randn(d_model, 2 * d_model, generator=generator) * 0.3,
        "encoder.gate_dense.bias": torch.zeros(d_model),
    }
    save_file(fusion, str(folder / "fusion.safetensors"))
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "gated_fusion",
                "text_model": str(text_model),
                "image_model": "resnet",
                "fusion": "fusion.safetensors",
            }
        )
    )
    return folder


def tiny_cliptrans(folder: str | Path, mbart: Path, clip: Path, seed: int = 0, prefix_length: int = 3) -> Path:
    """A CLIP-Trans folder: checkpoint with ``adapter.hidden.*`` and ``mbart.*`` keys, parts referenced by path."""
    import torch
    from safetensors.torch import save_file
    from transformers import MBartForConditionalGeneration

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model = MBartForConditionalGeneration.from_pretrained(mbart)
    d_model = model.config.d_model
    generator = torch.Generator().manual_seed(seed)
    state = {f"mbart.{key}": value.clone() for key, value in model.state_dict().items()}
    state.update(
        {
            "adapter.hidden.0.weight": torch.randn(prefix_length * d_model, 16, generator=generator),
            "adapter.hidden.0.bias": torch.zeros(prefix_length * d_model),
            "adapter.hidden.1.weight": torch.tensor([0.25]),
        }
    )
    save_file(state, str(folder / "cliptrans.safetensors"))
    (folder / "config.json").write_text(
        json.dumps(
            {"model_type": "cliptrans", "mbart": str(mbart), "clip": str(clip), "checkpoint": "cliptrans.safetensors"}
        )
    )
    return folder


def tiny_gpt2(folder: str | Path, texts: Iterable[str] = CORPUS, seed: int = 0) -> Path:
    """A byte-level BPE tokenizer trained here and a random GPT2LMHeadModel."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    folder = Path(folder)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        list(texts), vocab_size=400, min_frequency=1, special_tokens=["<|endoftext|>"], show_progress=False
    )
    tokenizer = GPT2TokenizerFast(
        tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", bos_token="<|endoftext|>", unk_token="<|endoftext|>"
    )
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=256,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.eos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        initializer_range=0.3,
    )
    torch.manual_seed(seed)
    GPT2LMHeadModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


MINI = [  # (source, correct, incorrect, image) per line; tuple 2 is not an exact swap, as in en-fr
    (
        "He finally made it to the bank.",
        "Il a réussi à atteindre la rive.",
        "Il a réussi à aller à la banque.",
        "rive.jpg",
    ),
    (
        "He finally made it to the bank.",
        "Il a réussi à aller à la banque.",
        "Il a réussi à atteindre la rive.",
        "banque.png",
    ),
    ("Don't eat the bones!", "Ne mange pas les os !", "Ne mange pas les arêtes !", "os.jpeg"),
    ("Don't eat the bones!", "Ne mange pas les arêtes", "Ne mange pas les os !", "aretes.jpg"),
    (
        "We'll have to get rid of that mole.",
        "Il va falloir enlever ce grain de beauté.",
        "Il va falloir se débarasser de cette taupe.",
        "grain.jpg",
    ),
    (
        "We'll have to get rid of that mole.",
        "Il va falloir se débarasser de cette taupe.",
        "Il va falloir enlever ce grain de beauté.",
        "taupe.jpg",
    ),
]


def write_commute(folder: Path, lines=MINI, lang: str = "fr") -> Path:
    """A CoMMuTE folder with ``en-<lang>/`` in the original layout (last line without a newline)."""
    pair = folder / f"en-{lang}"
    pair.mkdir(parents=True, exist_ok=True)
    for index, name in enumerate(("src.en", f"correct.{lang}", f"incorrect.{lang}", "img.order")):
        (pair / name).write_text("\n".join(line[index] for line in lines), encoding="utf-8")
    return folder
