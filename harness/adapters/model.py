"""The model-adapter API: identity without loading, capabilities, and lazy weights."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import pickle
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from harness.adapters.capabilities import Capability
from harness.errors import HarnessError
from harness.params import Param, resolve_params

if TYPE_CHECKING:
    from harness.adapters.cache import Cache


@dataclass(frozen=True)
class ModelIdentity:
    """Everything that determines a model's outputs (weights, arguments, adapter code); the cache key and results both use it."""

    name: str
    adapter: str
    source: str | None = None
    revision: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    dtype: str | None = None
    # the adapter's code (filled from ``adapter`` when none is given): its distribution and version, and a
    # hash of its source when that can change without a new version (editable or folder installs)
    distribution: str | None = None
    distribution_version: str | None = None
    code: str | None = None

    def __post_init__(self) -> None:
        if self.distribution is None and self.distribution_version is None and self.code is None:
            from harness.results.provenance import code_identity

            found = code_identity(self.adapter)
            object.__setattr__(self, "distribution", found.distribution)
            object.__setattr__(self, "distribution_version", found.version)
            object.__setattr__(self, "code", found.source_hash)

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
    # The flags that enter cache keys (harness.adapters.cached_model), declared here once with the safe default:
    uses_images: ClassVar[bool] = True  # a scorer's scores depend on the image; False: one score per (source, target)
    transductive: ClassVar[bool] = False  # True: an output depends on all inputs of a call; keys then cover that set
    # What the model's distribution documents (harness.adapters.card): e.g. a packaged model's parameters,
    # dimension, languages and licence. They describe the model; they never enter its identity.
    card_facts: ClassVar[Mapping[str, Any]] = {}

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

    def card(self) -> dict[str, Any]:
        """The model's card (``harness.adapters.card``): parameters, output dimension, maximum input length,
        languages, licence, source and weights digest, each None when unknown; read from the identity, the
        model's files and ``card_facts``, without loading weights. Beside the identity in results, never in it."""
        from harness.adapters.card import describe

        return describe(self, self.identity())

    def ensure_loaded(self) -> None:
        """Load the weights once; a pickled weights file that PyTorch refuses to unpickle is a one-line error."""
        if not self._loaded:
            try:
                self.load()
            except pickle.UnpicklingError as exc:
                raise HarnessError(
                    f"model {self.name!r}: refused to load a pickled weights file ({unpickling_reason(exc)}); "
                    "weights are unpickled with weights_only=True, which never runs code: "
                    "use a safetensors copy of the model"
                ) from None
            self._loaded = True

    def load(self) -> None:
        """Load weights; adapters without weights need not override it."""

    def artefacts(self, capability: Capability) -> list[Path]:
        """The folders the harness builds for this model (ONNX exports, converted or trained models) that the
        outputs of ``capability`` come from, named without building or loading anything (``harness.artefacts``).

        Their sealed digests enter the cache keys of those outputs, so outputs of a rebuilt folder never meet
        those of a damaged one. A folder whose name depends on another's contents is named once that one is built.
        """
        return []

    def prepare(self, capability: Capability) -> None:
        """Build (or verify and rebuild) the folders ``artefacts(capability)`` names: by default, load the model."""
        self.ensure_loaded()


