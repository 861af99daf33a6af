"""Progress reporting: rich bars on a terminal, plain lines otherwise (logs, CI, pipes)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO, TypeVar

T = TypeVar("T")


class Progress:
    """Progress of loops over data, written to ``stream`` (stderr by default).

    On a terminal it draws rich progress bars with counts, rate and elapsed time; elsewhere (a log, a pipe, a
    notebook) a loop that lasts more than ``quiet`` seconds prints a line then, one at least every ``every``
    seconds while it runs (also while no item finishes: ``advance(0)`` is a heartbeat) and one at the end, so a
    slow loop never looks stuck and a quick one (a few cached leftovers) prints nothing.
    ``enabled=False`` prints nothing (``progress=False``, non-zero ranks).
    """

    def __init__(self, enabled: bool = True, stream: TextIO | None = None, every: float = 10.0, quiet: float = 1.0):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.every = every
        self.quiet = quiet
        self._bars: Any = None

    @property
    def interactive(self) -> bool:
        """True when the stream is a terminal."""
        return bool(getattr(self.stream, "isatty", lambda: False)())

    @contextmanager
    def task(self, description: str, total: int) -> Iterator[Callable[[int], None]]:
        """A context giving ``advance(n)`` for a loop of ``total`` items (``advance(0)``: a heartbeat)."""
        if not self.enabled or total <= 0:
            yield lambda n: None
            return
        if self.interactive:
            with self._rich_task(description, total) as advance:
                yield advance
        else:
            yield from self._plain_task(description, total)

    def track(self, items: Iterable[T], description: str, total: int | None = None) -> Iterator[T]:
        """Iterate over ``items`` with progress."""
        items = list(items) if total is None else items
        count = len(items) if total is None else total  # type: ignore[arg-type]
        with self.task(description, count) as advance:
            for item in items:
                yield item
                advance(1)

    @contextmanager
    def _rich_task(self, description: str, total: int) -> Iterator[Callable[[int], None]]:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
        from rich.progress import Progress as RichProgress

        owner = self._bars is None
        if owner:
            columns = (
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
            )
            self._bars = RichProgress(*columns, console=Console(file=self.stream), transient=False)
            self._bars.start()
        start = time.perf_counter()
        task_id = self._bars.add_task(description, total=total, rate="")
        done = [0]

        def advance(n: int) -> None:
            done[0] += n
            rate = done[0] / max(time.perf_counter() - start, 1e-9)
            self._bars.update(task_id, advance=n, rate=f"{rate:,.1f}/s")

        try:
            yield advance
        finally:
            if owner:
                self._bars.stop()
                self._bars = None

    def _plain_task(self, description: str, total: int) -> Iterator[Callable[[int], None]]:
        start = time.perf_counter()
        done, shown = 0, None  # items finished; when the last line was printed (None: not yet)

        def line(now: float) -> None:
            nonlocal shown
            elapsed = now - start
            rate = done / elapsed if elapsed > 0 else 0.0
            print(f"{description}: {done}/{total} ({rate:,.1f}/s, {elapsed:.1f}s)", file=self.stream, flush=True)
            shown = now

        def advance(n: int) -> None:
            nonlocal done
            done += n
            now = time.perf_counter()
            due = now - start >= self.quiet if shown is None else now - shown >= self.every
            if due and done < total:
                line(now)

        yield advance
        if shown is not None:
            line(time.perf_counter())


class Stages:
    """What a long one-time job (a model's conversion) is doing, said on ``stream``: a line per stage (``enter``),
    and while a stage lasts, a line at least every ``every`` seconds (``beat``, called by the thread that waits for
    the job; ``harness.interrupt``). Loops inside a stage report through ``Progress``."""

    def __init__(self, what: str, stream: TextIO | None = None, every: float = 10.0):
        self.what = what
        self.stream = stream or sys.stderr
        self.every = every
        self.start = self.shown = time.perf_counter()
        self.stage = ""
        self.progress = Progress(stream=self.stream, every=every)

    def enter(self, stage: str) -> None:
        """Start the next stage (one line)."""
        self.stage, self.shown = stage, time.perf_counter()
        print(f"{self.what}: {stage}", file=self.stream, flush=True)

    def beat(self) -> None:
        """A line with the stage and the time so far, when ``every`` seconds passed since the last line."""
        now = time.perf_counter()
        if now - self.shown >= self.every:
            self.shown = now
            doing = f"{self.stage}, " if self.stage else ""
            print(f"{self.what}: {doing}{now - self.start:.0f}s so far", file=self.stream, flush=True)


_JOBS: list[Stages] = []  # the jobs under way, in any thread (a job runs in a worker; the main thread beats)


@contextmanager
def stages(what: str) -> Iterator[Stages]:
    """A ``Stages`` of a job, which ``stage(name)`` inside it advances and ``beat()`` keeps talking."""
    current = Stages(what)
    _JOBS.append(current)
    try:
        yield current
    finally:
        _JOBS.remove(current)


def stage(name: str) -> Progress:
    """Enter the next stage of the latest job under way (nothing without one); returns a ``Progress`` for its
    loops (disabled without a job)."""
    if not _JOBS:
        return Progress(enabled=False)
    current = _JOBS[-1]
    current.enter(name)
    return current.progress


def beat() -> None:
    """The heartbeat of every job under way (``harness.interrupt`` calls it while it waits for a worker)."""
    for job in list(_JOBS):
        job.beat()
