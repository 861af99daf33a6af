"""Finding and reading results files: bad lines are reported with file and line, never rewritten."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.results.jsonl import BadLine, not_regular
from harness.results.records import RESULTS_FILE, ResultRecord, read_records


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
    """Every valid record of the given files and folders, and the lines that were skipped."""
    entries: list[Entry] = []
    problems: list[BadLine] = []
    with gc_paused(kept=True):
        for path in results_files(locations):
            records, bad = read_records(path)
            entries.extend(Entry(record, path) for record in records)
            problems.extend(bad)
    return entries, problems


def skipped(problems: Sequence[BadLine], shown: int = 3) -> str:
    """`` (N lines skipped: why, why, ...)`` for an error that follows from every line being bad; empty for none."""
    if not problems:
        return ""
    reasons = "; ".join(str(problem) for problem in problems[:shown])
    more = f"; and {len(problems) - shown} more" if len(problems) > shown else ""
    return f" ({len(problems)} lines skipped: {reasons}{more})"