def unpickling_reason(exc: BaseException) -> str:
    """The informative line of PyTorch's multi-line ``weights_only`` refusal (the GLOBAL it would not load)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    chosen = next((line for line in lines if "GLOBAL" in line), lines[0] if lines else type(exc).__name__)
    return chosen.rstrip(".")


RACY_SECONDS = 2.0  # a file changed this recently may change again within one timestamp tick: not memoised


def local_revision(path: str | os.PathLike[str]) -> str:
    """A content hash of the files in a local model folder (or of one file).

    Weight files are large, so each file's hash is remembered in the harness cache under its
    path, device, inode, size, modification time and status-change time (``ctime``, which no
    program can set back): a file rewritten in place, replaced, or touched back to its old
    modification time is hashed again. A file changed within the last ``RACY_SECONDS`` is not
    memoised (it could change again within the same timestamp tick). Under ``--no-cache`` no
    memo is kept and every file is hashed.
    """
    from harness.adapters.cache import default_cache

    root = Path(path)
    files = sorted(p for p in (root.rglob("*") if root.is_dir() else [root]) if p.is_file())
    combined = hashlib.sha256()
    cache = default_cache()
    for file in files:
        digest = memoised_sha256(file, cache)
        name = file.relative_to(root) if root.is_dir() else file.name
        combined.update(f"{name}\0{digest}\n".encode("utf-8", "surrogateescape"))  # a name's bytes, UTF-8 or not
    return "sha256:" + combined.hexdigest()[:16]


def memoised_sha256(file: Path, cache: Cache | None) -> str:
    """SHA-256 of a file, remembered in ``cache`` (a ``harness.adapters.cache.Cache`` or None) while the file is unchanged."""
    if cache is None:
        return file_sha256(file)
    before = file.stat()
    # a path that is not UTF-8 (a Latin-1 byte) keeps that byte as the text \\udcXX; the inode names the file anyway
    path = str(file.resolve()).encode("utf-8", "backslashreplace").decode()
    memo_key = (
        f"filehash:v2:{path}:{before.st_dev}:{before.st_ino}:{before.st_size}:{before.st_mtime_ns}:{before.st_ctime_ns}"
    )
    digest = cache.get_text(memo_key)
    if digest is None:
        digest = file_sha256(file)
        after = file.stat()
        unchanged = (after.st_ino, after.st_size, after.st_mtime_ns, after.st_ctime_ns) == (
            before.st_ino,
            before.st_size,
            before.st_mtime_ns,
            before.st_ctime_ns,
        )
        if unchanged and time.time() - after.st_ctime_ns / 1e9 > RACY_SECONDS:
            cache.put_text(memo_key, digest)
    return digest


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


HUB_CONNECT_TIMEOUT = 5.0  # seconds to reach the Hub once, before any download with its retries


def hub_revision(repo_id: str, revision: str | None = None) -> str:
    """The commit a Hub model id resolves to (from the local Hub cache when offline).

    With ``HF_HUB_OFFLINE=1`` only the local Hub cache is asked ("unresolved" when the model is
    not there; loading it then fails with a clear error). Otherwise the Hub must answer a
    connection within ``HUB_CONNECT_TIMEOUT`` seconds, checked once per process, or this is an
    error suggesting ``HF_HUB_OFFLINE=1`` or a local folder, rather than a minute of retries.
    """
    from huggingface_hub import snapshot_download

    require_hub(f"model {repo_id!r}", "models", "--model")
    try:
        folder = snapshot_download(repo_id, revision=revision, allow_patterns=["config.json"])
    except Exception:
        return revision or "unresolved"
    return Path(folder).name


def require_hub(what: str, kind: str, option: str) -> None:
    """Unless ``HF_HUB_OFFLINE`` is set, fail at once, with what to do, when the Hub cannot be reached."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return
    problem = hub_unreachable(constants.ENDPOINT)
    if problem is not None:
        raise HarnessError(
            f"{what}: the Hugging Face Hub ({constants.ENDPOINT}) is unreachable ({problem}); set "
            f"HF_HUB_OFFLINE=1 to use {kind} already in the local Hub cache, or give a local folder as {option}"
        )


@functools.cache
def hub_unreachable(endpoint: str) -> str | None:
    """None when a TCP connection to the endpoint's host (or its proxy) opens within the timeout, else why not.

    Asked once per endpoint and process.
    """
    import socket
    import threading
    import urllib.parse
    import urllib.request

    url = urllib.parse.urlsplit(endpoint)
    proxy = urllib.request.getproxies().get(url.scheme)
    if proxy and url.hostname and not urllib.request.proxy_bypass(url.hostname):
        url = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
    host, port = url.hostname, url.port or (443 if url.scheme == "https" else 80)
    if not host:
        return f"no host in {endpoint!r}"
    outcome: list[str | None] = []

    def connect() -> None:  # in a thread: name resolution has no timeout of its own
        try:
            socket.create_connection((host, port), timeout=HUB_CONNECT_TIMEOUT).close()
            outcome.append(None)
        except OSError as exc:
            outcome.append(f"{type(exc).__name__}: {exc.strerror or exc}")

    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    thread.join(HUB_CONNECT_TIMEOUT)
    return outcome[0] if outcome else f"no answer within {HUB_CONNECT_TIMEOUT:g} s"


def source_revision(source: str, revision: str | None = None) -> str:
    """Revision of a model source: a content hash for a local path, a commit for a Hub id.

    A local path that is not UTF-8 (a Latin-1 byte in a folder's name) is an error: the Hugging Face
    libraries (safetensors, tokenizers) cannot open it.
    """
    if Path(source).exists():
        try:
            source.encode()
        except UnicodeEncodeError:
            shown = source.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            raise HarnessError(
                f"model {shown}: the path is not valid UTF-8, which the Hugging Face libraries (safetensors, "
                "tokenizers) cannot open; rename the folder"
            ) from None
        return local_revision(source)
    return hub_revision(source, revision)
