"""Convert the authors' fairseq Gated Fusion checkpoint (Wu et al., ACL 2021) to a Gated Fusion folder.

The checkpoint (``checkpoint_best.pt`` of LividWo/Revisit-MMT, model ``gated``) is a pickle holding
``args`` (an ``argparse.Namespace``; newer fairseq: ``cfg["model"]``) and ``model`` (the state dict).
It is read with ``torch.load(weights_only=True)`` and ``argparse.Namespace`` as the only extra
allowed global: any other object type in the file is refused before anything is unpickled.

The text transformer is fairseq's post-norm ``transformer`` with sinusoidal positions, which is
what transformers' FSMT implements; its tokenizer is fairseq's pipeline (Moses, subword-nmt BPE,
the fairseq dictionary) and needs the training data's ``dict.<lang>.txt`` and BPE codes, which the
checkpoint does not hold. Keys are mapped as follows (docs/checkpoints.md):

- ``encoder.*`` / ``decoder.*`` (embeddings, layers) -> ``model.encoder.*`` / ``model.decoder.*``;
  ``decoder.embed_out`` (unshared output embedding) -> ``model.decoder.output_projection.weight``;
- ``encoder.dense.*``, ``encoder.gate_dense.*`` -> ``fusion.safetensors`` unchanged;
- dropped: ``*.version`` and ``*.embed_positions._float_tensor`` (bookkeeping buffers, the
  sinusoids are recomputed) and ``encoder.visual_features.weight`` (the frozen table of the
  training images' ResNet-50 features; the harness computes an image's feature itself);
- any other key is an error.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

ALLOWED_GLOBALS = ("argparse.Namespace",)
DROPPED = re.compile(
    r"^(encoder|decoder)\.(version|embed_positions\._float_tensor)$|^encoder\.visual_features\.weight$"
)
FUSION = ("encoder.dense.weight", "encoder.dense.bias", "encoder.gate_dense.weight", "encoder.gate_dense.bias")
LAYER = re.compile(
    r"^(encoder|decoder)\.layers\.\d+\.(self_attn|encoder_attn)\.(q|k|v|out)_proj\.(weight|bias)$"
    r"|^(encoder|decoder)\.layers\.\d+\.(self_attn_layer_norm|encoder_attn_layer_norm|final_layer_norm|fc1|fc2)"
    r"\.(weight|bias)$"
)
OLD_NORMS = {
    "encoder": {"0": "self_attn_layer_norm", "1": "final_layer_norm"},
    "decoder": {"0": "self_attn_layer_norm", "1": "encoder_attn_layer_norm", "2": "final_layer_norm"},
}
SPECIALS = ("<s>", "<pad>", "</s>", "<unk>")  # fairseq Dictionary ids 0-3
UNSUPPORTED = {
    "encoder_normalize_before": "pre-norm encoder layers",
    "decoder_normalize_before": "pre-norm decoder layers",
    "encoder_learned_pos": "learned encoder positions",
    "decoder_learned_pos": "learned decoder positions",
    "layernorm_embedding": "a layer norm on the embeddings",
    "no_token_positional_embeddings": "no positions",
    "adaptive_softmax_cutoff": "an adaptive softmax",
}


def read_checkpoint(path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The training arguments and the state dict of a fairseq checkpoint, read without full unpickling."""
    import torch

    file = Path(path)
    if not file.is_file():
        raise HarnessError(f"fairseq checkpoint {str(path)!r} not found")
    try:
        forbidden = sorted(set(torch.serialization.get_unsafe_globals_in_checkpoint(str(file))) - set(ALLOWED_GLOBALS))
    except Exception as exc:  # not a torch file at all
        raise HarnessError(f"{file}: not a PyTorch checkpoint ({type(exc).__name__}: {exc})") from None
    if forbidden:
        raise HarnessError(
            f"{file}: refusing to unpickle objects of {', '.join(forbidden)}; a fairseq checkpoint "
            f"needs only {', '.join(ALLOWED_GLOBALS)} besides tensors (see docs/checkpoints.md)"
        )
    try:
        with torch.serialization.safe_globals([argparse.Namespace]):
            checkpoint = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise HarnessError(f"{file}: cannot be read safely: {type(exc).__name__}: {str(exc).splitlines()[0]}") from None
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("model"), dict):
        raise HarnessError(f"{file}: not a fairseq checkpoint (no 'model' state dict)")
    return training_args(checkpoint, file), checkpoint["model"]


