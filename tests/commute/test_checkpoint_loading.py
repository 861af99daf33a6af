"""Checkpoints load honestly: a key the model lacks or does not use is an error, unless strict=false, which
loads anyway, warns, and puts the keys into the model identity (docs/checkpoints.md)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
import torch
from commute import mmt_builders as build
from safetensors.torch import load_file, save_file

from harness.adapters.capabilities import ScoreRequest
from harness.errors import HarnessError
from harness_models.loading import KeyMismatch, beyond_layer, enforce, identity_args
from harness_models.translation import vgamt_modules
from harness_models.translation.seq2seq import Seq2SeqScorer
from harness_models.translation.vgamt import VgamtScorer

SOURCE, TARGET = "He finally made it to the bank.", "Il a réussi à atteindre la rive."


def request(image=None, key=None):
    return ScoreRequest(SOURCE, TARGET, image, key, "en", "fr")


def features(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=16).astype(np.float32)


def vgamt_with(vgamt_dir, target, extra: dict) -> str:
    """A copy of the VGAMT folder whose checkpoint also holds ``extra``."""
    state = torch.load(vgamt_dir / "vgamt.pth", weights_only=True)["model"]
    target.mkdir()
    for part in ("mbart", "clip"):
        shutil.copytree(vgamt_dir / part, target / part)
    torch.save({"model": {**state, **extra}, "epoch": 3}, target / "ck.pth")
    (target / "config.json").write_text(
        json.dumps({"model_type": "vgamt", "mbart": "mbart", "clip": "clip", "checkpoint": "ck.pth"})
    )
    return str(target)


def test_the_region_branch_counts_as_trained_only_when_its_layer_norm_moved():
    untrained = build.region_branch(8, trained=False)
    assert not vgamt_modules.region_branch_trained({})
    assert not vgamt_modules.region_branch_trained(untrained)
    assert vgamt_modules.region_branch_trained(build.region_branch(8, trained=True))
    without_norm = {k: v for k, v in untrained.items() if "layer_norm_reg_img" not in k}
    assert vgamt_modules.region_branch_trained(without_norm)  # cannot tell: treated as used
    assert vgamt_modules.region_keys({**untrained, "model.encoder.proj_full_img.linear.weight": 0}) == sorted(untrained)


def test_a_vgamt_trained_with_mdetr_regions_is_refused_naming_the_keys(vgamt_dir, tmp_path):
    folder = vgamt_with(vgamt_dir, tmp_path / "mdetr", build.region_branch(32, trained=True))
    with pytest.raises(
        HarnessError,
        match=r"MDETR region features \(6 keys, e\.g\. model\.encoder\.layer_norm_reg_img\.bias, "
        r"model\.encoder\.layer_norm_reg_img\.weight, model\.encoder\.proj_reg_img",
    ):
        VgamtScorer("v", {"pretrained": folder}).ensure_loaded()


def test_strict_false_scores_the_clip_branch_warns_and_changes_the_identity(vgamt_dir, tmp_path, capsys):
    clean = VgamtScorer("v", {"pretrained": str(vgamt_dir)})
    folder = vgamt_with(vgamt_dir, tmp_path / "mdetr", build.region_branch(32, trained=True))
    loose = VgamtScorer("v", {"pretrained": folder, "strict": "false"})
    identity = loose.identity()
    assert loose._loaded  # the keys are known only once the checkpoint is read
    assert identity.args["strict"] is False
    assert identity.args["key_mismatch"] == {
        "missing": 0,
        "unexpected": 6,
        "missing_keys": [],
        "unexpected_keys": sorted(build.region_branch(32, trained=True)),
    }
    assert "loaded with strict=false" in capsys.readouterr().err
    assert not clean._loaded and "key_mismatch" not in clean.identity().args and not clean._loaded
    assert "key_mismatch" not in VgamtScorer("v", {"pretrained": str(vgamt_dir), "strict": "false"}).identity().args
    np.testing.assert_array_equal(
        loose.score_translations([request(features(0), "a")])[0],
        clean.score_translations([request(features(0), "a")])[0],
    )


def broken_copy(source, target, edit) -> str:
    """A copy of a Hugging Face folder whose model.safetensors went through ``edit``."""
    shutil.copytree(source, target)
    state = load_file(str(target / "model.safetensors"))
    save_file(edit(state), str(target / "model.safetensors"), metadata={"format": "pt"})
    return str(target)


def test_missing_and_unexpected_hugging_face_keys_are_errors(marian_dir, tmp_path):
    missing = broken_copy(
        marian_dir,
        tmp_path / "missing",
        lambda s: {k: v for k, v in s.items() if k != "model.decoder.layers.1.fc2.bias"},
    )
    with pytest.raises(HarnessError, match=r"missing 1 \(e\.g\. model\.decoder\.layers\.1\.fc2\.bias\).*strict=false"):
        Seq2SeqScorer("m", {"pretrained": missing}).ensure_loaded()
    extra = broken_copy(
        marian_dir,
        tmp_path / "extra",
        lambda s: {**s, **{f"model.encoder.layers.{n}.fc1.weight": torch.zeros(64, 32) for n in range(2, 9)}},
    )
    with pytest.raises(
        HarnessError,
        match=r"unexpected 7 \(e\.g\. model\.encoder\.layers\.2\.fc1\.weight, "
        r"model\.encoder\.layers\.3\.fc1\.weight, .*layers\.6\.fc1\.weight\) ",
    ):
        Seq2SeqScorer("m", {"pretrained": extra}).ensure_loaded()


def test_a_discarded_head_is_not_a_mismatch(marian_dir, tmp_path):
    head = broken_copy(
        marian_dir, tmp_path / "head", lambda s: {**s, "classification_head.dense.weight": torch.zeros(2, 2)}
    )
    scorer = Seq2SeqScorer("m", {"pretrained": head})
    reference = Seq2SeqScorer("m", {"pretrained": str(marian_dir)})
    np.testing.assert_array_equal(
        scorer.score_translations([request()])[0], reference.score_translations([request()])[0]
    )
    assert not scorer.key_mismatch


def test_strict_false_loads_a_hugging_face_model_and_records_the_keys(marian_dir, tmp_path, capsys):
    missing = broken_copy(
        marian_dir,
        tmp_path / "missing",
        lambda s: {k: v for k, v in s.items() if k != "model.decoder.layers.1.fc2.bias"},
    )
    scorer = Seq2SeqScorer("m", {"pretrained": missing, "strict": "false"})
    assert scorer.identity().args["key_mismatch"] == {
        "missing": 1,
        "unexpected": 0,
        "unexpected_keys": [],
        "missing_keys": ["model.decoder.layers.1.fc2.bias"],
    }
    assert "missing 1 (e.g. model.decoder.layers.1.fc2.bias)" in capsys.readouterr().err
    strict = Seq2SeqScorer("m", {"pretrained": str(marian_dir)})
    assert strict.identity().args == {**strict.args} and not strict._loaded


def test_enforce_names_five_keys_and_the_counts(capsys):
    found = KeyMismatch(tuple(f"m{i}" for i in range(7)), ("u",))
    with pytest.raises(
        HarnessError,
        match=r"^x: checkpoint does not match the model: missing 7 \(e\.g\. m0, m1, m2, m3, m4\); "
        r"unexpected 1 \(e\.g\. u\)",
    ):
        enforce(found, "x", strict=True)
    assert enforce(found, "x", strict=False) is found
    assert "harness: warning: x:" in capsys.readouterr().err
    assert enforce(KeyMismatch(), "x", strict=True) == KeyMismatch()


def test_beyond_layer_drops_the_upper_layers_and_the_pooler_only():
    dropped = beyond_layer(9)
    assert dropped("encoder.layer.9.attention.self.query.weight") and dropped("encoder.layer.11.output.dense.bias")
    assert dropped("transformer.layer.10.ffn.lin1.weight") and dropped("pooler.dense.weight")
    assert not dropped("encoder.layer.8.output.dense.bias") and not dropped("embeddings.word_embeddings.weight")


def test_identity_args_load_only_when_not_strict():
    class Adapter:
        def __init__(self, strict):
            self.args, self.loads = {"strict": strict}, 0

        def ensure_loaded(self):
            self.loads += 1
            self.key_mismatch = KeyMismatch((), ("a.b",))

    strict, loose = Adapter(True), Adapter(False)
    assert identity_args(strict) == {"strict": True} and strict.loads == 0
    assert identity_args(loose)["key_mismatch"]["unexpected_keys"] == ["a.b"] and loose.loads == 1
