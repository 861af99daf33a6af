"""The Hugging Face text and image encoders, on tiny models built locally, against the libraries themselves."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from retrieval.builders import tiny_clip, tiny_resnet, write_images
from tiny_models import DEFAULT_CORPUS, tiny_bert

from harness.adapters.capabilities import Capability
from harness.adapters.resolve import build_adapter
from harness.errors import HarnessError
from harness.plugins.registry import get_registry
from harness_models.encoders.batching import length_sorted_batches, run_batches
from harness_models.encoders.image import HFImageEncoder
from harness_models.encoders.sentence_transformers_config import pooling_mode
from harness_models.encoders.text import HFTextEncoder

TEXTS = ["a man rides a bike down the street", "zwei Hunde", "une femme lit un livre dans la rue avec deux chiens", "a"]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("bert"), layers=2)


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    from PIL import Image

    folder = tmp_path_factory.mktemp("images")
    return [Image.open(folder / name) for name in write_images(folder, 7)]


def reference(folder, text, pooling, max_length=512):
    """What a reader of the transformers docs would compute for one text, unbatched."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder).eval()
    with torch.no_grad():
        output = model(**tokenizer(text, return_tensors="pt", truncation=True, max_length=max_length))
    vector = {
        "cls": output.last_hidden_state[0, 0],
        "mean": output.last_hidden_state[0].mean(0),
        "max": output.last_hidden_state[0].max(0).values,
        "pooler": output.pooler_output[0],
    }[pooling]
    return (vector / vector.norm()).numpy()


def test_batches_are_longest_first_and_results_come_back_in_input_order():
    batches = length_sorted_batches([3, 9, 1, 9, 5], 2)
    assert [b.tolist() for b in batches] == [[1, 3], [4], [0], [2]]  # one length per batch: nothing padded
    assert [b.tolist() for b in length_sorted_batches([2, 2, 2, 7, 2], 2)] == [[3], [0, 1], [2, 4]]
    assert length_sorted_batches([], 4) == []
    out = run_batches(5, batches, lambda idx: np.stack([idx * 10.0, idx + 0.5], axis=1))
    assert out[:, 0].tolist() == [0, 10, 20, 30, 40] and out.dtype == np.float32
    with pytest.raises(ValueError):
        length_sorted_batches([1], 0)


@pytest.mark.parametrize("pooling", ["cls", "mean", "max", "pooler"])
def test_text_pooling_matches_transformers(bert, pooling):
    encoder = HFTextEncoder("bert", {"pretrained": str(bert), "pooling": pooling}, batch_size=3)
    vectors = encoder.encode_texts(TEXTS)
    expected = np.stack([reference(bert, t, pooling) for t in TEXTS])
    np.testing.assert_allclose(vectors, expected, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)


def test_batch_size_and_order_do_not_change_vectors(bert):
    texts = TEXTS * 3 + DEFAULT_CORPUS
    one = HFTextEncoder("bert", {"pretrained": str(bert)}, batch_size=1).encode_texts(texts)
    many = HFTextEncoder("bert", {"pretrained": str(bert)}, batch_size=64).encode_texts(texts)
    shuffled = HFTextEncoder("bert", {"pretrained": str(bert)}, batch_size=4).encode_texts(texts[::-1])[::-1]
    np.testing.assert_allclose(one, many, atol=1e-5)
    np.testing.assert_allclose(one, shuffled, atol=1e-5)


def test_max_length_truncates_and_is_capped_by_the_model(bert):
    encoder = HFTextEncoder("bert", {"pretrained": str(bert), "max_length": 4, "normalize": False, "pooling": "cls"})
    long_text = TEXTS[2]
    truncated = reference(bert, long_text, "cls", max_length=4)
    vector = encoder.encode_texts([long_text])[0]
    np.testing.assert_allclose(vector / np.linalg.norm(vector), truncated, atol=1e-5)
    capped = HFTextEncoder("bert", {"pretrained": str(bert), "max_length": 10_000})
    capped.ensure_loaded()
    assert capped.max_length == 128  # the tiny model's max_position_embeddings


def build_sentence_transformer(bert, folder, pooling, dense):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Dense, Normalize, Pooling, Transformer

    transformer = Transformer(str(bert))
    modules = [transformer, Pooling(transformer.get_embedding_dimension(), pooling_mode=pooling)]
    if dense:
        torch.manual_seed(1)
        modules += [Dense(32, 12, activation_function=torch.nn.Tanh()), Normalize()]
    SentenceTransformer(modules=modules, device="cpu").save(str(folder))
    return SentenceTransformer(str(folder), device="cpu")


