"""Strict loading in the Hugging Face encoders: what a correct model legitimately leaves out loads, anything
else the model lacks or does not use is an error (docs/checkpoints.md)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file
from tiny_models import tiny_bert

from harness.errors import HarnessError
from harness_models.encoders.text import HFTextEncoder
from harness_models.token_embedders.hf import HFTokenEmbedder

TEXTS = ["a man rides a bike", "two dogs play in the snow"]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("bert"), layers=3)


def edited(bert, folder, edit):
    """A copy of the tiny BERT whose weights went through ``edit``."""
    shutil.copytree(bert, folder)
    state = load_file(str(folder / "model.safetensors"))
    save_file(edit(state), str(folder / "model.safetensors"), metadata={"format": "pt"})
    return str(folder)


def test_a_pre_training_head_is_discarded_and_a_missing_pooler_matters_only_for_pooler_pooling(bert, tmp_path):
    reference = HFTextEncoder("b", {"pretrained": str(bert), "pooling": "cls"}).encode_texts(TEXTS)
    head = edited(bert, tmp_path / "head", lambda s: {**s, "cls.predictions.bias": torch.zeros(4)})
    np.testing.assert_array_equal(
        HFTextEncoder("b", {"pretrained": head, "pooling": "cls"}).encode_texts(TEXTS), reference
    )
    no_pooler = edited(bert, tmp_path / "nopool", lambda s: {k: v for k, v in s.items() if "pooler" not in k})
    np.testing.assert_array_equal(
        HFTextEncoder("b", {"pretrained": no_pooler, "pooling": "cls"}).encode_texts(TEXTS), reference
    )
    with pytest.raises(HarnessError, match=r"missing 2 \(e\.g\. pooler\.dense\.bias, pooler\.dense\.weight\)"):
        HFTextEncoder("b", {"pretrained": no_pooler, "pooling": "pooler"}).encode_texts(TEXTS)


def test_an_unknown_layer_is_an_error_unless_strict_is_false(bert, tmp_path, capsys):
    extra = edited(bert, tmp_path / "extra", lambda s: {**s, "encoder.layer.7.output.dense.bias": torch.zeros(32)})
    with pytest.raises(HarnessError, match=r"unexpected 1 \(e\.g\. encoder\.layer\.7\.output\.dense\.bias\)"):
        HFTextEncoder("b", {"pretrained": extra}).encode_texts(TEXTS)
    loose = HFTextEncoder("b", {"pretrained": extra, "strict": "false"})
    assert loose.identity().args["key_mismatch"]["unexpected_keys"] == ["encoder.layer.7.output.dense.bias"]
    assert "strict=false" in capsys.readouterr().err


def test_the_token_embedder_drops_the_layers_above_the_one_it_reads(bert, tmp_path):
    embedder = HFTokenEmbedder("b", {"pretrained": str(bert), "layer": 1})
    assert len(embedder.embed_tokens(TEXTS)) == 2 and not embedder.key_mismatch
    missing = edited(
        bert, tmp_path / "missing", lambda s: {k: v for k, v in s.items() if k != "encoder.layer.0.output.dense.bias"}
    )
    with pytest.raises(HarnessError, match=r"missing 1 \(e\.g\. encoder\.layer\.0\.output\.dense\.bias\)"):
        HFTokenEmbedder("b", {"pretrained": missing, "layer": 1}).embed_tokens(TEXTS)


def test_an_image_classifier_checkpoint_loads_as_an_image_encoder(tmp_path):
    """microsoft/resnet-50 is a ResNetForImageClassification: its classifier is a discarded head, not a mismatch."""
    from commute.mmt_builders import tiny_resnet
    from PIL import Image
    from transformers import ResNetConfig, ResNetForImageClassification

    from harness_models.encoders.image import HFImageEncoder

    folder = tiny_resnet(tmp_path / "resnet")
    torch.manual_seed(0)
    ResNetForImageClassification(ResNetConfig.from_pretrained(folder, num_labels=3)).save_pretrained(tmp_path / "clf")
    shutil.copy(folder / "preprocessor_config.json", tmp_path / "clf")
    encoder = HFImageEncoder("r", {"pretrained": str(tmp_path / "clf")})
    assert encoder.encode_images([Image.new("RGB", (40, 30), (10, 200, 30))]).shape == (1, 32)
    assert not encoder.key_mismatch
    broken = edited(
        tmp_path / "clf", tmp_path / "broken", lambda s: {k: v for k, v in s.items() if "embedder" not in k}
    )
    with pytest.raises(HarnessError, match=r"missing \d+ \(e\.g\. embedder\."):
        HFImageEncoder("r", {"pretrained": broken}).encode_images([Image.new("RGB", (40, 30))])
