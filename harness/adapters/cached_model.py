"""The model as tasks see it: every capability call goes through the cache.

Only inputs missing from the cache reach the adapter, deduplicated, in chunks that are stored
as soon as they are computed (a killed run keeps what it finished); each chunk is computed in a
worker thread (``harness.interrupt``), so Ctrl-C or SIGTERM stops a run at once even inside a
long native call. With ``cache=None`` every
call goes to the adapter. An adapter with ``transductive = True`` (its output for one input
depends on all inputs of the call, as TF-IDF fitted on the corpus does) receives the whole
deduplicated input set in one call, and its cache keys cover that set.

``call`` serves any ``Capability`` from its row of the table (adapter method, codec, content
key, progress description), a plugin's own as well as the built-ins; ``encode_texts``,
``encode_images``, ``embed_tokens`` and ``score_translations`` are the built-ins' shorthands.
A key is ``make_key(model identity digest, capability.value, options, [artefacts,] content)``, where
``artefacts`` is the digest of the sealed folders the outputs come from (``ModelAdapter.artefacts``: an ONNX
export, a converted or trained model), checked at every call and rebuilt when one fails.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import numpy as np

from harness.adapters.cache import Cache, bytes_to_array, bytes_to_arrays, make_key, make_keys
from harness.adapters.capabilities import (  # noqa: F401 - re-exported for callers
    Capability,
    Codec,
    ScoreRequest,
    TokenEmbeddings,
    _decode_tokens,
    _encode_tokens,
    image_content_key,
    model_view,
)
from harness.adapters.model import ModelAdapter
from harness.artefacts import sealed_digest, verify
from harness.errors import CapabilityError, HarnessError
from harness.interrupt import interruptible
from harness.progress import Progress

_CHUNK_BATCHES = 8  # the largest chunk of inputs computed (and cached) at once, in batches (a fixed schedule: the
# chunks, and so the batches a scorer pads together, never depend on the machine's speed)


class CachedModel:
    """Wraps a ``ModelAdapter`` and serves its capabilities through a ``Cache``."""

    def __init__(
        self, adapter: ModelAdapter, cache: Cache | None, progress: Progress | None = None, partition: Any = None
    ):
        self.adapter = adapter
        self.cache = cache
        self.progress = progress or Progress(enabled=False)
        self.partition = partition  # harness.run.distributed.RankPartition or ShardPartition, or None
        self.placeholders = 0  # values a shard did not have and stood in for with blanks
        self.identity = adapter.identity()
        self._identity_digest = self.identity.digest()
        self._run: Callable[[int], None] | None = None  # the one progress run of ``progress_run``, while it lasts

    @contextmanager
    def progress_run(self, description: str, total: int) -> Iterator[None]:
        """Calls made inside report as one progress run of ``total`` items (cached ones counted as done), not a
        run each: a task that feeds one job in pieces (images decoded a chunk at a time) shows one line."""
        with self.progress.task(f"{self.adapter.name}: {description}", total=total) as advance:
            self._run = advance
            try:
                yield
            finally:
                self._run = None

    @property
    def capabilities(self) -> frozenset[Capability]:
        """What the wrapped adapter provides."""
        return self.adapter.capabilities

    def _require(self, capability: Capability) -> None:
        if capability not in self.adapter.capabilities:
            raise CapabilityError(f"model {self.adapter.name!r} is not {capability.noun}")

    def call(
        self,
        capability: Capability,
        items: Sequence[Any],
        options: Mapping[str, Any] | None = None,
        keys: Sequence[bytes | str] | None = None,
    ) -> list[Any]:
        """One output of ``capability`` per item, in order: from the cache, or from the adapter's method.

        The adapter method is called as ``method(chunk, **options)``; ``options`` enter every
        cache key. ``keys`` are the items' content identities when already known (else
        ``capability.content`` computes them).
        """
        options = dict(options or {})
        contents = list(keys) if keys is not None else [capability.content(item, self.adapter) for item in items]
        self._require(capability)
        method = getattr(self.adapter, capability.method)
        codec, description = capability.codec, capability.description(options)
        transductive = self.adapter.transductive
        key_options = {**options, "corpus": make_key(*sorted(set(contents)))} if transductive else options
        prefix = (self._identity_digest, capability.value, key_options)
        artefacts = self._artefacts_digest(capability) if self.cache is not None else None  # keys only
        cache_keys = make_keys((*prefix, artefacts) if artefacts else prefix, contents)
        stored = self.cache.get_many(cache_keys) if self.cache is not None else {}
        values = _decoded(stored, codec, capability.value)
        position = {key: i for i, key in enumerate(cache_keys)}  # an item is read only when its output is missing

        def compute(chunk: list[str]) -> list[Any]:
            return list(method([items[position[key]] for key in chunk], **options))

        missing = sorted(key for key in position if key not in values)
        if self._run is not None:
            self._run(len(cache_keys) - len(missing))  # served by the cache (or a repeat of a missing one): done
        if self.partition is None:  # the outputs are encoded only to be cached
            self._compute(missing, values, compute, codec, transductive, description, self.cache is not None)
        else:
            self._compute_partitioned(missing, values, compute, codec, transductive, description)
        return [values[key] if key in values else codec.blank(values) for key in cache_keys]

    def _artefacts_digest(self, capability: Capability) -> str | None:
        """The sealed digests of the folders the outputs of ``capability`` come from (``ModelAdapter.artefacts``),
        as one key part; built or rebuilt first when one is missing or fails its manifest. None when there are none.
        """
        folders = self.adapter.artefacts(capability)
        digests = [sealed_digest(folder) for folder in folders]
        if None in digests:
            interruptible(self.adapter.prepare, capability)  # a build on first use: a signal stops it too
            folders = self.adapter.artefacts(capability)
            digests = [sealed_digest(folder) for folder in folders]
        for folder, digest in zip(folders, digests):
            if digest is None:  # built and verified by prepare, then changed: in use by this process, never rebuilt
                raise HarnessError(
                    f"model {self.adapter.name!r}: {folder} {verify(folder)[1]} while in use; "
                    "run again to build it again"
                )
        return make_key(*digests) if digests else None

    def _compute(
        self,
        todo: list[str],
        values: dict[str, Any],
        compute: Callable[[list[str]], list[Any]],
        codec: Codec,
        transductive: bool,
        description: str,
        encode: bool = True,
    ) -> dict[str, bytes]:
        """Compute the outputs of the keys ``todo`` in chunks (``compute`` takes keys), caching each chunk as soon as it
        is done; returns the encoded values (none with ``encode=False``, for a run with no cache nor partition)."""
        encoded: dict[str, bytes] = {}
        if not todo:
            return encoded
        interruptible(self.adapter.ensure_loaded)  # a conversion or export on first use: a signal stops it too
        batch = max(1, self.adapter.batch_size)
        chunk_size, largest = (len(todo), len(todo)) if transductive else (batch, batch * _CHUNK_BATCHES)
        start = 0
        run = self._run
        reporting = nullcontext(run) if run else self.progress.task(f"{self.adapter.name}: {description}", len(todo))
        with reporting as advance:
            while start < len(todo):
                chunk = todo[start : start + chunk_size]
                start += len(chunk)
                chunk_size = min(chunk_size * 2, largest)  # one batch first, then twice as many: progress shows early
                results = interruptible(compute, chunk, while_waiting=lambda: advance(0))
                if len(results) != len(chunk):
                    raise RuntimeError(
                        f"{self.adapter.adapter_name} returned {len(results)} results for {len(chunk)} inputs"
                    )
                if encode:
                    fresh = {key: codec.encode(value) for key, value in zip(chunk, results)}
                    if self.cache is not None:
                        self.cache.put_many(fresh)
                    encoded.update(fresh)
                values.update(zip(chunk, results))
                advance(len(chunk))
        return encoded

    def _compute_partitioned(
        self,
        missing: list[str],
        values: dict[str, Any],
        compute: Callable[[list[str]], list[Any]],
        codec: Codec,
        transductive: bool,
        description: str,
    ) -> None:
        """Compute this process's part of the missing keys, then share with the other ranks."""
        partition = self.partition
        union = partition.agree(missing, description)
        mine = (union if partition.mine(union[:1]) else []) if transductive else partition.mine(union)
        encoded = self._compute(
            [key for key in mine if key not in values], values, compute, codec, transductive, description
        )
        encoded.update({key: codec.encode(values[key]) for key in mine if key not in encoded})
        merged = partition.exchange(encoded, description)
        received = {key: data for key, data in merged.items() if key not in values}
        if received and self.cache is not None:
            self.cache.put_many(received)
        values.update((key, codec.decode(data)) for key, data in received.items())
        self.placeholders += sum(1 for key in union if key not in values)

    def encode_texts(self, texts: Sequence[str], lang: str | None = None) -> np.ndarray:
        """Text vectors, shape (len(texts), dim)."""
        return _stack(self.call(Capability.TEXT_ENCODER, texts, {"lang": lang}))

    def encode_images(self, images: Sequence[Any], keys: Sequence[str] | None = None) -> np.ndarray:
        """Image vectors, shape (len(images), dim); ``keys`` are content hashes if already known.

        The adapter receives each image as ``model_view`` gives it (oriented, 8-bit RGB), and its key is that view's.
        With ``keys``, an image is read (``images[i]``) only when its vector is not cached: ``images`` may be a
        sequence that makes its images when read.
        """
        if keys is None:
            return _stack(self.call(Capability.IMAGE_ENCODER, [model_view(image) for image in images]))
        return _stack(self.call(Capability.IMAGE_ENCODER, _Views(images), keys=keys))

    def embed_tokens(self, texts: Sequence[str], lang: str | None = None) -> list[TokenEmbeddings]:
        """Token vectors per text."""
        return self.call(Capability.TOKEN_EMBEDDER, texts, {"lang": lang})

    def score_translations(self, requests: Sequence[ScoreRequest], **options: Any) -> list[np.ndarray]:
        """Target-token log-probabilities per request; ``options`` (e.g. temperature) go to the adapter.

        The image enters a request's key only when the adapter's scores depend on it (``uses_images``).
        """
        return self.call(Capability.TRANSLATION_SCORER, requests, options)


def _stack(rows: list[np.ndarray]) -> np.ndarray:
    if not rows:
        return np.zeros((0, 0), dtype=np.float32)
    return np.stack(rows).astype(np.float32, copy=False)


class _Views(Sequence[Any]):
    """``model_view`` of each image, made when read."""

    def __init__(self, images: Sequence[Any]):
        self.images = images

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: Any) -> Any:
        return model_view(self.images[index])


def _decoded(stored: dict[str, bytes], codec: Codec, what: str) -> dict[str, Any]:
    """The cached values that decode; one that does not (e.g. written by an older codec) is a miss, said once."""
    values: dict[str, Any] = {}
    if codec.decode is bytes_to_array:  # arrays of one shape are decoded together
        values.update(bytes_to_arrays(stored))
    else:
        for key, data in stored.items():
            try:
                values[key] = codec.decode(data)
            except Exception:  # any failure of a codec on stored bytes means: compute it again
                continue
    if len(values) < len(stored):
        print(
            f"harness: warning: {len(stored) - len(values)} cached {what} value(s) could not be decoded; they are computed again",
            file=sys.stderr,
        )
    return values
