"""Running a suite: its prepare steps, the cells of a shard (each model loaded once), then the board.

Every cell is a ``harness.evaluate`` call with ``resume``: the tasks whose signature the group's
results file already holds are skipped, so a rerun (or a run after a crash) does only what is missing.
Cells run model by model (a model's cells in file order, models in the order of their first cell) on
one adapter instance per model (``ModelPool``) and one data cache, so a model's weights load once and a
data set is read once per process; each results line is the one a separate ``harness run`` would write.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from harness.errors import HarnessError, HarnessWarning
from harness.plugins.registry import Registry, get_registry
from harness.progress import Progress
from harness.results.intervals import DEFAULT_RESAMPLES
from harness.results.records import RESULTS_FILE, ResultRecord, read_records
from harness.run.config import RunConfig
from harness.run.runner import Skipped, evaluate, resolve_tasks
from harness.suite.grid import cell_configurations, record_configuration, results_folder, shard_cells
from harness.suite.models import ModelPool, by_model, cell_batch_size
from harness.suite.spec import Cell, Suite, SuiteError


@dataclass
class SuiteRun:
    """What a suite run did: the cells of its shard, how many ran and how many the results already held."""

    cells: int = 0
    ran: int = 0
    skipped: int = 0
    board: str | None = None


def cell_label(cell: Cell) -> str:
    """``group: model(args) k=v,...`` for progress lines and the dry run."""
    model = cell.model.name + (
        "(" + ",".join(f"{k}={v}" for k, v in cell.model.args.items()) + ")" if cell.model.args else ""
    )
    args = ",".join(f"{k}={v}" for k, v in cell.task_args.items())
    return f"{cell.group.name}: {model}" + (f" {args}" if args else "")


def cell_config(suite: Suite, cell: Cell, registry: Registry, data_cache: dict[Any, Any]) -> RunConfig:
    """The run settings of a cell: its group's options, logs and results folder, with resume."""
    group, options = cell.group, cell.group.options
    return RunConfig(
        task_args=dict(cell.task_args),
        data_dir=group.data_dir,
        images=options.get("images"),
        image_model=options.get("image_model"),
        limit=options.get("limit"),
        seeds=options.get("seeds"),
        resamples=options.get("resamples", DEFAULT_RESAMPLES),
        batch_size=cell_batch_size(cell),
        device=str(options.get("device", "auto")),
        output=results_folder(suite, group),
        log_samples=group.logs != "none",
        log_form="compact" if group.logs == "compact" else "full",
        log_without=group.logs_without,
        resume=True,
        progress=Progress(enabled=True),
        registry=registry,
        data_cache=data_cache,
    )


def check_cells(suite: Suite, cells: Sequence[tuple[int, Cell]], pool: ModelPool) -> None:
    """Before anything runs: every cell's tasks, task arguments, model and options resolve (names, not data)."""
    for _, cell in cells:
        where = f"groups[{suite.groups.index(cell.group)}] ({cell.group.name})"
        try:
            cell_config(suite, cell, pool.registry, {})
        except HarnessError as exc:
            raise SuiteError(suite.path, f"{where}.options", str(exc)) from None
        try:
            resolve_tasks(pool.registry, list(cell.group.tasks), cell.task_args, cell.group.data_dir)
        except HarnessError as exc:
            raise SuiteError(suite.path, f"{where}, cell {cell_label(cell)!r}", str(exc)) from None
        try:
            pool.adapter(cell)
        except HarnessError as exc:
            raise SuiteError(suite.path, f"{where}, model {cell.model.name!r}", str(exc)) from None


def run_prepare(suite: Suite, stream: TextIO) -> None:
    """Run each prepare step whose ``creates`` is missing, as ``harness <command>`` in this process."""
    from harness.cli import main

    for index, step in enumerate(suite.prepare):
        if step.creates.exists():
            continue
        print(f"suite: prepare: harness {' '.join(step.command)}", file=stream, flush=True)
        code = main(list(step.command))
        if code != 0:
            raise SuiteError(
                suite.path, f"prepare[{index}]", f"`harness {' '.join(step.command)}` failed (exit {code})"
            )
        if not step.creates.exists():
            raise SuiteError(suite.path, f"prepare[{index}]", f"the command ran but did not create {step.creates}")


class GridProgress:
    """One line per cell that runs over the grid: done/total, elapsed, and an estimate from the cells that ran. A
    run of cells the results already hold is one line (said before the next cell that runs, or at the end)."""

    def __init__(self, total: int, stream: TextIO):
        self.total, self.stream = total, stream
        self.done = self.skipped = 0
        self.unsaid: list[Cell] = []  # skipped cells not yet said
        self.start = time.perf_counter()
        self.working = 0.0  # seconds spent in cells that ran (skipped cells cost next to nothing)

    def cell_done(self, cell: Cell, seconds: float, ran: bool) -> None:
        """Count a finished cell and print the grid's line."""
        self.done += 1
        if ran:
            self.working += seconds
        else:
            self.skipped += 1
            self.unsaid.append(cell)
            if self.done < self.total:
                return
        ran_count = self.done - self.skipped
        left = self.total - self.done
        if not left:
            estimate = "done"
        elif ran_count:
            estimate = f"about {_clock(self.working / ran_count * left)} left"
        else:
            estimate = "no estimate yet"
        said = []
        if self.unsaid:
            first = cell_label(self.unsaid[0])
            said.append(
                f"{first}: already in the results"
                if len(self.unsaid) == 1
                else f"{len(self.unsaid)} cells already in the results ({first} to {cell_label(self.unsaid[-1])})"
            )
            self.unsaid = []
        if ran:
            said.append(f"{cell_label(cell)}: {_clock(seconds)}")
        print(
            f"suite: {self.done}/{self.total} cells ({self.skipped} already in the results), "
            f"{_clock(time.perf_counter() - self.start)} elapsed, {estimate}; {'; '.join(said)}",
            file=self.stream,
            flush=True,
        )


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{rest:02d}" if hours else f"{minutes}:{rest:02d}"