def training_args(checkpoint: dict[str, Any], file: Path) -> dict[str, Any]:
    """``args`` (fairseq <= 0.10) or ``cfg["model"]`` (later), as a dict."""
    found = checkpoint.get("args")
    if found is None and isinstance(checkpoint.get("cfg"), dict):
        found = checkpoint["cfg"].get("model")
    if isinstance(found, argparse.Namespace):
        return vars(found)
    if isinstance(found, dict):
        return dict(found)
    raise HarnessError(f"{file}: the checkpoint has no training arguments ('args' or 'cfg[\"model\"]')")


def split_state(state: dict[str, Any], args: dict[str, Any], file: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(FSMT state dict, fusion state dict); any key that is neither mapped nor dropped is an error."""
    missing = [key for key in FUSION if key not in state]
    if missing:
        raise HarnessError(f"{file}: not a Gated Fusion checkpoint (no {', '.join(missing)})")
    text: dict[str, Any] = {}
    unknown = []
    for key, value in state.items():
        key = _renamed_norm(key)
        if key in FUSION or DROPPED.match(key):
            continue
        if LAYER.match(key) or key in ("encoder.embed_tokens.weight", "decoder.embed_tokens.weight"):
            text[f"model.{key}"] = value
        elif key in ("decoder.embed_out", "decoder.output_projection.weight"):
            text["model.decoder.output_projection.weight"] = value
        else:
            unknown.append(key)
    if unknown:
        raise HarnessError(
            f"{file}: {len(unknown)} keys the converter does not know (e.g. {', '.join(sorted(unknown)[:5])}); "
            "they are not part of the Gated Fusion model of Wu et al. (2021)"
        )
    if "model.decoder.output_projection.weight" not in text:
        if not (args.get("share_decoder_input_output_embed") or args.get("share_all_embeddings")):
            raise HarnessError(f"{file}: no output embedding (decoder.embed_out) and the arguments do not share it")
        text["model.decoder.output_projection.weight"] = text["model.decoder.embed_tokens.weight"]
    return text, {key: state[key] for key in FUSION}


def _renamed_norm(key: str) -> str:
    """fairseq < 0.7 named layer norms ``layers.N.layer_norms.K``; fairseq's own upgrade renames them."""
    found = re.match(r"^(encoder|decoder)\.layers\.(\d+)\.layer_norms\.(\d)\.(weight|bias)$", key)
    if not found:
        return key
    side, layer, index, kind = found.groups()
    return f"{side}.layers.{layer}.{OLD_NORMS[side].get(index, 'layer_norms.' + index)}.{kind}"


def fsmt_config(args: dict[str, Any], text: dict[str, Any], file: Path) -> Any:
    """The FSMT configuration of the checkpoint's transformer, or an error naming what FSMT cannot express."""
    from transformers import FSMTConfig

    used = [what for name, what in UNSUPPORTED.items() if args.get(name)]
    if used:
        raise HarnessError(f"{file}: the model uses {', '.join(used)}, which the converted (FSMT) model cannot express")
    if args.get("encoder_embed_dim") != args.get("decoder_embed_dim"):
        raise HarnessError(
            f"{file}: encoder and decoder widths differ ({args.get('encoder_embed_dim')} and "
            f"{args.get('decoder_embed_dim')})"
        )
    layers = {
        side: 1 + max(int(k.split(".")[3]) for k in text if k.startswith(f"model.{side}.layers."))
        for side in ("encoder", "decoder")
    }
    return FSMTConfig(
        langs=[args["source_lang"], args["target_lang"]],
        src_vocab_size=int(text["model.encoder.embed_tokens.weight"].shape[0]),
        tgt_vocab_size=int(text["model.decoder.embed_tokens.weight"].shape[0]),
        d_model=int(args["encoder_embed_dim"]),
        activation_function=args.get("activation_fn", "relu"),
        encoder_layers=layers["encoder"],
        decoder_layers=layers["decoder"],
        encoder_ffn_dim=int(args["encoder_ffn_embed_dim"]),
        decoder_ffn_dim=int(args["decoder_ffn_embed_dim"]),
        encoder_attention_heads=int(args["encoder_attention_heads"]),
        decoder_attention_heads=int(args["decoder_attention_heads"]),
        max_position_embeddings=int(args.get("max_source_positions") or 1024),
        scale_embedding=not args.get("no_scale_embedding", False),
        tie_word_embeddings=bool(args.get("share_decoder_input_output_embed") or args.get("share_all_embeddings")),
        pad_token_id=1,
        bos_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=2,
    )


def read_dictionary(path: Path, size: int) -> dict[str, int]:
    """A fairseq ``dict.<lang>.txt`` as token -> id (the four specials first, ``madeupword`` padding up to ``size``)."""
    if not path.is_file():
        raise HarnessError(f"dictionary {path} not found (the fairseq data folder's dict.<lang>.txt)")
    vocab = {token: index for index, token in enumerate(SPECIALS)}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fields = line.rstrip("\n").removesuffix(" #fairseq:overwrite").rsplit(" ", 1)
        if len(fields) != 2 or not fields[1].lstrip("-").isdigit() or not fields[0]:
            raise HarnessError(f"{path}, line {number}: expected '<token> <count>', got {line!r}")
        vocab.setdefault(fields[0], len(vocab))
    if len(vocab) > size:
        raise HarnessError(f"{path}: {len(vocab)} entries, but the checkpoint's embeddings have {size} rows")
    while len(vocab) < size:  # fairseq pads the dictionary to a multiple of 8
        vocab[f"madeupword{len(vocab) - len(SPECIALS):04d}"] = len(vocab)
    return vocab


def fsmt_vocab(vocab: dict[str, int]) -> dict[str, int]:
    """fairseq pieces as FSMT's BPE names them: ``ab@@`` (word goes on) -> ``ab``, a word's last piece ``c`` -> ``c</w>``."""
    return {
        token if token in SPECIALS else (token[:-2] if token.endswith("@@") else token + "</w>"): index
        for token, index in vocab.items()
    }


def write_tokenizer(
    folder: Path, args: dict[str, Any], dictionaries: Path, codes: Path, sizes: tuple[int, int], lowercase: bool
) -> None:
    """FSMT tokenizer files: both vocabularies and the BPE merges (the codes without counts or a version line)."""
    src, tgt = args["source_lang"], args["target_lang"]
    vocabs = [read_dictionary(dictionaries / f"dict.{lang}.txt", size) for lang, size in zip((src, tgt), sizes)]
    if vocabs[0] != vocabs[1]:
        raise HarnessError(
            f"{dictionaries}: dict.{src}.txt and dict.{tgt}.txt differ; the converter needs the "
            "joined dictionary the authors trained with (--joined-dictionary)"
        )
    if not codes.is_file():
        raise HarnessError(f"BPE codes {codes} not found")
    merges = [
        " ".join(line.split()[:2])
        for line in codes.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#version")
    ]
    folder.mkdir(parents=True, exist_ok=True)
    for name, vocab in (("vocab-src.json", vocabs[0]), ("vocab-tgt.json", vocabs[1])):
        (folder / name).write_text(json.dumps(fsmt_vocab(vocab), ensure_ascii=False, indent=1), encoding="utf-8")
    (folder / "merges.txt").write_text("\n".join(merges) + "\n", encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "FSMTTokenizer",
                "langs": [src, tgt],
                "do_lower_case": lowercase,
                "model_max_length": 1024,
            },
            indent=1,
        ),
        encoding="utf-8",
    )


