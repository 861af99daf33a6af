"""Plots keyed by their inputs: a rebuild takes from the previous board what did not change and redraws the rest,
says how far it is, and says which earlier board it replaced and from when."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from leaderboard.builders import record, write_results

import harness.leaderboard.plots as plots
from harness.cli import main
from harness.leaderboard.figures import Part, Plot, PlotParts, inputs_of
from harness.leaderboard.merge import merge
from harness.results.load import Entry

DRAWN: list[str] = []


def _parts(board) -> list[Part]:
    """One part per current result: a file named after its model, holding its value."""

    def draw(result, folder: Path) -> list[Plot]:
        name = f"{result.model_label}.png"
        DRAWN.append(name)
        (folder / name).write_text(str(result.record.metrics))
        return [Plot("", f"plot of {result.model_label}", name)]

    return [Part(inputs_of(r.record), lambda folder, r=r: draw(r, folder)) for r in board.current]


PARTS = PlotParts(_parts, "parts")


def plain(board, folder: Path) -> list[Plot]:
    """A plain plot function: one file from every result of its family."""
    DRAWN.append("all.png")
    (folder / "all.png").write_text(str(len(board.current)))
    return [Plot("", "all", "all.png")]


def board_of(*records):
    return merge([Entry(r, Path("results.jsonl")) for r in records])


def draw(board, folder: Path, previous: Path | None) -> list[Plot]:
    DRAWN.clear()
    drawn = plots.start_plots(board, folder, workers=1, previous=previous)
    assert isinstance(drawn, list)
    (folder / plots.INDEX).write_text(plots.index_text(drawn, folder))
    return drawn


def test_a_rebuild_redraws_only_the_parts_whose_inputs_changed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(plots, "plot_functions", lambda family: [PARTS, plain])
    a, b = record("xlr", "a", 0.5), record("xlr", "b", 0.4)
    first = draw(board_of(a, b), tmp_path / "one", None)
    assert sorted(DRAWN) == ["a.png", "all.png", "b.png"] and len(first) == 3
    assert "harness: plots 0/3 ready (0 drawn" in capsys.readouterr().err
    draw(board_of(a, b), tmp_path / "two", tmp_path / "one")
    assert DRAWN == []  # nothing changed: everything kept, the files copied
    assert "harness: plots 3/3 ready (3 kept from the previous board, 0 drawn" in capsys.readouterr().err
    assert (tmp_path / "two" / "b.png").read_text() == (tmp_path / "one" / "b.png").read_text()
    newer = record("xlr", "b", 0.3, started="2026-02-01T00:00:00+00:00")
    draw(board_of(a, newer), tmp_path / "three", tmp_path / "two")
    assert sorted(DRAWN) == ["all.png", "b.png"]  # b's part, and the plain function that reads every result
    err = capsys.readouterr().err
    assert "harness: plots 3/3 ready (1 kept from the previous board, 2 drawn" in err
    assert "0.3" in (tmp_path / "three" / "b.png").read_text()
    rerun = record("xlr", "b", 0.3, started="2026-03-01T00:00:00+00:00")  # the same result, run again later
    draw(board_of(a, newer, rerun), tmp_path / "rerun", tmp_path / "three")
    assert DRAWN == []  # when a line ran is not what a plot shows: a rerun that reproduces a result redraws nothing
    (tmp_path / "three" / "a.png").write_text("changed by hand")
    draw(board_of(a, newer), tmp_path / "four", tmp_path / "three")
    assert DRAWN == ["a.png"]  # a file that is not what was drawn is drawn again


def test_a_board_written_over_an_earlier_one_says_what_it_replaced_and_from_when(tmp_path, capsys):
    write_results(tmp_path / "results", [record("xlr", "a", 0.5), record("xlr", "b", 0.4)])
    command = ["leaderboard", str(tmp_path / "results"), "-o", str(tmp_path / "board"), "--no-plots"]
    assert main(command) == 0
    assert "replaced" not in capsys.readouterr().out  # a new folder replaces nothing
    (tmp_path / "results" / "results.jsonl").write_text(
        (tmp_path / "results" / "results.jsonl").read_text().splitlines()[0] + "\n"
    )  # b is gone: its model page goes too
    assert main(command) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(f"replaced the leaderboard written in {tmp_path / 'board'} at 20")
    # README, csv, json, index, the family page, a's and b's pages: 7; b's page is removed
    assert last.endswith(": 6 of its 7 files written again, 1 removed; other files left as they were")


def test_a_results_key_holds_its_per_sample_log(tmp_path):
    """A rewritten log changes the key of the plots that read it, though its line is the same."""
    from leaderboard.builders import with_samples

    logged = with_samples(tmp_path, record("xlr", "a", 0.5), [{"id": "1", "hit": 1.0}], "s.jsonl")
    (result,) = board_of(logged).current
    result = replace(result, entry=Entry(logged, tmp_path / "results.jsonl"))  # where its log is
    before = inputs_of(result)
    assert inputs_of(result) == before and before != inputs_of(logged)  # the log's digest is in it
    with_samples(tmp_path, logged, [{"id": "1", "hit": 0.0}], "s.jsonl")
    assert inputs_of(result) != before


def test_a_line_built_in_code_with_odd_keys_still_has_a_key():
    """An integer past 64 bits, or keys of two types (possible in a line built in Python), still give a key."""
    odd = record("xlr", "a", 0.5)
    odd.extra = {"big": 2**70}
    assert inputs_of(odd) != inputs_of(record("xlr", "a", 0.5))
    odd.extra = {1: "one", "two": 2}
    assert inputs_of(odd) == inputs_of(odd)
