"""The model capabilities: what each one means (its protocol) and how the cache serves it.

A task declares the capabilities it needs (``Task.requires``); a model adapter declares the
ones it provides (``ModelAdapter.capabilities``). The runner compares the two, and checks every
capability an adapter declares against its protocol, before any weights are loaded.

A ``Capability`` is one row of the table ``CachedModel`` is generic over: the protocol and the
adapter method it names, how outputs are stored in the cache (a ``Codec``), what identifies one
input in a cache key, and the progress description. The four built-ins are class attributes
(``Capability.TEXT_ENCODER``, ...); a plugin adds a capability by creating a ``Capability`` in
its own code, which its tasks require and its adapters declare (docs/plugins.md, "Adding a
capability"). Capabilities compare by identity: a task and an adapter share the object.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, runtime_checkable

import numpy as np

from harness.adapters.cache import array_to_bytes, bytes_to_array


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
        """Return a float32 array of shape (len(images), dim) for PIL images, in input order.

        The images arrive as ``model_view`` gives them: EXIF orientation applied, 8-bit RGB.
        """
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

    An adapter whose scores never depend on the image sets ``uses_images = False`` (declared on
    ``ModelAdapter``, default True): the harness then scores and caches each (source, target)
    once, whatever the image.
    """

    def score_translations(self, requests: Sequence[ScoreRequest]) -> list[np.ndarray]:
        """Return one float array of target-token log-probabilities per request, in order."""
        ...


@dataclass(frozen=True)
class Codec:
    """How one capability's outputs are stored in the cache, and the stand-in for a value a shard lacks.

    ``blank(values)`` builds that stand-in from the values already at hand (possibly none).
    """

    encode: Callable[[Any], bytes]
    decode: Callable[[bytes], Any]
    blank: Callable[[Mapping[str, Any]], Any]


def _blank_array(values: Mapping[str, Any]) -> np.ndarray:
    template = next(iter(values.values()), None)
    return np.zeros_like(template) if template is not None else np.zeros(1, dtype=np.float32)


def _blank_tokens(values: Mapping[str, Any]) -> TokenEmbeddings:
    """No tokens, shaped like the values at hand: ``(0, dim)``, or ``(layers, 0, dim)`` for all-layer values."""
    template = next(iter(values.values()), None)
    shape = (*template.vectors.shape[:-2], 0, template.vectors.shape[-1]) if template is not None else (0, 1)
    return TokenEmbeddings([], np.zeros(shape, dtype=np.float32))


def _encode_tokens(value: TokenEmbeddings) -> bytes:
    header = json.dumps(value.tokens).encode()
    return len(header).to_bytes(8, "little") + header + array_to_bytes(value.vectors)


def _decode_tokens(data: bytes) -> TokenEmbeddings:
    size = int.from_bytes(data[:8], "little")
    return TokenEmbeddings(json.loads(data[8 : 8 + size]), bytes_to_array(data[8 + size :]))


ARRAYS = Codec(array_to_bytes, bytes_to_array, _blank_array)
TOKENS = Codec(_encode_tokens, _decode_tokens, _blank_tokens)


_SIXTEEN_BIT_MODES = ("I;16", "I;16L", "I;16B", "I;16N", "I")
_EXIF_ORIENTATION = 0x0112


def model_view(image: Any) -> Any:
    """A PIL image as every image model receives it: as a person sees it, in 8-bit RGB.

    EXIF orientation is applied; palette (P, PA), alpha (LA, RGBA), CMYK and greyscale images are
    converted to RGB, and 16-bit greyscale is scaled to 8 bits (PIL's own conversion clips it to
    white). The content key is taken from this view, so two files get one key exactly when a model
    sees the same pixels (a palette image's indices alone do not say what it shows). Arrays pass unchanged.
    """
    if not (hasattr(image, "mode") and hasattr(image, "convert")):
        return image
    from PIL import Image, ImageOps

    if image.getexif().get(_EXIF_ORIENTATION, 1) != 1:
        image = ImageOps.exif_transpose(image)
    if image.mode in _SIXTEEN_BIT_MODES:
        pixels = np.clip(np.asarray(image, dtype=np.int64), 0, 65535) >> 8
        image = Image.fromarray(pixels.astype(np.uint8), mode="L")
    return image if image.mode == "RGB" else image.convert("RGB")


