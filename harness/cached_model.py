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
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Codec:
    """How one capability's outputs are stored, and the stand-in for a value a shard lacks."""

    encode: Callable[[Any], bytes]
    decode: Callable[[bytes], Any]
    blank: Callable[[dict[str, Any]], Any]


def _blank_array(values: dict[str, Any]) -> np.ndarray:
    template = next(iter(values.values()), None)
    return np.zeros_like(template) if template is not None else np.zeros(1, dtype=np.float32)


def _blank_tokens(values: dict[str, Any]) -> TokenEmbeddings:
    template = next(iter(values.values()), None)
    dim = template.vectors.shape[1] if template is not None else 1
    return TokenEmbeddings([], np.zeros((0, dim), dtype=np.float32))


def _encode_tokens(value: TokenEmbeddings) -> bytes:
    header = json.dumps(value.tokens).encode()
    return len(header).to_bytes(8, "little") + header + array_to_bytes(value.vectors)


def _decode_tokens(data: bytes) -> TokenEmbeddings:
    size = int.from_bytes(data[:8], "little")
    return TokenEmbeddings(json.loads(data[8 : 8 + size]), bytes_to_array(data[8 + size :]))


ARRAYS = Codec(array_to_bytes, bytes_to_array, _blank_array)
TOKENS = Codec(_encode_tokens, _decode_tokens, _blank_tokens)


class CachedModel:
    """Wraps a ``ModelAdapter`` and serves its capabilities through a ``Cache``."""

    def __init__(self, adapter: ModelAdapter, cache: Cache | None, progress: Progress | None = None, partition: Any = None):
        self.adapter = adapter
        self.cache = cache
        self.progress = progress or Progress(enabled=False)
        self.partition = partition  # harness.distributed.RankPartition or ShardPartition, or None
        self.placeholders = 0  # values a shard did not have and stood in for with blanks
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
        codec: Codec,
        description: str,
    ) -> list[Any]:
        self._require(capability)
        transductive = getattr(self.adapter, "transductive", False)
        if transductive:  # each output depends on the whole input set: key on it too
            options = {**options, "corpus": make_key(*sorted(set(contents)))}
        keys = [make_key(self._identity_digest, capability.value, options, c) for c in contents]
        stored = self.cache.get_many(keys) if self.cache is not None else {}
        values: dict[str, Any] = {key: codec.decode(data) for key, data in stored.items()}
        by_key = dict(zip(keys, items))
        missing = sorted(key for key in by_key if key not in values)
        if self.partition is None:
            self._compute(missing, by_key, values, compute, codec, transductive, description)
        else:
            self._compute_partitioned(missing, by_key, values, compute, codec, transductive, description)
        return [values[key] if key in values else codec.blank(values) for key in keys]

    def _compute(self, todo: list[str], by_key: dict[str, Any], values: dict[str, Any], compute: Callable[[list[Any]], list[Any]],
                 codec: Codec, transductive: bool, description: str) -> dict[str, bytes]:
        """Compute ``todo`` in chunks, caching each chunk as soon as it is done; returns the encoded values."""
        encoded: dict[str, bytes] = {}
        if not todo:
            return encoded
        self.adapter.ensure_loaded()
        chunk_size = len(todo) if transductive else max(1, self.adapter.batch_size) * 8
        with self.progress.task(description, total=len(todo)) as advance:
            for start in range(0, len(todo), chunk_size):
                chunk = todo[start : start + chunk_size]
                results = compute([by_key[key] for key in chunk])
                if len(results) != len(chunk):
                    raise RuntimeError(f"{self.adapter.adapter_name} returned {len(results)} results for {len(chunk)} inputs")
                fresh = {key: codec.encode(value) for key, value in zip(chunk, results)}
                if self.cache is not None:
                    self.cache.put_many(fresh)
                encoded.update(fresh)
                values.update(zip(chunk, results))
                advance(len(chunk))
        return encoded

    def _compute_partitioned(self, missing: list[str], by_key: dict[str, Any], values: dict[str, Any],
                             compute: Callable[[list[Any]], list[Any]], codec: Codec, transductive: bool, description: str) -> None:
        """Compute this process's part of the missing keys, then share with the other ranks."""
        partition = self.partition
        union = partition.agree(missing, description)
        mine = (union if partition.mine(union[:1]) else []) if transductive else partition.mine(union)
        encoded = self._compute([key for key in mine if key not in values], by_key, values, compute, codec, transductive, description)
        encoded.update({key: codec.encode(values[key]) for key in mine if key not in encoded})
        merged = partition.exchange(encoded, description)
        received = {key: data for key, data in merged.items() if key not in values}
        if received and self.cache is not None:
            self.cache.put_many(received)
        values.update((key, codec.decode(data)) for key, data in received.items())
        self.placeholders += sum(1 for key in union if key not in values)

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """Text vectors, shape (len(texts), dim)."""
        rows = self._cached_map(
            Capability.TEXT_ENCODER, {"lang": lang}, [t.encode("utf-8") for t in texts], list(texts),
            lambda chunk: list(self.adapter.encode_texts(chunk, lang=lang)),
            ARRAYS, f"encoding texts ({lang or 'any'})",
        )
        return _stack(rows)

    def encode_images(self, images: Sequence[Any], keys: Sequence[str] | None = None) -> np.ndarray:
        """Image vectors, shape (len(images), dim); ``keys`` are content hashes if already known."""
        contents = list(keys) if keys is not None else [image_content_key(image) for image in images]
        rows = self._cached_map(
            Capability.IMAGE_ENCODER, {}, contents, list(images),
            lambda chunk: list(self.adapter.encode_images(chunk)),
            ARRAYS, "encoding images",
        )
        return _stack(rows)

    def embed_tokens(self, texts: Sequence[str], lang: str | None = None) -> list[TokenEmbeddings]:
        """Token vectors per text."""
        return self._cached_map(
            Capability.TOKEN_EMBEDDER, {"lang": lang}, [t.encode("utf-8") for t in texts], list(texts),
            lambda chunk: self.adapter.embed_tokens(chunk, lang=lang),
            TOKENS, f"embedding tokens ({lang or 'any'})",
        )

    def score_translations(self, requests: Sequence[ScoreRequest], **options: Any) -> list[np.ndarray]:
        """Target-token log-probabilities per request; ``options`` (e.g. temperature) go to the adapter."""
        for request in requests:
            if request.image is not None and request.image_key is None:
                raise ValueError("ScoreRequest.image_key must be set when an image is given")
        with_images = getattr(self.adapter, "uses_images", True)  # a text-only scorer: one score whatever the image
        contents = [
            json.dumps([r.source, r.target, r.image_key if with_images else None, r.src_lang, r.tgt_lang]).encode()
            for r in requests
        ]
        return self._cached_map(
            Capability.TRANSLATION_SCORER, options, contents, list(requests),
            lambda chunk: self.adapter.score_translations(chunk, **options),
            ARRAYS, "scoring translations",
        )


def _stack(rows: list[np.ndarray]) -> np.ndarray:
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack(rows).astype(np.float32, copy=False)