def run_cells(
    suite: Suite, cells: Sequence[tuple[int, Cell]], pool: ModelPool, stream: TextIO, out: TextIO
) -> GridProgress:
    """Run the cells model by model, each model's adapter built once and released after its last cell."""
    progress = GridProgress(len(cells), stream)
    data_cache: dict[Any, Any] = {}
    for key, model_cells in by_model(pool, cells):
        for _, cell in model_cells:
            clock = time.perf_counter()
            with warnings.catch_warnings():  # the results lines keep them; the board shows them
                warnings.simplefilter("ignore", HarnessWarning)
                outcomes = evaluate(
                    list(cell.group.tasks), pool.adapter(cell), cell_config(suite, cell, pool.registry, data_cache)
                )
            for record in outcomes:
                if isinstance(record, ResultRecord):
                    value = record.metrics.get(record.main_metric)
                    shown = "n/a" if value is None else f"{value:.4f}"
                    print(f"{cell_label(cell)}: {record.task} {record.main_metric} {shown}", file=out, flush=True)
            ran = not all(isinstance(outcome, Skipped) for outcome in outcomes)
            progress.cell_done(cell, time.perf_counter() - clock, ran)
        pool.release(key)
    return progress


def shown_path(path: Path) -> str:
    """A path as the user would type it: relative to the working folder when inside it."""
    relative = os.path.relpath(path)
    return path.as_posix() if relative.startswith("..") else relative


def build_board(results: Path, board: Path) -> str:
    """``harness leaderboard <results> -o <board>``: every results folder under the suite's results, merged."""
    from harness.leaderboard.commands import add_leaderboard_arguments, run_leaderboard

    parser = argparse.ArgumentParser(prog="harness leaderboard")
    add_leaderboard_arguments(parser)
    run_leaderboard(parser.parse_args([shown_path(results), "-o", shown_path(board)]))
    return shown_path(board)


def run_suite(
    suite: Suite,
    *,
    shard: str | None = None,
    board: bool = True,
    board_only: bool = False,
    registry: Registry | None = None,
    stream: TextIO | None = None,
    out: TextIO | None = None,
) -> SuiteRun:
    """Prepare, run the cells of ``shard`` (all by default) with resume, then build the board (not for a shard:
    the board is built once, after every shard, with ``board_only``)."""
    stream, out = stream or sys.stderr, out or sys.stdout
    pool = ModelPool(registry or get_registry())
    done = SuiteRun()
    if not board_only:
        cells = shard_cells(suite.cells(), shard)
        check_cells(suite, cells, pool)
        run_prepare(suite, stream)
        progress = run_cells(suite, cells, pool, stream, out)
        done = SuiteRun(len(cells), progress.done - progress.skipped, progress.skipped)
    if suite.board is None or not board:
        return done
    if shard and not board_only:
        print(
            f"suite: shard {shard} done; build the board once every shard is: harness suite {shown_path(suite.path)} "
            "--board-only",
            file=stream,
        )
        return done
    done.board = build_board(suite.results, suite.board)
    return done


def dry_run(suite: Suite, shard: str | None, out: TextIO, registry: Registry | None = None) -> int:
    """Print the prepare steps that would run, the cells of the shard with what the results already hold
    (by configuration: a run compares signatures, so a changed data set or model still runs), and the board."""
    pool = ModelPool(registry or get_registry())
    cells = shard_cells(suite.cells(), shard)
    check_cells(suite, cells, pool)
    for step in suite.prepare:
        state = "exists" if step.creates.exists() else "missing: would run"
        print(f"prepare: harness {' '.join(step.command)}  ({shown_path(step.creates)} {state})", file=out)
    held: dict[Path, set[Any]] = {}
    total = len(suite.cells())
    for index, cell in cells:
        folder = results_folder(suite, cell.group)
        if folder not in held:
            records = read_records(folder / RESULTS_FILE)[0] if (folder / RESULTS_FILE).is_file() else []
            held[folder] = {record_configuration(record) for record in records}
        wanted = cell_configurations(pool.registry, cell, cell.model.name, pool.recorded_args(cell))
        have = sum(configuration in held[folder] for configuration in wanted)
        state = "in the results" if have == len(wanted) else f"to run ({have}/{len(wanted)} tasks in the results)"
        print(f"cell {index + 1}/{total}: {cell_label(cell)} -> {shown_path(folder)}: {state}", file=out)
    if suite.board is not None:
        print(f"board: harness leaderboard {shown_path(suite.results)} -o {shown_path(suite.board)}", file=out)
    return 0
