"""A content-addressed, crash-safe, multi-process disk cache (one SQLite file) that heals itself.

Keys are SHA-256 digests of (model identity, capability, parameters, exact input bytes); values
are bytes, stored with a checksum over key and value. SQLite commits atomically, so a process
killed mid-write leaves either the whole entry or none of it, and several processes (ranks,
shards) can share one cache.

The cache is an accelerator, never a reason for a run to fail or to be wrong:

- a damaged file (garbage pages, a broken header) is moved aside to
  ``cache.sqlite3.corrupt-<time>``, with one warning, and the run continues with a fresh file;
- a value whose checksum does not match is a miss (it is computed again and replaced);
- a write that fails (full disk, I/O error, a lock held too long) costs one warning, and the
  value is simply not stored;
- a folder that cannot be written (read-only, full) is read without ever being written, and one
  that cannot be created or opened at all is not used: one warning each, and the run goes on.

``caching(False)`` (``--no-cache``) makes ``default_cache()`` return None, so no cache file is
opened at all, not even for the weight-hash memo of ``harness.adapters.model.local_revision``.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import io
import json
import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from harness.errors import HarnessError

TABLE = "entries_v2"  # v2: every value carries a checksum
_SCHEMA = f"CREATE TABLE IF NOT EXISTS {TABLE} (key TEXT PRIMARY KEY, value BLOB NOT NULL, checksum BLOB NOT NULL)"
_OLD_TABLES = ("entries",)  # v1 values, unreachable since model identities carry the adapter's code
_CHUNK = 500  # keys per SELECT, below SQLite's host-parameter limit
_CORRUPTION_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
T = TypeVar("T")


def default_cache_dir() -> Path:
    """``HARNESS_CACHE_DIR``, else the user cache folder (``$XDG_CACHE_HOME/xling-harness``)."""
    if os.environ.get("HARNESS_CACHE_DIR"):
        return Path(os.environ["HARNESS_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "xling-harness"


def checksum(key: str, value: bytes) -> bytes:
    """A 16-byte BLAKE2b digest of key and value: a value stored under another key, or damaged, fails it."""
    digest = hashlib.blake2b(digest_size=16)
    digest.update(key.encode())
    digest.update(b"\0")
    digest.update(value)
    return digest.digest()


def is_corruption(exc: sqlite3.Error) -> bool:
    """True when SQLite says the file is damaged or is not a database."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _CORRUPTION_CODES
    text = str(exc)
    return "malformed" in text or "not a database" in text


def _inode(path: Path) -> tuple[int, int] | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _warn(message: str) -> None:
    print(f"harness: warning: {message}", file=sys.stderr)


