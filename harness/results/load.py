"""Finding and reading results files: bad lines are reported with file and line, never rewritten."""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

from harness.errors import HarnessError
from harness.forking import can_fork, cpus
from harness.results.jsonl import BadLine, not_regular
from harness.results.records import (
    RESULTS_FILE,
    UNBUILT,
    ResultRecord,
    Unbuilt,
    checked_elsewhere,
    line_outcome,
    read_result_lines,
    unchecked_outcome,
)

Line = tuple[str, int, bytes | None]  # file name, line number, the line (None: too long)
Outcome = ResultRecord | BadLine | Unbuilt | None
T = TypeVar("T")

PARALLEL_LINES = 20_000  # a read of fewer lines (and bytes) is not shared with helper processes: forking costs more
PARALLEL_BYTES = 20 << 20
# What a line costs, in microseconds on the 100,000 lines of benchmarks/leaderboard_merge.py: read with
# ``line_outcome`` (parsed, checked, built), with ``unchecked_outcome`` (orjson, built) and with ``checked_elsewhere``
# (parsed and checked). The parent reads every line of the helpers' shares with the second, and they with the third.
CHECKED_COST, UNCHECKED_COST, HELPER_COST = 24.0, 9.0, 17.6


@dataclass(slots=True)
class Entry:
    """A record and the results file it was read from (per-sample logs are beside that file)."""

    record: ResultRecord
    source: Path


def results_files(locations: Sequence[str]) -> list[Path]:
    """The results files named or found (``results.jsonl`` at any depth) in the given folders."""
    files: list[Path] = []
    for location in locations:
        path = Path(location)
        if path.is_dir():
            found = sorted(path.rglob(RESULTS_FILE))
            if not found:
                raise HarnessError(f"no {RESULTS_FILE} under the folder {location!r}")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        elif path.exists():
            raise not_regular(path)
        else:
            raise HarnessError(f"results file or folder {location!r} not found")
    return list(dict.fromkeys(files))


