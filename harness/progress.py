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
    notebook) it prints one line at the start, one at least every ``every`` seconds while the loop runs (also
    while no item finishes: ``advance(0)`` is a heartbeat) and one at the end, so logs stay readable and a slow
    loop never looks stuck. ``enabled=False`` prints nothing (``progress=False``, non-zero ranks).
    """

    def __init__(self, enabled: bool = True, stream: TextIO | None = None, every: float = 10.0):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.every = every
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
        state = {"done": 0, "shown": start}

        def line(done: int, now: float) -> None:
            elapsed = now - start
            rate = done / elapsed if elapsed > 0 else 0.0
            print(f"{description}: {done}/{total} ({rate:,.1f}/s, {elapsed:.1f}s)", file=self.stream, flush=True)
            state["shown"] = now

        def advance(n: int) -> None:
            state["done"] += n
            now = time.perf_counter()
            if now - state["shown"] >= self.every and state["done"] < total:
                line(int(state["done"]), now)

        print(f"{description}: 0/{total}", file=self.stream, flush=True)
        yield advance
        line(int(state["done"]), time.perf_counter())
