"""The model as tasks see it: every capability call goes through the cache.

Only inputs missing from the cache reach the adapter, deduplicated, in chunks that are stored
as soon as they are computed (a killed run keeps what it finished). With ``cache=None`` every
call goes to the adapter. An adapter with ``transductive = True`` (its output for one input
depends on all inputs of the call, as TF-IDF fitted on the corpus does) receives the whole
deduplicated input set in one call, and its cache keys cover that set.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from harness.cache import Cache, array_to_bytes, bytes_to_array, make_key
from harness.capabilities import Capability, ScoreRequest, TokenEmbeddings
from harness.errors import CapabilityError
from harness.model import ModelAdapter
from harness.progress import Progress


def image_content_key(image: Any) -> str:
    """SHA-256 of a PIL image's mode, size and pixels (or of an array's dtype, shape and bytes)."""
    if hasattr(image, "tobytes") and hasattr(image, "mode"):
        header = json.dumps([image.mode, list(image.size)]).encode()
        return hashlib.sha256(header + image.tobytes()).hexdigest()
    array = np.ascontiguousarray(image)
    return hashlib.sha256(json.dumps([str(array.dtype), list(array.shape)]).encode() + array.tobytes()).hexdigest()


def _encode_tokens(value: TokenEmbeddings) -> bytes:
    header = json.dumps(value.tokens).encode()
    return len(header).to_bytes(8, "little") + header + array_to_bytes(value.vectors)


def _decode_tokens(data: bytes) -> TokenEmbeddings:
    size = int.from_bytes(data[:8], "little")
    return TokenEmbeddings(json.loads(data[8 : 8 + size]), bytes_to_array(data[8 + size :]))


class CachedModel:
    """Wraps a ``ModelAdapter`` and serves its capabilities through a ``Cache``."""

    def __init__(self, adapter: ModelAdapter, cache: Cache | None, progress: Progress | None = None):
        self.adapter = adapter
        self.cache = cache
        self.progress = progress or Progress(enabled=False)
        self.identity = adapter.identity()
        self._identity_digest = self.identity.digest()

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What the wrapped adapter provides."""
        return self.adapter.capabilities

    def _require(self, capability: Capability) -> None:
        if capability not in self.adapter.capabilities:
            raise CapabilityError(f"model {self.adapter.name!r} is not {capability.noun}")

    def _cached_map(
        self,
        capability: Capability,
        options: dict[str, Any],
        contents: Sequence[bytes | str],
        items: Sequence[Any],
        compute: Callable[[list[Any]], list[Any]],
        encode: Callable[[Any], bytes],
        decode: Callable[[bytes], Any],
        description: str,
    ) -> list[Any]:
        self._require(capability)
        transductive = getattr(self.adapter, "transductive", False)
        if transductive:  # each output depends on the whole input set: key on it too
            options = {**options, "corpus": make_key(*sorted(set(contents)))}
        keys = [make_key(self._identity_digest, capability.value, options, c) for c in contents]
        stored = self.cache.get_many(keys) if self.cache is not None else {}
        values: dict[str, Any] = {key: decode(data) for key, data in stored.items()}
        missing: dict[str, Any] = {}
        for key, item in zip(keys, items):
            if key not in values and key not in missing:
                missing[key] = item
        if missing:
            self.adapter.ensure_loaded()
            pending = list(missing.items())
            chunk_size = len(pending) if transductive else max(1, self.adapter.batch_size) * 8
            with self.progress.task(description, total=len(pending)) as advance:
                for start in range(0, len(pending), chunk_size):
                    chunk = pending[start : start + chunk_size]
                    results = compute([item for _, item in chunk])
                    if len(results) != len(chunk):
                        raise RuntimeError(f"{self.adapter.adapter_name} returned {len(results)} results for {len(chunk)} inputs")
                    computed = {key: result for (key, _), result in zip(chunk, results)}
                    if self.cache is not None:
                        self.cache.put_many({key: encode(value) for key, value in computed.items()})
                    values.update(computed)
                    advance(len(chunk))
        return [values[key] for key in keys]

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """Text vectors, shape (len(texts), dim)."""
        rows = self._cached_map(
            Capability.TEXT_ENCODER, {"lang": lang}, [t.encode("utf-8") for t in texts], list(texts),
            lambda chunk: list(self.adapter.encode_texts(chunk, lang=lang)),
            array_to_bytes, bytes_to_array, f"encoding texts ({lang or 'any'})",
        )
        return _stack(rows)

    def encode_images(self, images: Sequence[Any], keys: Sequence[str] | None = None) -> np.ndarray:
        """Image vectors, shape (len(images), dim); ``keys`` are content hashes if already known."""
        contents = list(keys) if keys is not None else [image_content_key(image) for image in images]
        rows = self._cached_map(
            Capability.IMAGE_ENCODER, {}, contents, list(images),
            lambda chunk: list(self.adapter.encode_images(chunk)),
            array_to_bytes, bytes_to_array, "encoding images",
        )
        return _stack(rows)

    def embed_tokens(self, texts: Sequence[str], lang: str | None = None) -> list[TokenEmbeddings]:
        """Token vectors per text."""
        return self._cached_map(
            Capability.TOKEN_EMBEDDER, {"lang": lang}, [t.encode("utf-8") for t in texts], list(texts),
            lambda chunk: self.adapter.embed_tokens(chunk, lang=lang),
            _encode_tokens, _decode_tokens, f"embedding tokens ({lang or 'any'})",
        )

    def score_translations(self, requests: Sequence[ScoreRequest], **options: Any) -> list[np.ndarray]:
        """Target-token log-probabilities per request; ``options`` (e.g. temperature) go to the adapter."""
        for request in requests:
            if request.image is not None and request.image_key is None:
                raise ValueError("ScoreRequest.image_key must be set when an image is given")
        contents = [
            json.dumps([r.source, r.target, r.image_key, r.src_lang, r.tgt_lang]).encode() for r in requests
        ]
        return self._cached_map(
            Capability.TRANSLATION_SCORER, options, contents, list(requests),
            lambda chunk: self.adapter.score_translations(chunk, **options),
            array_to_bytes, bytes_to_array, "scoring translations",
        )


def _stack(rows: list[np.ndarray]) -> np.ndarray:
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack(rows).astype(np.float32, copy=False)
