"""All plots (PNG, matplotlib, byte-identical for the same inputs): each family's plot functions,
registered by its plugin, draw into one folder.

Each drawing is keyed by its inputs: the code of its plot module and of the shared figure helpers, and
what it reads (a plain plot function: every current result of its family and the board's model order; a
part of a ``PlotParts`` function: what the part names). A drawing whose key the previous board already
holds, its files unchanged, is taken from it instead of drawn again (``plots/index.json`` lists the keys and
the files' digests), so a rebuild after
one new results line redraws only what that line changes. A line on stderr says how far the drawing is.

Where the system can fork, the plot functions run in worker processes (one per CPU, each taking the
next function as it finishes one) while the caller goes on writing the tables: the workers inherit
the board, write their PNGs into the folder and send back only what they drew. The plots, their
order, the files and the warnings are those of drawing one function after the other, which is what
happens on a single CPU, where fork is unavailable, and for a single plot function.
"""

from __future__ import annotations

import gc
import hashlib
import json
import multiprocessing
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, cast

from harness.errors import HarnessError
from harness.forking import can_fork, cpus
from harness.leaderboard.families import Family, plot_functions
from harness.leaderboard.figures import Part, Plot, PlotParts, family_inputs
from harness.leaderboard.kept import source_digest
from harness.leaderboard.merge import Board

Outcome = list[Plot] | str  # the plots a function drew, or why it failed
INDEX = "index.json"  # in plots/: the key of each drawing and the plots it made


@dataclass(frozen=True)
class Job:
    """One drawing: a plot function of a family (or one part of it) and the key of its inputs."""

    family: Family
    function: Callable[..., Any]
    key: str
    part: Part | None = None

    def run(self, board: Board, folder: Path) -> list[Plot]:
        """Draw its plots into ``folder``."""
        return self.part.draw(folder) if self.part is not None else list(self.function(board, folder))


def _code(function: Callable[..., Any]) -> str:
    """A digest of the source files a drawing depends on: its module's and the shared figure helpers'."""
    return source_digest(function.parts if isinstance(function, PlotParts) else function, Plot)


def _key(family: Family, function: Callable[..., Any], inputs: str) -> str:
    text = "\0".join((_code(function), family.name, _name(function), inputs))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def plot_jobs(board: Board) -> list[Job]:
    """Every drawing of the families present, in order; a family whose plots cannot be loaded costs a warning."""
    jobs: list[Job] = []
    for family, _ in board.families():
        try:
            functions = plot_functions(family)
        except HarnessError as exc:
            print(f"harness: warning: no plots for family {family.name!r}: {exc}", file=sys.stderr)
            continue
        inputs = None  # what every plain plot function of the family reads: worked out once
        for function in functions:
            if not isinstance(function, PlotParts):
                inputs = family_inputs(board, family) if inputs is None else inputs
                jobs.append(Job(family, function, _key(family, function, inputs)))
                continue
            try:
                parts = function.parts(board)
            except Exception as exc:  # a plugin's plot must not cost the leaderboard
                print(
                    f"harness: warning: {_failure(family, function, f'{type(exc).__name__}: {exc}')}", file=sys.stderr
                )
                continue
            jobs.extend(Job(family, function, _key(family, function, part.inputs), part) for part in parts)
    return jobs


def _name(function: Callable[..., Any]) -> str:
    return str(getattr(function, "__name__", function))


def _failure(family: Family, function: Callable[..., Any], what: str) -> str:
    return f"plot {_name(function)!r} of family {family.name!r} (plugin {family.plugin!r}) failed: {what}"


def draw(board: Board, job: Job, folder: Path) -> Outcome:
    """Run one drawing; its plots, or the warning that says why it failed."""
    try:
        return job.run(board, folder)
    except Exception as exc:  # a plugin's plot must not cost the leaderboard
        return _failure(job.family, job.function, f"{type(exc).__name__}: {exc}")


class Counter:
    """A line on stderr as drawings finish, and while a long one runs: how many of how many, how many kept, the time
    so far (a line every ``every`` seconds at most and, while drawings are waited for, at least; and the last)."""

    def __init__(self, total: int, kept: int, every: float = 2.0) -> None:
        self.total, self.kept, self.every = total, kept, every
        self.done = kept
        self.start = self.said = time.monotonic()
        if total:
            self.say(force=True)

    def say(self, force: bool = False) -> None:
        """The line, when it is time for one."""
        now = time.monotonic()
        if force or now - self.said >= self.every or self.done == self.total:
            kept = f"{self.kept} kept from the previous board, " if self.kept else ""
            print(
                f"harness: plots {self.done}/{self.total} ready ({kept}{self.done - self.kept} drawn, "
                f"{now - self.start:.1f} s)",
                file=sys.stderr,
            )
            self.said = now

    def advance(self) -> None:
        """One more drawing finished."""
        self.done += 1
        self.say()