class Cache:
    """Bytes by key in ``<folder>/cache.sqlite3``."""

    def __init__(self, folder: str | os.PathLike[str] | None = None):
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self._local = threading.local()
        self._warned: set[str] = set()
        self.read_only = False  # the folder cannot be written: values are read, never stored
        self.unused = False  # the folder cannot be read either: every lookup misses
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self._give_up(exc)
            return
        self._run(lambda connection: None, self._read_only_or_unused)  # opens (and heals) the file now

    def _read_only_or_unused(self, exc: sqlite3.Error | OSError) -> None:
        """The file cannot be opened for writing: read it as it is, or (no file, unreadable) use none."""
        self._drop_connection()
        if self.path.is_file():
            self.read_only = True
            try:
                self._connection().execute(f"SELECT 1 FROM {TABLE} LIMIT 1").fetchall()
            except (sqlite3.Error, OSError):
                self._drop_connection()
            else:
                _warn(
                    f"cache folder {self.folder} cannot be written ({exc}); reading the cache read-only: "
                    "new model outputs are not stored (results are unaffected)"
                )
                return
        self._give_up(exc)

    def _give_up(self, exc: BaseException) -> None:
        self.unused = True
        _warn(
            f"cache folder {self.folder} is not usable ({exc}); running without a cache "
            "(set HARNESS_CACHE_DIR to a writable folder to keep model outputs)"
        )

    @property
    def path(self) -> Path:
        """The SQLite file."""
        return self.folder / "cache.sqlite3"

    def _unusable(self, exc: BaseException) -> HarnessError:
        return HarnessError(
            f"cache folder {self.folder} is not usable: {exc} (set HARNESS_CACHE_DIR, or pass --no-cache)"
        )

    def _raise_unusable(self, exc: sqlite3.Error | OSError) -> Any:
        raise self._unusable(exc)

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        """Only one process at a time creates, switches to WAL, or moves aside the file.

        SQLite answers a concurrent journal-mode change with "database is locked" at once,
        without waiting; and two processes must not both move a damaged file aside.
        """
        with open(self.folder / "cache.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            yield

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection, reopened after a fork or when the file was replaced (healed by another process)."""
        local = self._local
        connection: sqlite3.Connection | None = getattr(local, "connection", None)
        if connection is not None and local.pid == os.getpid() and _inode(self.path) == local.inode:
            return connection
        if connection is not None and local.pid == os.getpid():
            connection.close()
        local.connection = None
        if self.read_only:  # no lock file, no journal: immutable, as nothing may write a read-only folder
            connection = sqlite3.connect(
                f"{self.path.absolute().as_uri()}?mode=ro&immutable=1", uri=True, isolation_level=None
            )
            local.pid, local.inode, local.connection = os.getpid(), _inode(self.path), connection
            return connection
        with self._file_lock():
            connection = sqlite3.connect(self.path, timeout=600, isolation_level=None)
            local.pid, local.inode = os.getpid(), _inode(self.path)
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("PRAGMA synchronous=NORMAL")
                connection.execute(_SCHEMA)
                for old in _OLD_TABLES:
                    connection.execute(f"DROP TABLE IF EXISTS {old}")
            except BaseException:
                connection.close()
                raise
        local.connection = connection
        return connection

    def _drop_connection(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None and self._local.pid == os.getpid():
            with contextlib.suppress(sqlite3.Error):
                connection.close()
        self._local.connection = None

    def _run(
        self, operation: Callable[[sqlite3.Connection], T], on_failure: Callable[[sqlite3.Error | OSError], T]
    ) -> T:
        """Run one operation; a damaged file is moved aside and the operation retried once on a fresh file."""
        for attempt in range(2):
            try:
                return operation(self._connection())
            except sqlite3.DatabaseError as exc:
                if not is_corruption(exc) or attempt == 1:
                    return on_failure(exc)
                try:
                    self._move_aside(exc)
                except (
                    OSError
                ) as move_failed:  # e.g. a read-only folder: the cache cannot heal, the run goes on without it
                    return on_failure(move_failed)
            except OSError as exc:
                return on_failure(exc)
        raise AssertionError("unreachable")

    def _move_aside(self, exc: sqlite3.Error) -> None:
        """Move the damaged file (and its WAL files) to ``cache.sqlite3.corrupt-<time>`` unless another process already did."""
        opened = getattr(self._local, "inode", None)
        self._drop_connection()
        with self._file_lock():
            if _inode(self.path) != opened:  # replaced since we opened it: someone else healed it
                return
            stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
            aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
        _warn(f"cache file {self.path} is damaged ({exc}); moved it to {aside.name} and continuing with an empty cache")

    def _warn_once(self, kind: str, message: str) -> None:
        if kind not in self._warned:
            self._warned.add(kind)
            _warn(message)

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        """The stored values of those keys that are present and intact (a damaged value is a miss)."""
        keys = list(dict.fromkeys(keys))
        if self.unused:
            return {}

        def select(connection: sqlite3.Connection) -> list[tuple[str, bytes, bytes]]:
            rows: list[tuple[str, bytes, bytes]] = []
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows += connection.execute(f"SELECT key, value, checksum FROM {TABLE} WHERE key IN ({marks})", chunk)
            return rows

        def unreadable(exc: sqlite3.Error | OSError) -> list[tuple[str, bytes, bytes]]:
            self._warn_once("read", f"cache file {self.path} could not be read ({exc}); computing without it")
            return []

        found: dict[str, bytes] = {}
        damaged = 0
        for key, value, stored in self._run(select, unreadable):
            if isinstance(value, bytes) and isinstance(stored, bytes) and checksum(key, value) == stored:
                found[key] = value
            else:
                damaged += 1
        if damaged:
            self._warn_once(
                "damaged", f"cache file {self.path}: {damaged} damaged value(s) ignored; they are computed again"
            )
        return found

    def put_many(self, items: Mapping[str, bytes]) -> None:
        """Store values in one atomic transaction (a failed write is a warning: the values are just not kept)."""
        if not items or self.read_only or self.unused:
            return
        rows = [(key, value, checksum(key, value)) for key, value in items.items()]

        def insert(connection: sqlite3.Connection) -> None:
            connection.execute("BEGIN IMMEDIATE")
            try:
                connection.executemany(f"INSERT OR REPLACE INTO {TABLE} VALUES (?, ?, ?)", rows)
                connection.execute("COMMIT")
            except BaseException:
                try:
                    connection.execute("ROLLBACK")
                except sqlite3.Error:
                    self._drop_connection()  # no transaction left to roll back, or the file is gone: start over
                raise

        def unwritable(exc: sqlite3.Error | OSError) -> None:
            self._warn_once(
                "write",
                f"cache file {self.path} could not be written ({exc}); results are unaffected, "
                "but these model outputs are not kept for the next run",
            )

        self._run(insert, unwritable)

    def get_text(self, key: str) -> str | None:
        """A small text value, or None (also for a value that is not valid UTF-8)."""
        value = self.get_many([key]).get(key)
        try:
            return value.decode() if value is not None else None
        except UnicodeDecodeError:
            return None

    def put_text(self, key: str, value: str) -> None:
        """Store a small text value."""
        self.put_many({key: value.encode()})

    def __len__(self) -> int:
        if self.unused:
            return 0
        return int(
            self._run(
                lambda connection: connection.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0],
                self._raise_unusable,
            )
        )


_DEFAULT: dict[Path, Cache] = {}
_ENABLED: ContextVar[bool] = ContextVar("harness_cache_enabled", default=True)


@contextlib.contextmanager
def caching(enabled: bool) -> Iterator[None]:
    """Within the block, ``default_cache()`` is None when ``enabled`` is False (``--no-cache``)."""
    token = _ENABLED.set(enabled)
    try:
        yield
    finally:
        _ENABLED.reset(token)


def default_cache() -> Cache | None:
    """The cache in the default folder (one instance per folder and process), or None under ``caching(False)``."""
    if not _ENABLED.get():
        return None
    folder = default_cache_dir()
    if folder not in _DEFAULT:
        _DEFAULT[folder] = Cache(folder)
    return _DEFAULT[folder]


def make_key(*parts: Any) -> str:
    """SHA-256 over parts: bytes are taken as they are, anything else as canonical JSON."""
    digest = hashlib.sha256()
    for part in parts:
        _add_part(digest, part)
    return digest.hexdigest()


def make_keys(prefix: Sequence[Any], lasts: Iterable[Any]) -> list[str]:
    """``make_key(*prefix, last)`` for each of ``lasts``, the common prefix hashed once."""
    common = hashlib.sha256()
    for part in prefix:
        _add_part(common, part)
    keys = []
    for last in lasts:
        digest = common.copy()
        _add_part(digest, last)
        keys.append(digest.hexdigest())
    return keys


def _add_part(digest: Any, part: Any) -> None:
    data = part if isinstance(part, bytes) else json.dumps(part, sort_keys=True, default=str).encode()
    digest.update(len(data).to_bytes(8, "little"))
    digest.update(data)


def array_to_bytes(array: np.ndarray) -> bytes:
    """An array as .npy bytes (no pickle)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def bytes_to_array(data: bytes) -> np.ndarray:
    """The inverse of ``array_to_bytes``."""
    array: np.ndarray = np.load(io.BytesIO(data), allow_pickle=False)
    return array


def bytes_to_arrays(values: Mapping[str, bytes]) -> dict[str, np.ndarray]:
    """``bytes_to_array`` of each value, by key; a value that does not decode is left out.

    Values whose .npy headers are the same bytes (model outputs of one dtype and shape) are decoded
    together: the header is read once and their data copied into one array, of which each gets a row.
    """
    groups: dict[bytes, list[str]] = {}
    for key, data in values.items():
        groups.setdefault(_npy_header(data), []).append(key)
    arrays: dict[str, np.ndarray] = {}
    for header, keys in groups.items():
        first = _try_decode(values[keys[0]])
        if first is None or first.ndim == 0 or len(keys) == 1 or b"'fortran_order': False" not in header:
            arrays.update((key, array) for key in keys if (array := _try_decode(values[key])) is not None)
            continue
        size = len(header) + first.nbytes
        whole = [key for key in keys if len(values[key]) == size]
        rows = np.empty((len(whole), first.nbytes), dtype=np.uint8)
        for row, key in zip(rows, whole):
            row[:] = np.frombuffer(values[key], dtype=np.uint8, offset=len(header))
        stacked = rows.view(first.dtype).reshape(len(whole), *first.shape)
        arrays.update(zip(whole, stacked))
        arrays.update(
            (key, array) for key in keys if len(values[key]) != size and (array := _try_decode(values[key])) is not None
        )
    return arrays


def _npy_header(data: bytes) -> bytes:
    """The magic string, version and header of .npy bytes (empty when they are not .npy)."""
    if not data.startswith(b"\x93NUMPY") or len(data) < 10:
        return b""
    if data[6] == 1:
        return data[: 10 + int.from_bytes(data[8:10], "little")]
    return data[: 12 + int.from_bytes(data[8:12], "little")] if len(data) >= 12 else b""


def _try_decode(data: bytes) -> np.ndarray | None:
    try:
        return bytes_to_array(data)
    except Exception:  # any failure on stored bytes means: not a value
        return None
