"""Derived artefacts (ONNX exports, converted and trained model folders): sealed, verified, built once.

A folder the harness builds and then trusts is built in a scratch folder beside it (``.<name>.XXXXXXXX``),
sealed with a manifest written last (``MANIFEST``: each file's size and SHA-256, and a digest over them),
and renamed into place. Every open checks the folder against its manifest (``sealed_digest``): the same
files, sizes and contents (hashes memoised by ``memoised_sha256`` under the file's inode, size, mtime
and ctime, so an unchanged folder costs one ``stat`` per file). A folder that fails (damaged, truncated,
emptied, a file added or missing, no manifest) is rebuilt by ``ensure_built``, with one line saying why.

A build holds an ``fcntl`` lock on ``.lock-<name>`` beside the folder: a second process waits, then
reuses the result. Scratch folders of the same name are removed before a build: under the lock none of
them belongs to a live build (a process killed with ``kill -9`` leaves its scratch behind).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.interrupt import interruptible, on_stop
from harness.progress import stages

MANIFEST = "harness-manifest.json"
MANIFEST_VERSION = 1


def _files(folder: Path) -> dict[str, Path]:
    """The regular files under ``folder`` by their relative POSIX path (the manifest excluded)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if relative != MANIFEST and (path.is_file() or path.is_symlink()):
            found[relative] = path
    return found


def _seal(entries: dict[str, dict[str, Any]]) -> str:
    """The digest over every file's path, size and SHA-256."""
    canonical = json.dumps(entries, sort_keys=True, ensure_ascii=True).encode()
    return "sha256:" + hashlib.sha256(canonical).hexdigest()


def write_manifest(folder: Path) -> str:
    """Seal ``folder``: hash its files and write ``MANIFEST`` (last, atomically). Returns the digest."""
    from harness.adapters.model import file_sha256

    entries = {
        name: {"size": path.stat().st_size, "sha256": file_sha256(path)} for name, path in _files(folder).items()
    }
    digest = _seal(entries)
    record = {"version": MANIFEST_VERSION, "digest": digest, "files": entries}
    partial = folder / f".{MANIFEST}.partial"
    with open(partial, "w", encoding="utf-8") as handle:
        json.dump(record, handle, sort_keys=True, ensure_ascii=True)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, folder / MANIFEST)
    return digest


def verify(folder: Path) -> tuple[str | None, str]:
    """``(digest, "")`` when ``folder`` is as its manifest sealed it, else ``(None, why not)``."""
    from harness.adapters.cache import default_cache
    from harness.adapters.model import memoised_sha256

    if not folder.is_dir():
        return None, "does not exist"
    try:
        record = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        entries, digest = record["files"], record["digest"]
        if record.get("version") != MANIFEST_VERSION or not isinstance(entries, dict) or _seal(entries) != digest:
            return None, f"has a damaged {MANIFEST}"
    except FileNotFoundError:
        return None, f"has no {MANIFEST} (an unfinished build, or one by an older harness)"
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return None, f"has an unreadable {MANIFEST} ({type(exc).__name__})"
    files = _files(folder)
    if sorted(files) != sorted(entries):
        extra, missing = sorted(set(files) - set(entries)), sorted(set(entries) - set(files))
        return None, "has " + "; ".join(
            part
            for part in (
                f"files it did not seal: {extra[:3]}" if extra else "",
                f"lost {missing[:3]}" if missing else "",
            )
            if part
        )
    try:
        for name, path in files.items():  # sizes first: a truncated file costs no hashing
            if not path.is_file() or path.stat().st_size != entries[name]["size"]:
                return None, f"has {name} of another size than sealed (truncated or replaced)"
        cache = default_cache()
        for name, path in files.items():
            if memoised_sha256(path, cache) != entries[name]["sha256"]:
                return None, f"has {name} with other contents than sealed (damaged)"
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or exc})"
    return str(digest), ""


def sealed_digest(folder: Path) -> str | None:
    """The digest of ``folder`` when it verifies against its manifest, else None."""
    return verify(folder)[0]


@contextlib.contextmanager
def build_lock(folder: Path) -> Iterator[None]:
    """Hold the build lock of ``folder`` (``.lock-<name>`` beside it), saying so when another process holds it."""
    with open(folder.parent / f".lock-{folder.name}", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"harness: waiting for another process building {folder}", file=sys.stderr, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def scratch_folders(folder: Path) -> list[Path]:
    """The scratch folders of builds of ``folder`` (``.<name>.XXXXXXXX`` beside it)."""
    pattern = re.compile(rf"\.{re.escape(folder.name)}\.[a-z0-9_]{{8}}")
    with contextlib.suppress(FileNotFoundError):
        return sorted(p for p in folder.parent.iterdir() if pattern.fullmatch(p.name) and p.is_dir())
    return []


def _discard(folder: Path) -> None:
    """Move ``folder`` aside under a scratch name, then remove it (a kill in between leaves stale scratch)."""
    aside = folder.with_name(f".{folder.name}.{secrets.token_hex(4)}")
    os.rename(folder, aside)
    shutil.rmtree(aside, ignore_errors=True)


def ensure_built(folder: Path, build: Callable[[Path], None], what: str = "", short: str = "") -> Path:
    """``folder``, verified against its manifest; built by ``build(scratch_folder)`` first when it is missing or
    fails (with one line saying why), under the folder's build lock.

    A build prints one line on stderr first: ``what`` is being done (default: converting the folder's
    name), that it happens once, and where the result is kept; then, while it runs, a line at least every
    10 s, and one per stage the build names (``harness.progress.stage``), each starting with ``short``
    (default: ``what`` without its parenthesis).
    """
    if sealed_digest(folder) is not None:
        return folder
    with contextlib.ExitStack() as held:
        with _writable(folder.parent):
            folder.parent.mkdir(parents=True, exist_ok=True)
            held.enter_context(build_lock(folder))
        return _build_locked(folder, build, what, short)


@contextlib.contextmanager
def _writable(parent: Path) -> Iterator[None]:
    """An ``OSError`` within is the one-line error of a models folder that cannot be written."""
    try:
        yield
    except OSError as exc:
        raise HarnessError(f"cannot write converted models to {parent}: {exc} (set HARNESS_MODELS_DIR)") from None


def _build_locked(folder: Path, build: Callable[[Path], None], what: str, short: str) -> Path:
    """``ensure_built`` under the lock: another process may have built the folder while this one waited."""
    _, reason = verify(folder)
    if not reason:
        return folder
    if folder.exists():
        print(f"harness: {folder} {reason}; building it again", file=sys.stderr, flush=True)
        _discard(folder)
    for stale in scratch_folders(folder):  # no live build holds them: it would hold the lock
        shutil.rmtree(stale, ignore_errors=True)
    print(f"harness: {what or 'converting ' + folder.name}, once; kept in {folder}", file=sys.stderr, flush=True)
    with _writable(folder.parent):
        scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        label = "harness: " + (short or (what or f"converting {folder.name}").split(" (")[0])
        with on_stop(lambda: shutil.rmtree(scratch, ignore_errors=True)), stages(label):  # a signal stops it
            interruptible(build, scratch)  # a line at least every 10 s (the waiting thread's beat)
        write_manifest(scratch)
        scratch.rename(folder)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder
