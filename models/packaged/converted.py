"""Model folders converted once from a package's weights and kept in the harness cache.

A folder is named by what it was built from (a content hash of the source and the converter's
version), built in a temporary folder beside it and renamed into place when complete, so a
killed conversion leaves nothing half-written and concurrent processes agree on the result.
A build announces itself in one line on stderr: what is done, and where the result is kept.
``HARNESS_MODELS_DIR`` overrides the location (default: ``<harness cache>/models``).

While a build runs, glibc's malloc keeps the memory it is given back for the next allocation instead of
returning it to the system (``reused_memory``): a conversion moves hundreds of MB through several
buffers in turn (e5-small's 470 MB of weights: dequantised, written, exported, serialised, parsed), and
each fresh buffer is faulted in page by page by the kernel, most of a conversion's system time.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from harness.adapters.cache import default_cache_dir
from harness.errors import HarnessError


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
    print(f"harness: {what or 'converting ' + folder.name}, once; kept in {folder}", file=sys.stderr, flush=True)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    except OSError as exc:
        raise HarnessError(
            f"cannot write converted models to {folder.parent}: {exc} (set HARNESS_MODELS_DIR)"
        ) from None
    try:
        with reused_memory():
            build(scratch)
        try:
            scratch.rename(folder)
        except OSError:
            if not folder.is_dir():  # not simply another process finishing first
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return folder


M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's mallopt parameters (malloc.h)
MMAP_MAX_DEFAULT = 65536  # glibc's default count of allocations served by mmap
TRIM_THRESHOLD_AFTER = 64 << 20  # where glibc's dynamic threshold ends for large buffers (2 x 32 MiB)
NEVER_TRIM = 2**31 - 1


@contextlib.contextmanager
def reused_memory() -> Iterator[None]:
    """glibc's malloc serves every allocation from its heap and keeps freed memory there, for the block.

    After it, large allocations are mapped again (above the threshold glibc had reached, which then
    stays), the heap's top is trimmed beyond 64 MiB free (where glibc's own rule ends once a large
    buffer has been freed) and the free memory goes back to the system (``malloc_trim``). Only how
    memory is reused changes, never what is computed. Other C libraries: nothing changes.
    """
    libc = _glibc()
    if libc is None:
        yield
        return
    libc.mallopt(M_MMAP_MAX, 0)
    libc.mallopt(M_TRIM_THRESHOLD, NEVER_TRIM)
    try:
        yield
    finally:
        libc.mallopt(M_MMAP_MAX, MMAP_MAX_DEFAULT)
        libc.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD_AFTER)
        libc.malloc_trim(0)


def _glibc() -> ctypes.CDLL | None:
    """The running process's C library where it is glibc on Linux, else None."""
    if sys.platform != "linux" or platform.libc_ver()[0] != "glibc":
        return None
    return ctypes.CDLL(None)
