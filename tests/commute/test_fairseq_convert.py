"""``harness convert gated-fusion``: the authors' fairseq checkpoint becomes a Gated Fusion folder that scores
exactly as the fairseq model computes (a reference forward pass written out here), and unsafe files are refused."""

from __future__ import annotations

import argparse
import math
import os
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from commute import mmt_builders as build

from harness.adapters.capabilities import ScoreRequest
from harness.cli import main
from harness.errors import HarnessError
from harness_models.translation.fairseq_gated import convert, fsmt_vocab, read_dictionary
from harness_models.translation.gated_fusion import GatedFusionScorer

D, FFN, HEADS, IMAGE_DIM = 16, 32, 2, 32  # the tiny ResNet's pooled feature is 32-d
# A joined fairseq dictionary: whole words, and "banque" split as ban@@ que (no merge joins them).
WORDS = [
    "il",
    "a",
    "atteint",
    "la",
    "rive",
    "ban@@",
    "que",
    ".",
    "the",
    "he",
    "made",
    "it",
    "to",
    "bank",
    "aller",
    "à",
    "l&apos;",
    "usine",
]  # Moses (fr) splits "l'usine" into l&apos; usine, Moses (en) into l &apos;usine


def merges_for(word: str) -> list[str]:
    """subword-nmt merges building ``word`` (the last character carries ``</w>``) from its characters."""
    symbols = [*word[:-1], word[-1] + "</w>"]
    merged, out = symbols[0], []
    for symbol in symbols[1:]:
        out.append(f"{merged} {symbol}")
        merged += symbol
    return out


def write_data(folder: Path) -> tuple[Path, Path]:
    """dict.en.txt / dict.fr.txt (identical, joined) and the BPE codes."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = "\n".join(f"{word} {100 - i}" for i, word in enumerate(WORDS)) + "\n"
    for lang in ("en", "fr"):
        (folder / f"dict.{lang}.txt").write_text(lines, encoding="utf-8")
    merges = ["b a", "ba n", "q u", "qu e</w>"]
    for word in WORDS:
        if not word.endswith("@@") and word not in ("que",) and len(word) > 1:
            merges += [m for m in merges_for(word) if m not in merges]
    codes = folder / "bpecodes"
    codes.write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")
    return folder, codes


def namespace(**overrides) -> argparse.Namespace:
    """The training arguments as fairseq's ``gated`` model records them (``gated_tiny``, shared embeddings)."""
    values = dict(
        arch="gated_tiny",
        task="mmt",
        source_lang="en",
        target_lang="fr",
        encoder_embed_dim=D,
        decoder_embed_dim=D,
        encoder_ffn_embed_dim=FFN,
        decoder_ffn_embed_dim=FFN,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=HEADS,
        decoder_attention_heads=HEADS,
        encoder_normalize_before=False,
        decoder_normalize_before=False,
        encoder_learned_pos=False,
        decoder_learned_pos=False,
        share_all_embeddings=True,
        share_decoder_input_output_embed=True,
        no_scale_embedding=False,
        layernorm_embedding=False,
        activation_fn="relu",
        dropout=0.3,
        max_source_positions=64,
        max_target_positions=64,
        adaptive_softmax_cutoff=None,
        no_token_positional_embeddings=False,
        visual_feature_file="resnet50-avgpool.npy",
        save_dir="ckpt",
    )
    values.update(overrides)
    return argparse.Namespace(**values)


