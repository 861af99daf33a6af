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
    """Append one JSON object as one line, atomically.

    The line is written with a single ``write`` on an ``O_APPEND`` descriptor under an
    exclusive lock, then fsynced: concurrent writers never interleave, and a killed process
    leaves the whole line or none of it. If an earlier crash (power loss) left a torn last line
    without a newline, a newline is written first so the new line stays intact.
    """
    data = (json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


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