@pytest.mark.parametrize(("pooling", "dense"), [("cls", True), ("mean", False)])
def test_sentence_transformers_folder_matches_sentence_transformers(bert, tmp_path, pooling, dense):
    model = build_sentence_transformer(bert, tmp_path / "st", pooling, dense)
    expected = model.encode(TEXTS, convert_to_numpy=True, normalize_embeddings=True)
    encoder = HFTextEncoder("st", {"pretrained": str(tmp_path / "st")}, batch_size=2)
    np.testing.assert_allclose(encoder.encode_texts(TEXTS), expected, atol=1e-5)
    assert encoder.pooling == pooling and len(encoder.dense) == int(dense)


def test_sentence_transformers_config_errors_and_legacy_pooling(bert, tmp_path):
    assert pooling_mode("x", {"pooling_mode_cls_token": False, "pooling_mode_mean_tokens": True}) == "mean"
    with pytest.raises(HarnessError, match="not supported"):
        pooling_mode("x", {"pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True})
    build_sentence_transformer(bert, tmp_path / "st", "mean", False)
    modules = json.loads((tmp_path / "st" / "modules.json").read_text())
    modules.append({"idx": 2, "name": "2", "path": "2_Odd", "type": "sentence_transformers.models.LayerNorm"})
    (tmp_path / "st" / "modules.json").write_text(json.dumps(modules))
    with pytest.raises(HarnessError, match=r"LayerNorm.*not supported"):
        HFTextEncoder("st", {"pretrained": str(tmp_path / "st")}).encode_texts(["x"])


def test_text_encoder_errors(bert, tmp_path):
    with pytest.raises(HarnessError, match="needs a Hub id or folder"):
        HFTextEncoder("hf-text-encoder", {}).identity()
    with pytest.raises(HarnessError, match="model 'empty': cannot load"):
        HFTextEncoder("empty", {"pretrained": str(tmp_path)}).encode_texts(["a"])
    with pytest.raises(HarnessError, match="model 'empty': cannot load"):
        HFImageEncoder("empty", {"pretrained": str(tmp_path)}).encode_images([])
    with pytest.raises(HarnessError, match="must be one of"):
        HFTextEncoder("bert", {"pretrained": str(bert), "pooling": "last"})


@pytest.mark.parametrize("builder", [tiny_resnet, tiny_clip])
def test_image_encoder_matches_transformers(tmp_path, images, builder):
    from transformers import AutoImageProcessor, AutoModel

    folder = builder(tmp_path / "vision")
    vectors = HFImageEncoder("vision", {"pretrained": str(folder)}, batch_size=3).encode_images(images)
    processor = AutoImageProcessor.from_pretrained(folder, backend="pil")
    model = AutoModel.from_pretrained(folder).eval()
    with torch.no_grad():
        pixels = processor(images=[im.convert("RGB") for im in images], return_tensors="pt")["pixel_values"]
        if builder is tiny_clip:
            expected = model.get_image_features(pixel_values=pixels).pooler_output
        else:
            expected = model(pixel_values=pixels).pooler_output.flatten(1)
    np.testing.assert_allclose(vectors, expected.numpy(), atol=1e-5)
    single = HFImageEncoder("vision", {"pretrained": str(folder)}, batch_size=1).encode_images(images[::-1])[::-1]
    np.testing.assert_allclose(single, vectors, atol=1e-5)


def test_folders_resolve_to_the_encoders_by_capability(bert, tmp_path):
    registry = get_registry()
    text = build_adapter(registry, str(bert), {}, {"xlr": [Capability.TEXT_ENCODER]}, device="cpu", batch_size=8)
    image = build_adapter(
        registry,
        str(tiny_resnet(tmp_path / "r")),
        {},
        {"backretrieval": [Capability.IMAGE_ENCODER]},
        device="cpu",
        batch_size=8,
    )
    assert isinstance(text, HFTextEncoder) and isinstance(image, HFImageEncoder)
    assert text.identity().revision.startswith("sha256:") and not text._loaded


@pytest.mark.parametrize(
    ("preset", "hub_id"),
    [
        ("labse", "sentence-transformers/LaBSE"),
        ("mbert", "google-bert/bert-base-multilingual-cased"),
        ("xlmr", "FacebookAI/xlm-roberta-base"),
        ("mdistilbert", "distilbert/distilbert-base-multilingual-cased"),
        ("resnet50", "microsoft/resnet-50"),
        ("clip-vit-b32", "openai/clip-vit-base-patch32"),
    ],
)
def test_presets_name_hub_models_and_build_offline(preset, hub_id):
    needs = Capability.IMAGE_ENCODER if preset in ("resnet50", "clip-vit-b32") else Capability.TEXT_ENCODER
    adapter = build_adapter(get_registry(), preset, {}, {"t": [needs]}, device="cpu", batch_size=8)
    identity = adapter.identity()  # no network, no weights: the revision is resolved lazily or marked unresolved
    assert identity.source == hub_id and identity.name == preset and not adapter._loaded