def fairseq_state(seed: int = 0) -> dict[str, torch.Tensor]:
    """A random state dict with the key names of the authors' fairseq GatedModel (layers, fusion, buffers)."""
    g = torch.Generator().manual_seed(seed)
    vocab = 4 + len(WORDS) + (-(4 + len(WORDS)) % 8)  # fairseq pads the dictionary to a multiple of 8

    def rand(*shape, scale=0.3):
        return torch.randn(*shape, generator=g) * scale

    embed = rand(vocab, D, scale=0.5)
    embed[1] = 0  # padding row
    state = {
        "encoder.version": torch.tensor([3.0]),
        "decoder.version": torch.tensor([3.0]),
        "encoder.embed_tokens.weight": embed,
        "decoder.embed_tokens.weight": embed,
        "encoder.embed_positions._float_tensor": torch.zeros(1),
        "decoder.embed_positions._float_tensor": torch.zeros(1),
        "encoder.visual_features.weight": rand(5, IMAGE_DIM),
        "encoder.dense.weight": rand(D, IMAGE_DIM),
        "encoder.dense.bias": rand(D),
        "encoder.gate_dense.weight": rand(D, 2 * D),
        "encoder.gate_dense.bias": rand(D),
    }
    for side, attentions in (("encoder", ("self_attn",)), ("decoder", ("self_attn", "encoder_attn"))):
        for layer in range(2):
            prefix = f"{side}.layers.{layer}."
            for attention in attentions:
                for proj in ("q", "k", "v", "out"):
                    state[f"{prefix}{attention}.{proj}_proj.weight"] = rand(D, D)
                    state[f"{prefix}{attention}.{proj}_proj.bias"] = rand(D, scale=0.1)
                state[f"{prefix}{attention}_layer_norm.weight"] = 1 + rand(D, scale=0.1)
                state[f"{prefix}{attention}_layer_norm.bias"] = rand(D, scale=0.1)
            state[f"{prefix}fc1.weight"], state[f"{prefix}fc1.bias"] = rand(FFN, D), rand(FFN, scale=0.1)
            state[f"{prefix}fc2.weight"], state[f"{prefix}fc2.bias"] = rand(D, FFN), rand(D, scale=0.1)
            state[f"{prefix}final_layer_norm.weight"] = 1 + rand(D, scale=0.1)
            state[f"{prefix}final_layer_norm.bias"] = rand(D, scale=0.1)
    return state


def save_checkpoint(path: Path, state: dict, args: argparse.Namespace) -> Path:
    """As fairseq 0.9's ``save_state``: args, model, optimizer history, extra state."""
    torch.save(
        {
            "args": args,
            "model": state,
            "optimizer_history": [
                {
                    "criterion_name": "LabelSmoothedCrossEntropyCriterion",
                    "optimizer_name": "FairseqAdam",
                    "num_updates": 10,
                }
            ],
            "extra_state": {"val_loss": 3.2},
        },
        path,
    )
    return path


# --- the fairseq computation, written out (post-norm transformer, sinusoids from padding_idx + 1, gate) ---


def sinusoids(length: int) -> torch.Tensor:
    half = D // 2
    frequencies = torch.exp(torch.arange(half, dtype=torch.float) * -(math.log(10000) / (half - 1)))
    angles = torch.arange(2, 2 + length, dtype=torch.float)[:, None] * frequencies[None]  # positions 2, 3, ...
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)