@contextmanager
def gc_paused(kept: bool = False) -> Iterator[None]:
    """The cyclic garbage collector off inside (back as it was after): building many small acyclic objects
    (parsed lines, records, rows) otherwise runs it over every object built so far, again and again
    (half the time of reading 100,000 lines). Reference counting still frees everything.

    ``kept``: what is built inside outlives it (the records read), so it goes straight to the oldest generation,
    where the collector looks least often; left in the youngest, all of it would be scanned by the first collection
    after (0.5 s for 100,000 records), and again on its way through the middle one."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if kept and not gc.get_freeze_count():  # (not while objects are held frozen: this would unfreeze them)
            gc.freeze()  # every tracked object to the permanent generation (and the young one's count to 0) ...
            gc.unfreeze()  # ... and from there to the oldest: two moves of whole lists, no object visited
        if enabled:
            gc.enable()


def load_entries(locations: Sequence[str]) -> tuple[list[Entry], list[BadLine]]:
    """Every valid record of the given files and folders, and the lines that were skipped.

    Each file is read once. On several CPUs, a read of many lines has helper processes check shares of them
    (``_Reading``); the entries and the problems, in their order, are those of reading one line after the other.
    """
    _, entries, problems = read_then(locations, lambda entries: None)
    return entries, problems


def read_then(
    locations: Sequence[str], use: Callable[[list[Entry]], T], cost: float = 0.0
) -> tuple[T, list[Entry], list[BadLine]]:
    """``use(entries)``, the entries and the problems of ``load_entries``. Where helper processes check lines,
    ``use`` runs while they do, on the records read before their verdicts, and again on the checked entries only
    when a verdict drops or changes one, or when it raised: ``use`` must depend on its entries alone, and its result
    is then that of the checked entries. ``cost``: what ``use`` costs per line (microseconds, as ``CHECKED_COST``),
    so that the parent's share still ends with the helpers'."""
    with gc_paused(kept=True):
        files = [(path, read_result_lines(path)) for path in results_files(locations)]
        lines = [(str(path), number, raw) for path, numbered in files for number, raw in numbered]
        reading = _Reading(lines, cost)
        try:
            first, _ = _entries(files, reading.outcomes, {})
            try:
                value, trusted = use(first), True
            except Exception:  # a line the helpers refuse, maybe: decided once they have answered
                trusted = False
            outcomes = reading.checked()
        finally:
            reading.close()
        entries, problems = _entries(files, outcomes, {id(entry.record): entry for entry in first})
        if not trusted or len(entries) != len(first) or any(a is not b for a, b in zip(entries, first)):
            value = use(entries)
    return value, entries, problems


def _entries(
    files: list[tuple[Path, list[Any]]], outcomes: list[Outcome], known: dict[int, Entry]
) -> tuple[list[Entry], list[BadLine]]:
    """The entries (those ``known`` by their record's id reused) and the bad lines of each file's outcomes."""
    entries: list[Entry] = []
    problems: list[BadLine] = []
    found = iter(outcomes)
    for path, numbered in files:
        for _ in numbered:
            outcome = next(found)
            if isinstance(outcome, ResultRecord):
                entries.append(known.get(id(outcome)) or Entry(outcome, path))
            elif isinstance(outcome, BadLine):
                problems.append(outcome)
    return entries, problems


class _Reading:
    """``line_outcome`` of every line. Where helpers are forked, the parent checks only its share (the first
    lines) but reads every other line with orjson and builds its record (sending records between processes would
    cost more), while each helper checks a share of the rest (``checked_elsewhere``) and sends back its bad lines,
    which the parent drops, and the few the parent must read itself. A share whose helper could not be forked or
    died is checked here.

    ``outcomes``: what the parent read (its share checked); ``checked()``: every line's, once the helpers answered."""

    def __init__(self, lines: list[Line], cost: float) -> None:
        self.lines = lines
        bounds = _bounds(lines, cost)
        self.helpers = _Helpers(lines, bounds) if len(bounds) > 2 else None
        try:
            self.outcomes: list[Outcome] = [line_outcome(*line) for line in lines[: bounds[1]]]
            self.outcomes += [unchecked_outcome(raw) for _, _, raw in lines[bounds[1] :]]
        except BaseException:
            self.close()
            raise

    def checked(self) -> list[Outcome]:
        """Every line's outcome: the helpers' verdicts applied (waiting for them)."""
        outcomes = list(self.outcomes)
        verdicts = self.helpers.verdicts() if self.helpers is not None else []
        for share, found in verdicts:
            for index in share:
                verdict = found.get(index) if found is not None else None
                if isinstance(verdict, BadLine):
                    outcomes[index] = verdict
                elif found is None or index in found or outcomes[index] is UNBUILT:
                    outcomes[index] = line_outcome(*self.lines[index])
        return outcomes

    def close(self) -> None:
        """End the helpers (after an error or an interruption, those still running)."""
        if self.helpers is not None:
            self.helpers.close()


def _bounds(lines: list[Line], cost: float = 0.0) -> list[int]:
    """Where the shares of the lines start and end: ``[0, end of the parent's, end of the first helper's, ...]``,
    the last being ``len(lines)``. One share, the parent's, on one CPU, without fork, or for a small read; else one
    helper per other CPU, the shares sized so that all finish together (the parent also reads the helpers' lines,
    and spends ``cost`` per line on what it does meanwhile)."""
    total = len(lines)
    helpers = cpus() - 1
    if (
        helpers < 1
        or not can_fork()
        or total < 2
        or (total < PARALLEL_LINES and sum(len(raw or b"") for _, _, raw in lines) < PARALLEL_BYTES)
    ):
        return [0, total]
    per_helper = total * (CHECKED_COST + cost) / (HELPER_COST + helpers * (CHECKED_COST - UNCHECKED_COST))
    share = max(1, min(total // helpers, round(per_helper)))
    own = total - helpers * share
    return [0, *range(own, total + 1, share)]


class _Helpers:
    """Processes forked to check shares of the lines (they inherit them: nothing is sent but their verdicts).

    ``shares``: per helper its share, its process and the end of the pipe it answers on (None when it could not
    be forked)."""

    def __init__(self, lines: list[Line], bounds: list[int]) -> None:
        context = multiprocessing.get_context("fork")
        self.shares: list[tuple[range, Any, Connection | None]] = []
        try:
            for start, stop in pairwise(bounds[1:]):
                self.shares.append(self._fork(context, lines, start, stop))
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _fork(context: Any, lines: list[Line], start: int, stop: int) -> tuple[range, Any, Connection | None]:
        try:
            receiver, sender = context.Pipe(duplex=False)
        except OSError:
            return range(start, stop), None, None
        try:
            process = context.Process(target=_check_share, args=(lines, start, stop, sender), daemon=True)
            process.start()
        except OSError:  # no process to be had (EAGAIN, ENOMEM): the parent checks this share
            receiver.close()
            return range(start, stop), None, None
        finally:
            sender.close()
        return range(start, stop), process, receiver

    def verdicts(self) -> list[tuple[range, dict[int, BadLine | None] | None]]:
        """Per share, waiting for each helper, its bad lines and (None) the lines to read here by index; None for a
        share no helper checked."""
        found: list[tuple[range, dict[int, BadLine | None] | None]] = []
        for share, _, receiver in self.shares:
            try:
                found.append((share, dict(receiver.recv()) if receiver is not None else None))
            except (EOFError, OSError):  # it died before answering
                found.append((share, None))
        return found

    def close(self) -> None:
        """End the helpers still running (after an error or an interruption of the parent) and wait for them."""
        for _, process, receiver in self.shares:
            if process is not None:
                if process.is_alive():
                    process.terminate()
                process.join()
            if receiver is not None:
                receiver.close()


def skipped(problems: Sequence[BadLine], shown: int = 3) -> str:
    """`` (N lines skipped: why, why, ...)`` for an error that follows from every line being bad; empty for none."""
    if not problems:
        return ""
    reasons = "; ".join(str(problem) for problem in problems[:shown])
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return f" ({len(problems)} lines skipped: {reasons}{more})"


def _check_share(lines: list[Line], start: int, stop: int, sender: Connection) -> None:
    """A helper: send ``(index, BadLine)`` for every bad line of ``lines[start:stop]`` and ``(index, None)`` for
    every line the parent must read itself (``checked_elsewhere``). Ctrl-C is the parent's to handle; the helper
    ends with ``os._exit``, running none of the caller's cleanup (nor flushing its buffers), and without a word if
    anything fails (the parent then checks the share itself, and meets the same failure)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    code = 1
    try:
        found: list[tuple[int, BadLine | None]] = []
        for index in range(start, stop):
            verdict = checked_elsewhere(*lines[index])
            if verdict is not True:
                found.append((index, verdict or None))
        sender.send(found)
        code = 0
    finally:
        os._exit(code)
