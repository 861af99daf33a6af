"""All plots (PNG, matplotlib, byte-identical for the same inputs): each family's plot functions,
registered by its plugin, draw into one folder.

Where the system can fork, the plot functions run in worker processes (one per CPU, each taking the
next function as it finishes one) while the caller goes on writing the tables: the workers inherit
the board, write their PNGs into the folder and send back only what they drew. The plots, their
order, the files and the warnings are those of drawing one function after the other, which is what
happens on a single CPU, where fork is unavailable, and for a single plot function.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any, cast

from harness.errors import HarnessError
from harness.leaderboard.families import Family, plot_functions
from harness.leaderboard.figures import Plot
from harness.leaderboard.merge import Board

Job = tuple[Family, Callable[..., Any]]
Outcome = list[Plot] | str  # the plots a function drew, or why it failed


def plot_jobs(board: Board) -> list[Job]:
    """Every plot function of the families present, in order; a family whose plots cannot be loaded costs a warning."""
    jobs: list[Job] = []
    for family, _ in board.families():
        try:
            functions = plot_functions(family)
        except HarnessError as exc:
            print(f"harness: warning: no plots for family {family.name!r}: {exc}", file=sys.stderr)
            continue
        jobs.extend((family, function) for function in functions)
    return jobs


def _name(function: Callable[..., Any]) -> str:
    return str(getattr(function, "__name__", function))


def _failure(job: Job, what: str) -> str:
    family, function = job
    return f"plot {_name(function)!r} of family {family.name!r} (plugin {family.plugin!r}) failed: {what}"


def draw(board: Board, job: Job, folder: Path) -> Outcome:
    """Run one plot function; its plots, or the warning that says why it failed."""
    try:
        return list(job[1](board, folder))
    except Exception as exc:  # a plugin's plot must not cost the leaderboard
        return _failure(job, f"{type(exc).__name__}: {exc}")


def collect(jobs: Sequence[Job], outcomes: Sequence[Outcome]) -> list[Plot]:
    """The plots in job order, each marked with its family; a failed job's warning is printed.

    Two plots with one file name are an error.
    """
    plots: list[Plot] = []
    for (family, _), outcome in zip(jobs, outcomes):
        if isinstance(outcome, str):
            print(f"harness: warning: {outcome}", file=sys.stderr)
            continue
        for plot in outcome:
            if any(p.file == plot.file for p in plots):
                raise HarnessError(
                    f"two plots write plots/{plot.file} (family {family.name!r}); each plot needs its own file name"
                )
            plots.append(replace(plot, family=family.name))
    return plots


def _cpus() -> int:
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _work(board: Board, jobs: Sequence[Job], folder: Path, claimed: Any, sender: Connection) -> None:
    """A worker: draw the next unclaimed job until none is left, sending ``(index, outcome)`` after each.

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
            sender.send((index, _failure(jobs[index], f"its result cannot be sent back: {exc}")))
    sender.close()


@dataclass
class Drawing:
    """Plots being drawn in worker processes; ``result()`` waits for them (``close()`` stops them)."""

    board: Board
    jobs: list[Job]
    folder: Path
    workers: list[tuple[Any, Connection]]
    claimed: Any

    def result(self) -> list[Plot]:
        """The plots, as ``collect`` gives them; a job whose worker died is a warning, one never claimed is drawn here."""
        outcomes: dict[int, Outcome] = {}
        open_ = {connection: process for process, connection in self.workers}
        while open_:
            for connection in cast(list[Connection], wait(list(open_))):
                try:
                    index, outcome = connection.recv()
                    outcomes[index] = outcome
                except EOFError:
                    open_.pop(connection).join()
        self.close()
        codes = ", ".join(str(p.exitcode) for p, _ in self.workers if p.exitcode)
        for index in range(len(self.jobs)):
            if index not in outcomes:
                if index < self.claimed.value:
                    outcomes[index] = _failure(self.jobs[index], f"its drawing process ended (exit code {codes})")
                else:
                    outcomes[index] = draw(self.board, self.jobs[index], self.folder)
        return collect(self.jobs, [outcomes[index] for index in range(len(self.jobs))])

    def close(self) -> None:
        """Stop the workers still running (after an error or an interruption of the caller)."""
        for process, connection in self.workers:
            if process.is_alive():
                process.terminate()
            process.join()
            connection.close()


def start_plots(board: Board, folder: Path, workers: int | None = None) -> Drawing | list[Plot]:
    """Start drawing every plot of the families present into ``folder``: a ``Drawing`` to wait for, or the
    plots themselves when they were drawn here, one after the other (``workers``: processes, one per CPU by default).

    A plot function that fails costs a warning naming its family and plugin; the other plots and
    the tables are still written.
    """
    folder.mkdir(parents=True, exist_ok=True)
    jobs = plot_jobs(board)
    count = min(len(jobs), _cpus() if workers is None else workers)
    if count < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return collect(jobs, [draw(board, job, folder) for job in jobs])
    context = multiprocessing.get_context("fork")
    claimed = context.Value("i", 0)
    started: list[tuple[Any, Connection]] = []
    try:
        for _ in range(count):
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(target=_work, args=(board, jobs, folder, claimed, sender), daemon=True)
            process.start()
            sender.close()
            started.append((process, receiver))
    except BaseException:
        Drawing(board, jobs, folder, started, claimed).close()
        raise
    return Drawing(board, jobs, folder, started, claimed)


def write_plots(board: Board, folder: Path, workers: int | None = None) -> list[Plot]:
    """Write every plot of the families present into ``folder`` (see ``start_plots``) and return them."""
    started = start_plots(board, folder, workers)
    if isinstance(started, list):
        return started
    try:
        return started.result()
    finally:
        started.close()
