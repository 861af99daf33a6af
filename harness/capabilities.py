"""The four model capabilities and the protocols an adapter implements for each.

A task declares the capabilities it needs (``Task.requires``); a model adapter declares the
ones it provides (``ModelAdapter.capabilities``). The runner compares the two before any
weights are loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np


class Capability(str, Enum):
    """What a model can compute for a task."""

    TEXT_ENCODER = "text_encoder"
    IMAGE_ENCODER = "image_encoder"
    TOKEN_EMBEDDER = "token_embedder"
    TRANSLATION_SCORER = "translation_scorer"

    @property
    def noun(self) -> str:
        """'a text encoder', for error messages."""
        return "a " + self.value.replace("_", " ")


@dataclass(frozen=True)
class TokenEmbeddings:
    """Contextual vectors of one text: ``vectors[i]`` belongs to ``tokens[i]``."""

    tokens: list[str]
    vectors: np.ndarray  # (n_tokens, dim), float32


@dataclass(frozen=True)
class MixedImage:
    """A pixel-space mixup of PIL images (for example the 50/50 mix of a CoMMuTE pair).

    A scorer resizes and center-crops every image exactly as it prepares one image for its
    vision model, then averages the pixel arrays with ``weights`` (which sum to 1).
    """

    images: tuple[Any, ...]
    weights: tuple[float, ...]


@dataclass(frozen=True)
class ScoreRequest:
    """One target sentence to score given a source and optionally an image.

    ``image`` is whatever the scorer accepts: a PIL image, a precomputed feature vector, a
    ``MixedImage``, or ``None`` for text-only scoring. ``image_key`` is a stable content identity of the image
    (for example its SHA-256), used by the cache; it must be set when ``image`` is not None.
    """

    source: str
    target: str
    image: Any = None
    image_key: str | None = None
    src_lang: str | None = None
    tgt_lang: str | None = None


@runtime_checkable
class TextEncoder(Protocol):
    """One vector per text."""

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """Return a float32 array of shape (len(texts), dim), in input order."""
        ...


@runtime_checkable
class ImageEncoder(Protocol):
    """One vector per image."""

    def encode_images(self, images: Sequence[Any]) -> np.ndarray:
        """Return a float32 array of shape (len(images), dim) for PIL images, in input order."""
        ...


@runtime_checkable
class TokenEmbedder(Protocol):
    """Per-token contextual vectors from a chosen layer, special tokens removed."""

    def embed_tokens(self, texts: Sequence[str], lang: str | None = None) -> list[TokenEmbeddings]:
        """Return one ``TokenEmbeddings`` per text, in input order."""
        ...


@runtime_checkable
class TranslationScorer(Protocol):
    """Per-token log-probabilities of a target sentence given its source (and image).

    An adapter whose scores never depend on the image sets ``uses_images = False``: the harness
    then scores and caches each (source, target) once, whatever the image (default: True).
    """

    def score_translations(self, requests: Sequence[ScoreRequest]) -> list[np.ndarray]:
        """Return one float array of target-token log-probabilities per request, in order."""
        ...


PROTOCOLS: dict[Capability, type] = {
    Capability.TEXT_ENCODER: TextEncoder,
    Capability.IMAGE_ENCODER: ImageEncoder,
    Capability.TOKEN_EMBEDDER: TokenEmbedder,
    Capability.TRANSLATION_SCORER: TranslationScorer,
}
