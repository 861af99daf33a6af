"""Plots drawn in worker processes: the same plots, files and warnings as one after the other, in the same order;
a function that fails or whose process dies costs a warning; no fork, one CPU or one function: drawn here."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest
from leaderboard.builders import record

import harness.leaderboard.plots as plots
from harness.leaderboard.figures import Plot
from harness.leaderboard.merge import merge
from harness.results.load import Entry


def drawing(name: str):
    """A plot function that writes ``name`` holding the id of the process that drew it."""

    def draw(board, folder: Path) -> list[Plot]:
        (folder / name).write_text(str(os.getpid()))
        return [Plot("", f"plot {name}", name)]

    return draw


def fails(board, folder):
    raise ValueError("no data")


def dies(board, folder):
    os._exit(3)


@pytest.fixture
def board():
    return merge([Entry(record("xlr", "a", 0.5), Path("results.jsonl"))])


def test_workers_draw_what_one_process_draws_byte_for_byte(tmp_path):
    records = [
        record(task, model, values)
        for model, values in (("a", [0.9, 0.8]), ("b", [0.5, 0.3]), ("c", [0.1, 0.4]))
        for task in ("xlr", "backretrieval")
    ]
    board = merge([Entry(r, Path("results.jsonl")) for r in records])
    serial = plots.write_plots(board, tmp_path / "serial", workers=1)
    parallel = plots.write_plots(board, tmp_path / "parallel", workers=2)
    assert [p.file for p in parallel] == ["bkr_vs_xlr_ikea_en-de.png", "bkr_boxplots.png"] and parallel == serial
    for plot in serial:
        assert (tmp_path / "parallel" / plot.file).read_bytes() == (tmp_path / "serial" / plot.file).read_bytes()


def test_failures_cost_a_warning_in_order_and_the_other_plots_are_drawn(board, tmp_path, monkeypatch, capsys):
    functions = [drawing("one.png"), fails, dies, drawing("two.png"), drawing("three.png")]
    monkeypatch.setattr(plots, "plot_functions", lambda family: functions)
    drawn = plots.write_plots(board, tmp_path, workers=2)
    assert [(p.family, p.file) for p in drawn] == [
        ("retrieval", "one.png"),
        ("retrieval", "two.png"),
        ("retrieval", "three.png"),
    ]
    assert {(tmp_path / p.file).read_text() for p in drawn} - {str(os.getpid())}  # drawn in other processes
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warnings == [
        "harness: warning: plot 'fails' of family 'retrieval' (plugin 'retrieval') failed: ValueError: no data",
        "harness: warning: plot 'dies' of family 'retrieval' (plugin 'retrieval') failed: "
        "its drawing process ended (exit code 3)",
    ]


def test_two_plots_of_one_file_are_an_error_as_when_drawn_in_one_process(board, tmp_path, monkeypatch):
    monkeypatch.setattr(plots, "plot_functions", lambda family: [drawing("same.png"), drawing("same.png")])
    with pytest.raises(plots.HarnessError, match=r"two plots write plots/same\.png"):
        plots.write_plots(board, tmp_path, workers=2)


@pytest.mark.parametrize("case", ["no fork", "one cpu", "one function"])
def test_without_fork_on_one_cpu_or_for_one_function_the_plots_are_drawn_here(board, tmp_path, monkeypatch, case):
    functions = [drawing("one.png")] if case == "one function" else [drawing("one.png"), drawing("two.png")]
    monkeypatch.setattr(plots, "plot_functions", lambda family: functions)
    if case == "no fork":
        monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    started = plots.start_plots(board, tmp_path, workers=1 if case == "one cpu" else 2)
    assert (
        isinstance(started, list)
        and [p.file for p in started] == [f"{n}.png" for n in ("one", "two")][: len(functions)]
    )
    assert {(tmp_path / p.file).read_text() for p in started} == {str(os.getpid())}


def test_the_progress_line_goes_on_while_the_caller_is_busy(board, tmp_path, monkeypatch, capsys):
    """The drawings are received as they finish while the caller writes the tables: lines come before ``result``
    is called, and one at least every ``every`` seconds while a long drawing runs."""
    import functools
    import time

    def slow(board, folder):
        time.sleep(0.6)
        return drawing("slow.png")(board, folder)

    monkeypatch.setattr(plots, "plot_functions", lambda family: [drawing("quick.png"), slow])
    monkeypatch.setattr(plots, "Counter", functools.partial(plots.Counter, every=0.1))
    started = plots.start_plots(board, tmp_path, workers=2)
    assert isinstance(started, plots.Drawing)
    time.sleep(1.0)  # the caller, busy with the tables
    before = capsys.readouterr().err.splitlines()
    drawn = started.result()
    assert [p.file for p in drawn] == ["quick.png", "slow.png"]
    assert before[-1].startswith("harness: plots 2/2 ready (2 drawn, ")  # received without result()
    assert any(line.startswith("harness: plots 1/2 ready") for line in before)  # and said while slow drew