def convert(
    checkpoint: str | Path,
    out_dir: str | Path,
    dictionaries: str | Path,
    codes: str | Path,
    image_model: str = "microsoft/resnet-50",
    lowercase: bool = False,
) -> Path:
    """Write the Gated Fusion folder (``config.json``, ``text/`` FSMT model and tokenizer, ``fusion.safetensors``)."""
    import torch
    from safetensors.torch import save_file
    from transformers import FSMTForConditionalGeneration

    file, out = Path(checkpoint), Path(out_dir)
    args, state = read_checkpoint(file)
    text, fusion = split_state(state, args, file)
    config = fsmt_config(args, text, file)
    model = FSMTForConditionalGeneration(config)
    try:
        missing, unexpected = model.load_state_dict(text, strict=False)
    except RuntimeError as exc:
        raise HarnessError(f"{file}: the weights do not fit the model its arguments describe: {exc}") from None
    missing = [key for key in missing if ".embed_positions." not in key]  # sinusoids, recomputed
    if missing or unexpected:
        raise HarnessError(
            f"{file}: the weights do not fit the model its arguments describe (missing "
            f"{', '.join(missing[:5]) or 'none'}; unexpected {', '.join(unexpected[:5]) or 'none'})"
        )
    if out.exists() and any(out.iterdir()):
        raise HarnessError(f"output folder {out} exists and is not empty")
    model.eval().save_pretrained(out / "text")
    write_tokenizer(
        out / "text", args, Path(dictionaries), Path(codes), (config.src_vocab_size, config.tgt_vocab_size), lowercase
    )
    save_file(
        {key: value.detach().to(torch.float32).contiguous() for key, value in fusion.items()},
        str(out / "fusion.safetensors"),
    )
    (out / "config.json").write_text(
        json.dumps(
            {
                "model_type": "gated_fusion",
                "text_model": "text",
                "image_model": image_model,
                "fusion": "fusion.safetensors",
            },
            indent=1,
        )
    )
    return out
