"""Model folders converted once from a package's weights and kept in the harness cache.

A folder is named by what it was built from (a content hash of the source and the converter's
version), built in a temporary folder beside it and renamed into place when complete, so a
killed conversion leaves nothing half-written and concurrent processes agree on the result;
a process that finds another building the same folder waits for it (a lock file beside the
folder) instead of building it again.
A build announces itself in one line on stderr: what is done, and where the result is kept.
``HARNESS_MODELS_DIR`` overrides the location (default: ``<harness cache>/models``).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.adapters.cache import default_cache_dir
from harness.errors import HarnessError
from harness.interrupt import interruptible, on_stop


def models_dir() -> Path:
    """Where converted models are kept."""
    if os.environ.get("HARNESS_MODELS_DIR"):
        return Path(os.environ["HARNESS_MODELS_DIR"]).expanduser()
    return default_cache_dir() / "models"


def converted_folder(name: str, key: str) -> Path:
    """The folder of a conversion (it may not exist yet)."""
    safe = key.replace(":", "-")
    return models_dir() / f"{name}-{safe}"


def ensure_converted(folder: Path, build: Callable[[Path], None], what: str = "") -> Path:
    """``folder``, built by ``build(temporary_folder)`` first if it does not exist.

    A build prints one line on stderr first: ``what`` is being done (default: converting the
    folder's name), that it happens once, and where the result is kept.
    """
    if folder.is_dir():
        return folder
    with _building(folder):
        if folder.is_dir():  # another process built it while this one waited
            return folder
        print(f"harness: {what or 'converting ' + folder.name}, once; kept in {folder}", file=sys.stderr, flush=True)
        try:
            scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
        except OSError as exc:
            raise _unwritable(folder, exc) from None
        try:
            with on_stop(lambda: shutil.rmtree(scratch, ignore_errors=True)):  # Ctrl-C, SIGTERM: stopped at once
                interruptible(build, scratch)
            try:
                scratch.rename(folder)
            except OSError:
                if not folder.is_dir():  # not simply another process finishing first
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return folder


@contextmanager
def _building(folder: Path) -> Iterator[None]:
    """Hold the lock of ``folder``'s build (``.<name>-lock`` beside it): one process builds, the others wait."""
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        lock = os.open(folder.parent / f".{folder.name}-lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _unwritable(folder, exc) from None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the descriptor closes, also when the process dies
        yield
    finally:
        os.close(lock)


def _unwritable(folder: Path, exc: OSError) -> HarnessError:
    return HarnessError(f"cannot write converted models to {folder.parent}: {exc} (set HARNESS_MODELS_DIR)")
