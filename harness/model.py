"""The model-adapter API: identity without loading, capabilities, and lazy weights."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from harness.capabilities import Capability
from harness.params import Param, resolve_params


@dataclass(frozen=True)
class ModelIdentity:
    """Everything that determines a model's outputs; the cache key and results both use it."""

    name: str
    adapter: str
    source: str | None = None
    revision: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    dtype: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict."""
        return asdict(self)

    def digest(self) -> str:
        """A stable SHA-256 of the identity."""
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True, default=str).encode()).hexdigest()


class ModelAdapter:
    """Base class of model adapters.

    Construction must be cheap: it records the arguments and works out the identity (for
    example a Hub revision or a hash of local weight files) but loads no weights. Weights are
    loaded by ``load()`` the first time a capability method needs them, so a run answered
    entirely from the cache never loads them.
    """

    capabilities: ClassVar[frozenset[Capability]] = frozenset()
    params: ClassVar[Mapping[str, Param]] = {}

    def __init__(self, name: str, args: Mapping[str, Any] | None = None, *, device: str = "cpu", batch_size: int = 32):
        self.name = name
        self.args = resolve_params(self.params, args or {}, f"model {name!r}")
        self.device = device
        self.batch_size = batch_size
        self._loaded = False

    @property
    def adapter_name(self) -> str:
        """The adapter's class path, recorded in results."""
        return f"{type(self).__module__}:{type(self).__qualname__}"

    def identity(self) -> ModelIdentity:
        """The model's identity; adapters with weights add source and revision."""
        return ModelIdentity(name=self.name, adapter=self.adapter_name, args=self.args)

    def ensure_loaded(self) -> None:
        """Load the weights once."""
        if not self._loaded:
            self.load()
            self._loaded = True

    def load(self) -> None:
        """Load weights; adapters without weights need not override it."""


def local_revision(path: str | os.PathLike[str]) -> str:
    """A content hash of the files in a local model folder (or of one file).

    Weight files are large, so each file's hash is remembered in the harness cache keyed by
    (path, size, modification time) and recomputed only when the file changes.
    """
    from harness.cache import default_cache

    root = Path(path)
    files = sorted(p for p in (root.rglob("*") if root.is_dir() else [root]) if p.is_file())
    combined = hashlib.sha256()
    cache = default_cache()
    for file in files:
        stat = file.stat()
        memo_key = f"filehash:{file.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"
        digest = cache.get_text(memo_key)
        if digest is None:
            digest = file_sha256(file)
            cache.put_text(memo_key, digest)
        combined.update(f"{file.relative_to(root) if root.is_dir() else file.name}\0{digest}\n".encode())
    return "sha256:" + combined.hexdigest()[:16]


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hub_revision(repo_id: str, revision: str | None = None) -> str:
    """The commit a Hub model id resolves to (from the local Hub cache when offline)."""
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(repo_id, revision=revision, allow_patterns=["config.json"])
    except Exception:
        return revision or "unresolved"
    return Path(folder).name


def source_revision(source: str, revision: str | None = None) -> str:
    """Revision of a model source: a content hash for a local path, a commit for a Hub id."""
    if Path(source).exists():
        return local_revision(source)
    return hub_revision(source, revision)
