"""A content-addressed, crash-safe, multi-process disk cache (one SQLite file).

Keys are SHA-256 digests of (model identity, capability, parameters, exact input bytes); values
are bytes. SQLite commits atomically, so a process killed mid-write leaves either the whole
entry or none of it, and several processes (ranks, shards) can share one cache.
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError

_SCHEMA = "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL)"
_CHUNK = 500  # keys per SELECT, below SQLite's host-parameter limit


def default_cache_dir() -> Path:
    """``HARNESS_CACHE_DIR``, else the user cache folder (``$XDG_CACHE_HOME/xling-harness``)."""
    if os.environ.get("HARNESS_CACHE_DIR"):
        return Path(os.environ["HARNESS_CACHE_DIR"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "xling-harness"


class Cache:
    """Bytes by key in ``<folder>/cache.sqlite3``."""

    def __init__(self, folder: str | os.PathLike[str] | None = None):
        self.folder = Path(folder) if folder is not None else default_cache_dir()
        self._local = threading.local()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            # one process at a time switches a new file to WAL and creates the table: SQLite answers a
            # concurrent journal-mode change with "database is locked" at once, without waiting
            with open(self.folder / "cache.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                self._connection().execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise HarnessError(f"cache folder {self.folder} is not usable: {exc} (set HARNESS_CACHE_DIR)") from None

    @property
    def path(self) -> Path:
        """The SQLite file."""
        return self.folder / "cache.sqlite3"

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None or self._local.pid != os.getpid():  # never reuse across fork
            connection = sqlite3.connect(self.path, timeout=600, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            self._local.connection, self._local.pid = connection, os.getpid()
        return connection

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        """The stored values of those keys that are present."""
        keys = list(dict.fromkeys(keys))
        found: dict[str, bytes] = {}
        connection = self._connection()
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" * len(chunk))
            found.update(connection.execute(f"SELECT key, value FROM entries WHERE key IN ({marks})", chunk))
        return found

    def put_many(self, items: Mapping[str, bytes]) -> None:
        """Store values in one atomic transaction."""
        if not items:
            return
        connection = self._connection()
        connection.execute("BEGIN IMMEDIATE")
        try:
            connection.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?)", items.items())
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")

    def get_text(self, key: str) -> str | None:
        """A small text value, or None."""
        value = self.get_many([key]).get(key)
        return value.decode() if value is not None else None

    def put_text(self, key: str, value: str) -> None:
        """Store a small text value."""
        self.put_many({key: value.encode()})

    def __len__(self) -> int:
        return self._connection().execute("SELECT COUNT(*) FROM entries").fetchone()[0]


_DEFAULT: dict[Path, Cache] = {}


def default_cache() -> Cache:
    """The cache in the default folder (one instance per folder and process)."""
    folder = default_cache_dir()
    if folder not in _DEFAULT:
        _DEFAULT[folder] = Cache(folder)
    return _DEFAULT[folder]


def make_key(*parts: Any) -> str:
    """SHA-256 over parts: bytes are taken as they are, anything else as canonical JSON."""
    digest = hashlib.sha256()
    for part in parts:
        data = part if isinstance(part, bytes) else json.dumps(part, sort_keys=True, default=str).encode()
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return digest.hexdigest()


def array_to_bytes(array: np.ndarray) -> bytes:
    """An array as .npy bytes (no pickle)."""
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def bytes_to_array(data: bytes) -> np.ndarray:
    """The inverse of ``array_to_bytes``."""
    return np.load(io.BytesIO(data), allow_pickle=False)
