"""Fixtures of the CoMMuTE tests: tiny model folders (built once per session) and a small CoMMuTE folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from commute import mmt_builders as build


@pytest.fixture(scope="session")
def vgamt_dir(tmp_path_factory) -> Path:
    """A tiny VGAMT folder (mBART-50 + CLIP + authors'-layout .pth checkpoint with adapters)."""
    return build.tiny_vgamt(tmp_path_factory.mktemp("vgamt"))


@pytest.fixture(scope="session")
def mbart_dir(vgamt_dir) -> Path:
    """The tiny mBART-50 inside the VGAMT folder, used as a text-only model."""
    return vgamt_dir / "mbart"


@pytest.fixture(scope="session")
def marian_dir(tmp_path_factory) -> Path:
    """A tiny Marian model (SentencePiece tokenizer trained on the fly)."""
    return build.tiny_marian(tmp_path_factory.mktemp("marian"))


@pytest.fixture(scope="session")
def m2m100_dir(tmp_path_factory) -> Path:
    """A tiny M2M100 model (SentencePiece tokenizer trained on the fly, __xx__ codes)."""
    return build.tiny_m2m100(tmp_path_factory.mktemp("m2m100"))


@pytest.fixture(scope="session")
def nllb_dir(tmp_path_factory) -> Path:
    """A tiny NLLB-style model (M2M100 architecture, FLORES-200 codes)."""
    return build.tiny_nllb(tmp_path_factory.mktemp("nllb"))


@pytest.fixture(scope="session")
def gated_dir(tmp_path_factory, marian_dir) -> Path:
    """A Gated Fusion folder over the tiny Marian and a tiny ResNet."""
    return build.tiny_gated_fusion(tmp_path_factory.mktemp("gated"), marian_dir)


@pytest.fixture(scope="session")
def cliptrans_dir(tmp_path_factory, vgamt_dir) -> Path:
    """A CLIP-Trans folder over the tiny mBART-50 and CLIP."""
    return build.tiny_cliptrans(tmp_path_factory.mktemp("cliptrans"), vgamt_dir / "mbart", vgamt_dir / "clip")


@pytest.fixture(scope="session")
def gpt2_dir(tmp_path_factory) -> Path:
    """A tiny GPT-2 with a byte-level BPE tokenizer."""
    return build.tiny_gpt2(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture
def mini_commute(tmp_path) -> tuple[Path, Path]:
    """(data folder, images folder) of a three-tuple CoMMuTE in the original layout."""
    data = build.write_commute(tmp_path / "commute")
    images = build.stand_in_images(tmp_path / "images", [line[3] for line in build.MINI])
    return data, images