def attention(s, prefix, query, memory, causal=False):
    q = (query @ s[prefix + "q_proj.weight"].T + s[prefix + "q_proj.bias"]) * (D // HEADS) ** -0.5
    k = memory @ s[prefix + "k_proj.weight"].T + s[prefix + "k_proj.bias"]
    v = memory @ s[prefix + "v_proj.weight"].T + s[prefix + "v_proj.bias"]
    heads = []
    for h in range(HEADS):
        cols = slice(h * D // HEADS, (h + 1) * D // HEADS)
        scores = q[:, cols] @ k[:, cols].T
        if causal:
            scores = scores.masked_fill(torch.triu(torch.ones_like(scores, dtype=torch.bool), 1), float("-inf"))
        heads.append(torch.softmax(scores, -1) @ v[:, cols])
    return torch.cat(heads, 1) @ s[prefix + "out_proj.weight"].T + s[prefix + "out_proj.bias"]


def norm(s, name, x):
    return F.layer_norm(x, (D,), s[name + ".weight"], s[name + ".bias"])


def feed_forward(s, prefix, x):
    return (
        F.relu(x @ s[prefix + "fc1.weight"].T + s[prefix + "fc1.bias"]) @ s[prefix + "fc2.weight"].T
        + s[prefix + "fc2.bias"]
    )


def fairseq_logprobs(s, source_ids, target_ids, image):
    """log P(target token | ...) at each position, decoder input </s> y1..yn, labels y1..yn </s>."""
    embed = s["encoder.embed_tokens.weight"]
    x = math.sqrt(D) * embed[source_ids] + sinusoids(len(source_ids))
    for layer in range(2):
        p = f"encoder.layers.{layer}."
        x = norm(s, p + "self_attn_layer_norm", x + attention(s, p + "self_attn.", x, x))
        x = norm(s, p + "final_layer_norm", x + feed_forward(s, p, x))
    projected = (image @ s["encoder.dense.weight"].T + s["encoder.dense.bias"]).expand_as(x)
    gate = torch.sigmoid(
        torch.cat([x, projected], -1) @ s["encoder.gate_dense.weight"].T + s["encoder.gate_dense.bias"]
    )
    memory = x + gate * projected
    decoder_input = [2, *target_ids[:-1]]
    y = math.sqrt(D) * embed[decoder_input] + sinusoids(len(decoder_input))
    for layer in range(2):
        p = f"decoder.layers.{layer}."
        y = norm(s, p + "self_attn_layer_norm", y + attention(s, p + "self_attn.", y, y, causal=True))
        y = norm(s, p + "encoder_attn_layer_norm", y + attention(s, p + "encoder_attn.", y, memory))
        y = norm(s, p + "final_layer_norm", y + feed_forward(s, p, y))
    logprobs = torch.log_softmax(y @ embed.T, -1)
    return logprobs[torch.arange(len(target_ids)), target_ids].numpy()


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """(folder, fairseq state, resnet folder): a tiny fairseq Gated Fusion checkpoint converted once."""
    root = tmp_path_factory.mktemp("fairseq")
    state = fairseq_state()
    checkpoint = save_checkpoint(root / "checkpoint_best.pt", state, namespace())
    data, codes = write_data(root / "data-bin")
    resnet = build.tiny_resnet(root / "resnet")
    out = convert(checkpoint, root / "converted", data, codes, image_model=str(resnet), lowercase=True)
    return out, state, resnet


def ids(*tokens: str) -> list[int]:
    """fairseq ids of dictionary entries, then </s>."""
    return [4 + WORDS.index(token) for token in tokens] + [2]


def test_the_tokenizer_splits_as_fairseq_does(converted):
    folder, _, _ = converted
    scorer = GatedFusionScorer("g", {"pretrained": str(folder)})
    scorer.ensure_loaded()
    request = ScoreRequest("He made it to the bank.", "Il a atteint la banque.", None, None, "en", "fr")
    assert scorer.source_ids(request) == ids("he", "made", "it", "to", "the", "bank", ".")
    tokens = scorer.target_tokens(request)
    assert list(tokens.labels) == ids("il", "a", "atteint", "la", "ban@@", "que", ".")
    assert list(tokens.decoder_input) == [2, *tokens.labels[:-1]]  # fairseq's prev_output_tokens
    assert all(tokens.scored)
    french = ScoreRequest("He made it to the bank.", "l'usine.", None, None, "en", "fr")
    assert list(scorer.target_tokens(french).labels) == ids("l&apos;", "usine", ".")  # French Moses rules
    assert scorer.source_ids(request) == ids("he", "made", "it", "to", "the", "bank", ".")  # English ones again


def test_converted_model_scores_as_the_fairseq_computation(converted):
    """The CoMMuTE comparison (one source, two translations, one image) equals the reference forward pass."""
    folder, state, _ = converted
    scorer = GatedFusionScorer("g", {"pretrained": str(folder)}, batch_size=2)
    image = np.random.default_rng(0).normal(size=IMAGE_DIM).astype(np.float32)
    source = "He made it to the bank."
    targets = ("Il a atteint la rive.", "Il a atteint la banque.")
    got = scorer.score_translations([ScoreRequest(source, t, image, "img", "en", "fr") for t in targets])
    source_ids = ids("he", "made", "it", "to", "the", "bank", ".")
    for target, value in zip(
        (ids("il", "a", "atteint", "la", "rive", "."), ids("il", "a", "atteint", "la", "ban@@", "que", ".")), got
    ):
        expected = fairseq_logprobs(state, source_ids, target, torch.from_numpy(image))
        np.testing.assert_allclose(value, expected, atol=1e-4)
    assert len(got[0]) == 7 and len(got[1]) == 8
    other = np.random.default_rng(1).normal(size=IMAGE_DIM).astype(np.float32)
    moved = scorer.score_translations([ScoreRequest(source, targets[0], other, "img2", "en", "fr")])[0]
    assert np.abs(moved - got[0]).max() > 1e-4  # the image reaches the scores through the gate


def test_converted_folder_layout_and_dictionary_mapping(converted, tmp_path):
    folder, _, resnet = converted
    import json

    config = json.loads((folder / "config.json").read_text())
    assert config == {
        "model_type": "gated_fusion",
        "text_model": "text",
        "image_model": str(resnet),
        "fusion": "fusion.safetensors",
    }
    from safetensors.torch import load_file

    assert sorted(load_file(str(folder / "fusion.safetensors"))) == sorted(
        ["encoder.dense.weight", "encoder.dense.bias", "encoder.gate_dense.weight", "encoder.gate_dense.bias"]
    )
    (tmp_path / "dict.en.txt").write_text("ab@@ 5\ncd 3\nx 1 #fairseq:overwrite\n")
    vocab = read_dictionary(tmp_path / "dict.en.txt", 8)
    assert vocab == {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3, "ab@@": 4, "cd": 5, "x": 6, "madeupword0003": 7}
    assert fsmt_vocab(vocab)["ab"] == 4 and fsmt_vocab(vocab)["cd</w>"] == 5 and fsmt_vocab(vocab)["</s>"] == 2


def test_the_cli_converts_and_refuses_what_it_cannot_convert(converted, tmp_path, capsys):
    _, state, resnet = converted
    data, codes = write_data(tmp_path / "data-bin")
    good = save_checkpoint(tmp_path / "good.pt", state, namespace())
    common = ["--dictionaries", str(data), "--bpe-codes", str(codes), "--image-model", str(resnet)]
    assert main(["convert", "gated-fusion", str(good), str(tmp_path / "out"), *common]) == 0
    assert (tmp_path / "out" / "text" / "config.json").is_file()
    assert main(["convert", "gated-fusion", str(good), str(tmp_path / "out"), *common]) == 2
    assert "exists and is not empty" in capsys.readouterr().err
    cases = {
        "prenorm.pt": (state, namespace(encoder_normalize_before=True), "pre-norm encoder layers"),
        "extra.pt": (
            {**state, "encoder.retriever.weight": torch.zeros(2)},
            namespace(),
            r"1 keys the converter does not know \(e.g. encoder.retriever.weight\)",
        ),
        "text.pt": ({k: v for k, v in state.items() if "gate" not in k}, namespace(), "not a Gated Fusion checkpoint"),
    }
    for name, (saved, args, message) in cases.items():
        path = save_checkpoint(tmp_path / name, saved, args)
        assert main(["convert", "gated-fusion", str(path), str(tmp_path / name / "x"), *common]) == 2
        assert re.search(message, capsys.readouterr().err), name
    (tmp_path / "noise.pt").write_bytes(b"not a checkpoint")
    assert main(["convert", "gated-fusion", str(tmp_path / "noise.pt"), str(tmp_path / "n"), *common]) == 2
    assert "not a PyTorch checkpoint" in capsys.readouterr().err


class Payload:
    """An object whose unpickling would run a shell command."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_a_pickle_with_a_forbidden_global_is_refused_unread(tmp_path, capsys):
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    torch.save({"args": namespace(), "model": fairseq_state(), "extra_state": Payload(marker)}, path)
    data, codes = write_data(tmp_path / "data-bin")
    code = main(
        [
            "convert",
            "gated-fusion",
            str(path),
            str(tmp_path / "out"),
            "--dictionaries",
            str(data),
            "--bpe-codes",
            str(codes),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "refusing to unpickle objects of" in err and "system" in err
    assert not marker.exists() and not (tmp_path / "out").exists()


def test_the_authors_checkpoint_fails_in_the_plain_loader(tmp_path):
    """Why the converter exists: the adapter's own weights-only loader cannot read a fairseq checkpoint."""
    from harness_models.translation.layout import load_state_dict

    path = save_checkpoint(tmp_path / "checkpoint_best.pt", fairseq_state(), namespace())
    with pytest.raises(HarnessError, match="Namespace"):
        load_state_dict(str(path))


def test_the_converted_folder_runs_commute_tc_from_the_cli(converted, mini_commute, tmp_path, fresh_cache):
    from harness.results.records import read_records

    folder, _, _ = converted
    data_dir, images = mini_commute
    code = main(
        [
            "run",
            "--tasks",
            "commute_tc",
            "--model",
            str(folder),
            "--data-dir",
            str(data_dir),
            "--task-args",
            "lang=fr",
            "--images",
            str(images),
            "--output",
            str(tmp_path / "out"),
        ]
    )
    assert code == 0
    (record,), problems = read_records(tmp_path / "out" / "results.jsonl")
    assert problems == [] and record.model["adapter"].endswith("gated_fusion:GatedFusionScorer")
    assert 0.0 <= record.metrics["tc"] <= 1.0 and record.dataset["size"] == 3