class Drawn(list[Plot]):
    """The plots, and the keys of the drawings that made none (listed in the index, so not drawn again)."""

    empty: tuple[str, ...] = ()


def collect(jobs: Sequence[Job], outcomes: Sequence[Outcome]) -> Drawn:
    """The plots in job order, each marked with its family and its drawing's key; a failed job's warning is printed.

    Two plots with one file name are an error.
    """
    plots = Drawn()
    plots.empty = tuple(job.key for job, outcome in zip(jobs, outcomes) if outcome == [])
    for job, outcome in zip(jobs, outcomes):
        if isinstance(outcome, str):
            print(f"harness: warning: {outcome}", file=sys.stderr)
            continue
        for plot in outcome:
            if any(p.file == plot.file for p in plots):
                raise HarnessError(
                    f"two plots write plots/{plot.file} (family {job.family.name!r}); each plot needs its own file name"
                )
            plots.append(replace(plot, family=job.family.name, key=job.key))
    return plots


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def index_text(plots: Sequence[Plot], folder: Path) -> str:
    """``plots/index.json``: each drawing's key with the plots (title, file, the file's SHA-256) it made into
    ``folder``."""
    found: dict[str, list[list[str]]] = {key: [] for key in getattr(plots, "empty", ())}
    for plot in plots:
        found.setdefault(plot.key, []).append([plot.title, plot.file, _digest(folder / plot.file)])
    return json.dumps(found, indent=0, sort_keys=True, ensure_ascii=False) + "\n"


def _kept(jobs: Sequence[Job], previous: Path | None, folder: Path) -> dict[int, Outcome]:
    """The drawings the previous board's ``plots`` folder already holds (same key, every file there), copied into
    ``folder``; an index that cannot be read keeps nothing."""
    if previous is None or not (previous / INDEX).is_file():
        return {}
    try:
        index = json.loads((previous / INDEX).read_text(encoding="utf-8"))
        drawn = {str(k): [(str(t), str(f), str(d)) for t, f, d in v] for k, v in index.items()}
    except (OSError, ValueError, TypeError, AttributeError):
        return {}
    kept: dict[int, Outcome] = {}
    for number, job in enumerate(jobs):
        plots = drawn.get(job.key)
        if plots is None or not all(_unchanged(previous, name, digest) for _, name, digest in plots):
            continue
        for _, name, _ in plots:
            shutil.copyfile(previous / name, folder / name)
        kept[number] = [Plot(job.family.name, title, name) for title, name, _ in plots]
    return kept


def _unchanged(folder: Path, name: str, digest: str) -> bool:
    """Whether ``folder/name`` is a plain file, as drawn (no one replaced it since)."""
    path = folder / name
    return Path(name).name == name and path.is_file() and not path.is_symlink() and _digest(path) == digest


