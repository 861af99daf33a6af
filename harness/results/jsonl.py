"""Append-only JSON Lines files that survive ``kill -9`` and a full disk, and report bad lines by number."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import math
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import orjson

from harness.errors import HarnessError


@dataclass(frozen=True)
class BadLine:
    """A line that could not be read: file, 1-based line number and the reason."""

    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}, line {self.line}: {self.reason}"


class LineError(ValueError):
    """A line that is not JSON as the harness writes it; the message says why."""


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    data = dict(pairs)
    if len(data) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise LineError(f"repeated key {key!r}")
            seen.add(key)
    return data


def _no_constant(name: str) -> Any:
    raise LineError(f"{name} is not a number JSON allows (the harness never writes it)")


def parse_line(raw: bytes | str) -> Any:
    """One JSON line as the harness writes it; raises ``LineError`` saying why it is not one.

    Beyond invalid JSON this refuses what ``json.loads`` accepts or fails on with other errors:
    NaN and Infinity, a repeated key in an object (which of its values would be meant?), an
    integer past Python's digit limit, and nesting past the recursion limit.

    Most lines are read by orjson (twice as fast), which keeps the last of repeated keys and reads an
    integer outside 64 bits (from 19 digits on, below -2**63) as a float. A line with a repeated key
    has fewer colons once written back than it had (each key brings one, and a string holds the same
    colons read or written, as long as none was written as a ``\\u`` escape). Lines with such an escape or 19 digits in a row
    (outside a fraction), text, and lines orjson refuses go through ``json.loads`` with the checks above, which says
    why.
    """
    data = plain_line(raw)
    return _parse_strictly(raw) if data is NOT_PLAIN else data


NOT_PLAIN: Any = object()  # what ``plain_line`` says of a line ``parse_line`` reads with ``json.loads``


def plain_line(raw: bytes | str) -> Any:
    """What ``parse_line`` reads with orjson alone (see there), or ``NOT_PLAIN`` for a line it reads otherwise."""
    if isinstance(raw, bytes) and b"\\u" not in raw and not _long_integer(raw):
        try:
            data = orjson.loads(raw)
            if orjson.dumps(data).count(b":") == raw.count(b":"):
                return data
        except (orjson.JSONDecodeError, orjson.JSONEncodeError):
            pass
    return NOT_PLAIN


_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_DIGITS = b"0" * 19  # -9999999999999999999 is already below -2**63
_POINT = ord(".")
_ZERO = ord("0")


def _long_integer(raw: bytes) -> bool:
    """Whether a line may hold an integer of 19 digits or more: 19 digits in a row that are not a number's fraction
    (an integer's, an exponent's or text's; ``0.0014565038584660739`` reads as the same float either way, and a small
    value's digits often run that long)."""
    digits = raw.translate(_DIGITS)
    at = digits.find(_LONG_DIGITS)
    while at >= 0:
        if at == 0 or raw[at - 1] != _POINT:
            return True
        end = at + len(_LONG_DIGITS)
        while end < len(digits) and digits[end] == _ZERO:  # the rest of this fraction
            end += 1
        at = digits.find(_LONG_DIGITS, end)
    return False


def _parse_strictly(raw: bytes | str) -> Any:
    try:
        data = json.loads(raw, object_pairs_hook=_no_repeated_keys, parse_constant=_no_constant)
        _check_values(data)
        return data
    except LineError:
        raise
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LineError(str(exc)) from None
    except RecursionError:
        raise LineError("nested too deeply") from None
    except ValueError as exc:  # int(): "Exceeds the limit (4300 digits) for integer string conversion"
        digits = sys.get_int_max_str_digits()
        raise LineError(f"an integer of more than {digits} digits" if "digits" in str(exc) else str(exc)) from None


def _check_values(data: Any) -> None:
    """What JSON allows but no line the harness writes holds, named by its field: a number out of a float's range
    (``1e400`` reads as infinity), and text with a lone surrogate (not text: no UTF-8 encodes it) or a NUL
    character. orjson refuses infinities and lone surrogates, and a NUL can only be written as a ``\\u`` escape, which
    sends a line here: only lines read by ``json.loads`` need this walk."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        where, value = stack.pop()
        problem = None
        if isinstance(value, dict):
            named = [(f"{where}.{key}" if where else str(key), key, item) for key, item in value.items()]
            stack += ((name, item) for name, _, item in named)
            stack += ((name, key) for name, key, _ in named if not key.isprintable())  # a key is text too
        elif isinstance(value, list):
            stack += ((f"{where}[{index}]", item) for index, item in enumerate(value))
        elif isinstance(value, float) and not math.isfinite(value):
            problem = "a number out of range (it reads as infinity)"
        elif isinstance(value, str) and ("\0" in value or _has_lone_surrogate(value)):
            problem = "text with a NUL character" if "\0" in value else "text with a lone surrogate (not valid Unicode)"
        if problem:
            raise LineError(f"field {where or 'the line'!r}: {problem}")


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def regular_file(path: str | os.PathLike[str]) -> int:
    """Open ``path`` for reading without blocking, and make sure it is a regular file (not a FIFO, a device).

    Returns the descriptor; raises ``HarnessError`` naming the path when it is not a regular file.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise not_regular(path)
    os.set_blocking(fd, True)
    return fd


def not_regular(path: str | os.PathLike[str]) -> HarnessError:
    """The error for a results path that exists but is not a regular file."""
    return HarnessError(f"{os.fspath(path)} is not a regular file; results are read from and appended to files only")


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
        fd = open_for_append(path)
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


def open_for_append(path: str | os.PathLike[str]) -> int:
    """A descriptor appending to the regular file ``path`` (created if absent), never blocking on a FIFO.

    Raises ``OSError`` when it cannot be opened, ``HarnessError`` when it is not a regular file.
    """
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise not_regular(path)
    os.set_blocking(fd, True)
    return fd


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
        parse_line(tail)
        return b"\n"
    except LineError:
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


MAX_LINE = 64 << 20  # bytes: no line the harness writes comes near; a longer one is refused, never held whole


class Readable(Protocol):
    """A binary file, plain or decompressing, as ``bounded_lines`` reads it."""

    def readline(self, size: int = -1, /) -> bytes: ...


def bounded_lines(handle: Readable, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """``(line_number, bytes)`` per line of a binary file, None for a line longer than ``limit`` bytes: said as soon
    as it is seen (a reader that stops there reads no further), then read past in pieces, so memory stays bounded
    whatever the file holds."""
    number = 0
    while raw := handle.readline(limit + 1):
        number += 1
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield number, raw
            continue
        yield number, None
        while (rest := handle.readline(limit)) and not rest.endswith(b"\n"):
            pass


def too_long() -> str:
    """Why a line past ``MAX_LINE`` is not read."""
    return f"a line longer than {MAX_LINE >> 20} MiB (no line the harness writes is)"


BLANK: Any = object()  # what ``json_line`` makes of a blank line


def json_line(name: str, number: int, raw: bytes | None) -> Any:
    """The object on line ``number`` of the file ``name`` (``raw`` as ``bounded_lines`` gives it), a ``BadLine``
    saying why it is unreadable, or ``BLANK``."""
    if raw is None:
        return BadLine(name, number, too_long())
    if not raw.strip():
        return BLANK
    try:
        return parse_line(raw)
    except LineError as exc:
        torn = "" if raw.endswith(b"\n") else " (torn last line)"
        return BadLine(name, number, f"not valid JSON{torn}: {exc}")


def json_lines(handle: Readable, name: str) -> Iterator[tuple[int, Any] | BadLine]:
    """``(line_number, object)`` per good line of an open file and a ``BadLine`` per unreadable one, blank lines
    left out; ``name`` names the file in the reasons."""
    for number, raw in bounded_lines(handle, MAX_LINE):
        item = json_line(name, number, raw)
        if isinstance(item, BadLine):
            yield item
        elif item is not BLANK:
            yield number, item


def read_lines(path: str | os.PathLike[str]) -> list[tuple[int, bytes | None]]:
    """Every line of the file at ``path`` as ``bounded_lines`` gives it, read once (parse them with ``json_line``).

    Anything but a regular file (a FIFO would block forever) is a ``HarnessError`` naming it.
    """
    with open(regular_file(path), "rb") as handle:
        return list(bounded_lines(handle, MAX_LINE))


def iter_json_lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any] | BadLine]:
    """Yield ``(line_number, object)`` per good line and a ``BadLine`` per unreadable one (``parse_line``, or a
    line past ``MAX_LINE``).

    Anything but a regular file (a FIFO would block forever) is a ``HarnessError`` naming it.
    """
    with open(regular_file(path), "rb") as handle:
        yield from json_lines(handle, str(path))


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
        _remove(temporary)
        raise _write_error(target, exc, "; nothing was written") from None
    except BaseException:  # Ctrl-C, SIGTERM (unwound as an exception), a bug: no temporary is left either
        _remove(temporary)
        raise


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
