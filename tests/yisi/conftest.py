"""Fixtures of the YiSi-2 tests: a tiny BERT (12 layers) and small data folders in the real layouts."""

from __future__ import annotations

from pathlib import Path

import pytest
from tiny_models import DEFAULT_CORPUS, tiny_bert
from yisi.helpers import CAPTIONS, STS_PAIRS, write_multi30k, write_sts


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory) -> Path:
    """A 12-layer BERT (hidden 32) with a WordPiece tokenizer trained on en/de/fr captions."""
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("tiny-bert")
    texts = DEFAULT_CORPUS + [c for captions in CAPTIONS.values() for c in captions]
    tiny_bert(folder, texts, layers=12)
    # a real checkpoint states its maximum length; bert_score needs it
    AutoTokenizer.from_pretrained(folder, model_max_length=128).save_pretrained(folder)
    return folder


@pytest.fixture
def multi30k_dir(tmp_path) -> Path:
    """The small Multi30K-layout folder."""
    return write_multi30k(tmp_path / "multi30k")


@pytest.fixture
def sts_dir(tmp_path) -> Path:
    """Two STS sets in opposite column orders; the second has a pair without gold (empty line)."""
    news = (STS_PAIRS[:3], True)
    multisource = (
        [*STS_PAIRS[3:], ("A man is cooking pasta in the kitchen.", "Un hombre cocina pasta en la cocina.", "")],
        False,
    )
    return write_sts(tmp_path / "sts", {"news": news, "multisource": multisource})
