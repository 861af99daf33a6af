"""Append-only JSON Lines files that survive ``kill -9`` and a full disk, and report bad lines by number."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.errors import HarnessError


@dataclass(frozen=True)
class BadLine:
    """A line that could not be read: file, 1-based line number and the reason."""

    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}, line {self.line}: {self.reason}"


def append_json_line(path: str | os.PathLike[str], obj: Any) -> None:
    """Append one JSON object as one line, under an exclusive lock, then fsync.

    Concurrent writers never interleave. A process killed inside its ``write`` can leave a torn
    last line (Linux stops a large write between pages on ``kill -9``); readers report it, and
    the next append moves it to ``<path>.torn`` before writing, so the file is whole again and
    no byte is thrown away. A complete last line that merely lacks its newline is kept.

    Every byte is written or the append fails: on a full disk, a quota or an I/O error the file
    is cut back to its last complete line and a ``HarnessError`` names the file.
    """
    data = (json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise _write_error(path, exc, "") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = _settle_unterminated_tail(fd, size, f"{os.fspath(path)}.torn") + data
            size = os.fstat(fd).st_size
        try:
            write_all(fd, data)
            os.fsync(fd)
        except OSError as exc:
            cut = _cut_back(fd, size)
            raise _write_error(path, exc, cut) from None
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` (``os.write`` may write fewer); a write that makes no progress is ENOSPC."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[written:]


def _cut_back(fd: int, size: int) -> str:
    """Truncate to ``size`` (the end of the last complete line before this append); what became of the file."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError as exc:
        return f"; it could not be cut back to its last complete line ({exc.strerror or exc}): readers report the torn line"
    return "; it is cut back to its last complete line, and earlier lines are intact"


def _write_error(path: str | os.PathLike[str], exc: OSError, what_became: str) -> HarnessError:
    hint = " (free space and run again)" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
    return HarnessError(f"cannot write {os.fspath(path)}: {exc.strerror or exc}{what_became}{hint}")


def _settle_unterminated_tail(fd: int, size: int, torn_path: str) -> bytes:
    """Deal with a last line without newline: b"\\n" to end it if it is valid JSON, else move it to ``torn_path``."""
    start = _last_line_start(fd, size)
    tail = os.pread(fd, size - start, start)
    try:
        json.loads(tail)
        return b"\n"
    except (json.JSONDecodeError, UnicodeDecodeError):
        pass
    try:
        torn = os.open(torn_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            write_all(torn, tail + b"\n")
            os.fsync(torn)
        finally:
            os.close(torn)
    except OSError as exc:
        raise _write_error(torn_path, exc, "; the torn last line stays where it was") from None
    os.ftruncate(fd, start)
    return b""


def _last_line_start(fd: int, size: int, block: int = 1 << 16) -> int:
    """The offset just after the last newline before ``size`` (0 if there is none)."""
    end = size
    while end > 0:
        start = max(0, end - block)
        newline = os.pread(fd, end - start, start).rfind(b"\n")
        if newline >= 0:
            return start + newline + 1
        end = start
    return 0


def iter_json_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any] | BadLine]:
    """Yield ``(line_number, object)`` per good line and a ``BadLine`` per unreadable one."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                yield number, json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                torn = "" if raw.endswith(b"\n") else " (torn last line)"
                yield BadLine(str(path), number, f"not valid JSON{torn}: {exc}")


def write_json_lines_atomic(path: str | os.PathLike[str], rows: list[Any]) -> None:
    """Write a whole JSON Lines file via a temporary file and an atomic rename.

    A failed write (full disk, quota) removes the temporary file, leaves any earlier version of
    ``path`` as it was, and raises a ``HarnessError`` naming the file.
    """
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            buffer = bytearray()
            for row in rows:
                buffer += (json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
                if len(buffer) >= 1 << 20:
                    write_all(fd, bytes(buffer))
                    buffer.clear()
            write_all(fd, bytes(buffer))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise _write_error(target, exc, "; nothing was written") from None