def _work(board: Board, jobs: Sequence[Job], folder: Path, claimed: Any, sender: Connection) -> None:
    """A worker: draw the next unclaimed job of ``jobs`` until none is left, sending ``(index, outcome)`` after each.

    Ctrl-C is the caller's to handle, and a terminated worker ends without a traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    while True:
        with claimed.get_lock():
            index = claimed.value
            claimed.value += 1
        if index >= len(jobs):
            break
        outcome = draw(board, jobs[index], folder)
        try:
            sender.send((index, outcome))
        except Exception as exc:  # what a plot function returned cannot be sent (not picklable)
            sender.send(
                (index, _failure(jobs[index].family, jobs[index].function, f"its result cannot be sent back: {exc}"))
            )
    sender.close()


class Drawing:
    """Plots being drawn in worker processes; ``result()`` waits for them (``close()`` stops them). A thread takes
    each finished drawing as it comes, so the progress line goes on while the caller writes the tables.

    ``todo``: the indices (in ``jobs``) of the drawings the workers draw; ``kept``: the others' outcomes."""

    def __init__(
        self,
        board: Board,
        jobs: list[Job],
        folder: Path,
        workers: list[tuple[Any, Connection]],
        claimed: Any,
        todo: list[int],
        kept: dict[int, Outcome],
        counter: Counter,
    ) -> None:
        self.board, self.jobs, self.folder, self.workers, self.claimed = board, jobs, folder, workers, claimed
        self.todo, self.counter = todo, counter
        self.outcomes = dict(kept)
        self.receiver = threading.Thread(target=self._receive, name="harness-plots", daemon=True)
        self.receiver.start()

    def _receive(self) -> None:
        """Each worker's outcomes until it ends; a line at least every ``counter.every`` seconds meanwhile."""
        open_ = {connection: process for process, connection in self.workers}
        while open_:
            try:
                ready = cast(list[Connection], wait(list(open_), timeout=self.counter.every))
            except (OSError, ValueError):  # closed by ``close``
                return
            if not ready and self.counter.done < self.counter.total:
                self.counter.say()
            for connection in ready:
                try:
                    index, outcome = connection.recv()
                except (EOFError, OSError):
                    open_.pop(connection).join()  # it closed its end: it is ending
                    continue
                self.outcomes[self.todo[index]] = outcome
                self.counter.advance()

    def result(self) -> list[Plot]:
        """The plots, as ``collect`` gives them; a job whose worker died is a warning, one never claimed is drawn here."""
        self.receiver.join()
        self.close()
        outcomes = self.outcomes
        codes = ", ".join(str(p.exitcode) for p, _ in self.workers if p.exitcode)
        for position, index in enumerate(self.todo):
            if index not in outcomes:
                job = self.jobs[index]
                if position < self.claimed.value:
                    outcomes[index] = _failure(
                        job.family, job.function, f"its drawing process ended (exit code {codes})"
                    )
                else:
                    outcomes[index] = draw(self.board, job, self.folder)
                    self.counter.advance()
        return collect(self.jobs, [outcomes[index] for index in range(len(self.jobs))])

    def close(self) -> None:
        """Stop the workers still running (after an error or an interruption of the caller)."""
        for process, _ in self.workers:
            if process.is_alive():
                process.terminate()
        self.receiver.join()  # a worker's end closes its connection, and the receiver joins it
        for process, connection in self.workers:
            process.join()
            connection.close()


def _load_matplotlib() -> None:
    """Import what every drawing needs (the figure and the PNG backend) before the workers fork, so they share it."""
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401


def start_plots(
    board: Board, folder: Path, workers: int | None = None, previous: Path | None = None
) -> Drawing | list[Plot]:
    """Start drawing every plot of the families present into ``folder``: a ``Drawing`` to wait for, or the
    plots themselves when they were drawn here, one after the other (``workers``: processes, one per CPU by default).
    Drawings whose key the ``previous`` plots folder holds are copied from it, not drawn.

    A plot function that fails costs a warning naming its family and plugin; the other plots and
    the tables are still written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    jobs = plot_jobs(board)
    outcomes = _kept(jobs, previous, folder)
    # whole drawings first, the parts (many, and small) after them, so that the workers end together; the plots
    # are collected in the jobs' order whatever the order they are drawn in
    todo = sorted(
        (index for index in range(len(jobs)) if index not in outcomes), key=lambda i: jobs[i].part is not None
    )
    counter = Counter(len(jobs), len(outcomes))
    count = min(len(todo), cpus() if workers is None else workers)
    if count < 2 or not can_fork():
        for index in todo:
            outcomes[index] = draw(board, jobs[index], folder)
            counter.advance()
        return collect(jobs, [outcomes[index] for index in range(len(jobs))])
    _load_matplotlib()  # once, here: each worker would import it again
    if gc.get_freeze_count():  # the caller keeps what it holds out of the collector's sight (``build``): matplotlib too
        gc.freeze()
    context = multiprocessing.get_context("fork")
    claimed = context.Value("i", 0)
    started: list[tuple[Any, Connection]] = []
    pending = [jobs[index] for index in todo]
    try:
        for _ in range(count):
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(target=_work, args=(board, pending, folder, claimed, sender), daemon=True)
            process.start()
            sender.close()
            started.append((process, receiver))
    except BaseException:
        Drawing(board, jobs, folder, started, claimed, todo, outcomes, counter).close()
        raise
    return Drawing(board, jobs, folder, started, claimed, todo, outcomes, counter)


def write_plots(board: Board, folder: Path, workers: int | None = None) -> list[Plot]:
    """Write every plot of the families present into ``folder`` (see ``start_plots``) and return them."""
    started = start_plots(board, folder, workers)
    if isinstance(started, list):
        return started
    try:
        return started.result()
    finally:
        started.close()
