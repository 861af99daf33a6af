"""Append-only JSON Lines files that survive ``kill -9`` and report bad lines by number."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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
    """
    data = (json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = _settle_unterminated_tail(fd, size, f"{os.fspath(path)}.torn") + data
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _settle_unterminated_tail(fd: int, size: int, torn_path: str) -> bytes:
    """Deal with a last line without newline: b"\\n" to end it if it is valid JSON, else move it to ``torn_path``."""
    start = _last_line_start(fd, size)
    tail = os.pread(fd, size - start, start)
    try:
        json.loads(tail)
        return b"\n"
    except (json.JSONDecodeError, UnicodeDecodeError):
        pass
    with open(torn_path, "ab") as torn:
        torn.write(tail + b"\n")
        torn.flush()
        os.fsync(torn.fileno())
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
    """Write a whole JSON Lines file via a temporary file and an atomic rename."""
    target = Path(path)
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, target)