def image_content_key(image: Any) -> str:
    """SHA-256 of the pixels a model is given (``model_view``), or of an array's dtype, shape and bytes.

    Not of the file's encoding: pictures that share palette indices but not palettes get two keys.
    """
    if hasattr(image, "tobytes") and hasattr(image, "mode"):
        image = model_view(image)
        header = json.dumps([image.mode, list(image.size)]).encode()
        return hashlib.sha256(header + image.tobytes()).hexdigest()
    array = np.ascontiguousarray(image)
    return hashlib.sha256(json.dumps([str(array.dtype), list(array.shape)]).encode() + array.tobytes()).hexdigest()


def text_content(text: str, adapter: Any) -> bytes:
    """A text's identity in a cache key: its UTF-8 bytes."""
    return text.encode("utf-8")


def image_content(image: Any, adapter: Any) -> str:
    """An image's identity in a cache key: its content hash."""
    return image_content_key(image)


def request_content(request: ScoreRequest, adapter: Any) -> bytes:
    """A score request's identity in a cache key; the image's key only when the adapter's scores depend on it."""
    if request.image is not None and request.image_key is None:
        raise ValueError("ScoreRequest.image_key must be set when an image is given")
    image_key = request.image_key if adapter.uses_images else None
    return json.dumps([request.source, request.target, image_key, request.src_lang, request.tgt_lang]).encode()


def protocol_methods(protocol: type) -> list[str]:
    """The public methods a protocol (and the protocols it extends) requires, sorted."""
    names = {
        name
        for cls in protocol.__mro__
        if getattr(cls, "_is_protocol", False) and cls not in (Protocol, Generic)
        for name, value in vars(cls).items()
        if callable(value) and not name.startswith("_")
    }
    return sorted(names)


@dataclass(frozen=True, eq=False)
class Capability:
    """What a model can compute for a task, and how ``CachedModel`` serves it.

    ``value`` names the capability in cache keys, ``default_for`` and messages; ``protocol`` is
    what an adapter declaring it implements; ``method`` is the protocol's method ``CachedModel``
    calls as ``method(inputs, **options)``, one output per input; ``codec`` stores the outputs;
    ``content(input, adapter)`` is an input's identity in its cache key (with the model identity,
    ``value`` and the options); ``progress(options)`` describes a call on the progress bar.
    """

    value: str
    protocol: type
    method: str
    codec: Codec = ARRAYS
    content: Callable[[Any, Any], bytes | str] = text_content
    progress: Callable[[Mapping[str, Any]], str] | None = None

    TEXT_ENCODER: ClassVar[Capability]
    IMAGE_ENCODER: ClassVar[Capability]
    TOKEN_EMBEDDER: ClassVar[Capability]
    TRANSLATION_SCORER: ClassVar[Capability]

    def __post_init__(self) -> None:
        if self.method not in protocol_methods(self.protocol):
            raise TypeError(
                f"capability {self.value!r}: {self.method!r} is not a method of the protocol {self.protocol.__name__}"
            )

    def __repr__(self) -> str:
        return f"Capability({self.value!r})"

    @property
    def noun(self) -> str:
        """'a text encoder', for error messages."""
        return "a " + self.value.replace("_", " ")

    def description(self, options: Mapping[str, Any]) -> str:
        """What a call with these options is doing, for the progress bar."""
        return self.progress(options) if self.progress is not None else self.value.replace("_", " ")

    def missing_methods(self, adapter_class: type) -> list[str]:
        """The protocol's methods that ``adapter_class`` does not implement."""
        return [name for name in protocol_methods(self.protocol) if not callable(getattr(adapter_class, name, None))]


def _per_language(doing: str) -> Callable[[Mapping[str, Any]], str]:
    return lambda options: f"{doing} ({options.get('lang') or 'any'})"


Capability.TEXT_ENCODER = Capability(
    "text_encoder", TextEncoder, "encode_texts", ARRAYS, text_content, _per_language("encoding texts")
)
Capability.IMAGE_ENCODER = Capability(
    "image_encoder", ImageEncoder, "encode_images", ARRAYS, image_content, lambda options: "encoding images"
)
Capability.TOKEN_EMBEDDER = Capability(
    "token_embedder", TokenEmbedder, "embed_tokens", TOKENS, text_content, _per_language("embedding tokens")
)
Capability.TRANSLATION_SCORER = Capability(
    "translation_scorer",
    TranslationScorer,
    "score_translations",
    ARRAYS,
    request_content,
    lambda options: "scoring translations",
)
