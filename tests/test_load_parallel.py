"""Reading results with helper processes (``harness.results.load``): the entries and problems, their order included,
are those of reading line after line; a helper that cannot be forked or dies leaves its share to the parent."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
from pathlib import Path

import pytest
from test_results import record_dict

from harness.results import load
from harness.results.load import load_entries

GOOD = json.dumps(record_dict())


def lines_of(index: int) -> list[str]:
    """One file's lines: good ones around every kind of bad line."""
    unknown = json.dumps(record_dict(bogus=1))  # no record can be built from it
    missing = json.dumps({k: v for k, v in record_dict().items() if k != "started"})
    return [
        json.dumps(record_dict(task_args={"k": 10, "i": index})),
        "{not json",
        GOOD,
        json.dumps(record_dict(metrics={"m": "high"})),  # a schema error
        GOOD.replace('"task": "t",', '"task": "t", "task": "u",'),  # a repeated key
        "",
        "   ",
        unknown,
        missing,
        "[1, 2]",
        '"text"',
        "null",
        json.dumps(record_dict(metrics={"m": 10**20}), ensure_ascii=True).replace('"x"', '"\\u0078"'),  # json.loads
        GOOD,
    ]


@pytest.fixture
def results(tmp_path):
    """Three results files, the last ending in a torn line."""
    for index in range(3):
        folder = tmp_path / f"m{index}"
        folder.mkdir()
        text = "\n".join(lines_of(index)) + "\n"
        if index == 2:
            text += GOOD[:40]
        (folder / "results.jsonl").write_text(text)
    return [str(tmp_path)]


@pytest.fixture
def parent_checks(monkeypatch):
    """The lines the parent process checked itself (a helper's checks are counted in its own process)."""
    checked: list[tuple[str, int]] = []
    parent, original = os.getpid(), load.line_outcome

    def counted(name, number, raw, build=True):
        if os.getpid() == parent:
            checked.append((name, number))
        return original(name, number, raw, build)

    monkeypatch.setattr(load, "line_outcome", counted)
    return checked


def serial(locations, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(load, "cpus", lambda: 1)
        return load_entries(locations)


def helped(monkeypatch, cpus=2, parent_lines=None):
    """Shares with ``cpus - 1`` helpers whatever the read's size; ``parent_lines``: the parent's share."""
    monkeypatch.setattr(load, "cpus", lambda: cpus)
    monkeypatch.setattr(load, "PARALLEL_LINES", 0)
    if parent_lines is not None:
        bounds = load._bounds

        def fixed(lines, cost=0.0):
            found = bounds(lines, cost)
            share = (len(lines) - parent_lines) // (cpus - 1)
            return [0, *range(len(lines) - share * (cpus - 1), len(lines) + 1, share)] if found[1:] else found

        monkeypatch.setattr(load, "_bounds", fixed)


@pytest.mark.parametrize(("cpus", "parent_lines"), [(2, None), (2, 5), (2, 20), (3, 11), (3, 0)])
def test_helpers_give_what_reading_line_after_line_gives(results, monkeypatch, parent_checks, cpus, parent_lines):
    expected = serial(results, monkeypatch)
    parent_checks.clear()
    helped(monkeypatch, cpus, parent_lines)
    entries, problems = load_entries(results)
    assert (entries, problems) == expected
    reasons = [p.reason for p in problems]
    assert len(entries) == 12 and len(problems) == 3 * 8 + 1
    assert [type(e.record.metrics["m"]) for e in entries if e.record.metrics["m"] != 0.5] == [int] * 3
    assert any("repeated key" in r for r in reasons) and any("torn last line" in r for r in reasons)
    assert sum("does not match the results schema" in r for r in reasons) == 3 * 6
    total = 3 * 14 + 1
    own = load._bounds([("", 0, b"")] * total)[1]
    assert (
        own < total
    )  # the helpers checked the rest, but for the lines the parent reads itself: blank, or not orjson's
    where = [(Path(name).parent.name, number) for name, number in parent_checks]
    assert where[:own] == [(f"m{i // 14}", i % 14 + 1) for i in range(own)]
    assert set(where[own:]) <= {(f"m{i}", n) for i in range(3) for n in (6, 7, 13)}  # blank, or read by json.loads
    assert (f"m{(total - 1) // 14 - 1}", 13) in where[own:]


def test_a_helper_that_cannot_be_forked_leaves_its_share_to_the_parent(results, monkeypatch, parent_checks):
    expected = serial(results, monkeypatch)
    parent_checks.clear()
    helped(monkeypatch)

    def no_fork(self):
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.get_context("fork").Process, "start", no_fork)
    assert load_entries(results) == expected
    assert len(parent_checks) == 3 * 14 + 1


def test_a_helper_that_dies_leaves_its_share_to_the_parent_which_reads_each_file_once(
    results, monkeypatch, parent_checks
):
    expected = serial(results, monkeypatch)
    parent_checks.clear()
    helped(monkeypatch)
    monkeypatch.setattr(load, "_check_share", lambda *args: os._exit(3))
    reads: list[str] = []
    read = load.read_result_lines
    monkeypatch.setattr(load, "read_result_lines", lambda path: reads.append(str(path)) or read(path))
    assert load_entries(results) == expected
    assert len(parent_checks) == 3 * 14 + 1
    assert sorted(reads) == sorted(set(reads)) and len(reads) == 3


def test_a_helper_runs_none_of_the_callers_cleanup(results, monkeypatch, tmp_path):
    helped(monkeypatch)
    log = tmp_path / "cleanup"
    try:
        load_entries(results)
    finally:
        with log.open("a") as handle:
            handle.write(f"{os.getpid()}\n")
    time.sleep(0.1)
    assert log.read_text() == f"{os.getpid()}\n"


def test_a_helper_ignores_ctrl_c(results, monkeypatch, parent_checks):
    expected = serial(results, monkeypatch)
    parent_checks.clear()
    helped(monkeypatch)
    parent, counted = os.getpid(), load.line_outcome

    def interrupted(name, number, raw, build=True):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C reaches the whole process group
        return counted(name, number, raw, build)

    monkeypatch.setattr(load, "line_outcome", interrupted)
    assert load_entries(results) == expected
    assert len(parent_checks) < 3 * 14 + 1  # the helper's verdicts arrived


def test_an_interrupted_parent_leaves_no_helper_behind(results, monkeypatch):
    helped(monkeypatch)
    parent, check = os.getpid(), load.line_outcome

    def slow(name, number, raw, build=True):
        if os.getpid() != parent:
            time.sleep(60)
        return check(name, number, raw, build)

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(load, "line_outcome", slow)
    monkeypatch.setattr(load, "unchecked_outcome", interrupted)
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        load_entries(results)
    assert time.monotonic() - start < 30
    assert multiprocessing.active_children() == []


def test_small_reads_one_cpu_and_no_fork_are_read_here(monkeypatch):
    lines = [("f", n, b"{}\n") for n in range(1, 30_001)]
    monkeypatch.setattr(load, "cpus", lambda: 2)
    bounds = load._bounds(lines)
    assert bounds[0] == 0 and bounds[-1] == 30_000 and len(bounds) == 3
    assert bounds[2] - bounds[1] > bounds[1] - bounds[0]  # the helper takes more of the checks
    assert load._bounds(lines[:1000]) == [0, 1000]
    big = [("f", 1, b" " * (load.PARALLEL_BYTES + 1)), ("f", 2, b"{}\n")]
    assert len(load._bounds(big)) == 3  # few lines, but many bytes
    monkeypatch.setattr(load, "cpus", lambda: 3)
    three = load._bounds(lines)
    assert len(three) == 4 and three[3] - three[2] == three[2] - three[1]
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    assert load._bounds(lines) == [0, 30_000]
    monkeypatch.undo()
    monkeypatch.setattr(load, "cpus", lambda: 1)
    assert load._bounds(lines) == [0, 30_000]


def good_files(tmp_path: Path, bad: str | None = None) -> list[str]:
    """Two files of good lines; ``bad`` (a line the helper refuses) last in the second, in the helper's share."""
    for index in range(2):
        folder = tmp_path / f"g{index}"
        folder.mkdir()
        rows = [json.dumps(record_dict(task_args={"i": index, "j": j})) for j in range(6)]
        (folder / "results.jsonl").write_text("\n".join(rows + ([bad] if bad and index else [])) + "\n")
    return [str(tmp_path)]


def counting_use(calls: list[list[int]]):
    """A ``use`` that records the ``j`` of every record it is given and sums them."""

    def use(entries):
        calls.append([e.record.task_args["j"] for e in entries])
        return sum(calls[-1])

    return use


def test_use_runs_once_on_the_read_records_when_the_helpers_refuse_nothing(tmp_path, monkeypatch):
    locations = good_files(tmp_path)
    helped(monkeypatch, 2, parent_lines=2)
    calls: list[list[int]] = []
    value, entries, problems = load.read_then(locations, counting_use(calls))
    assert len(calls) == 1 and value == 2 * sum(range(6)) and len(entries) == 12 and problems == []
    assert (entries, problems) == load_entries(locations)


def test_use_runs_again_on_the_checked_records_when_a_helper_refuses_a_line(tmp_path, monkeypatch):
    bad = json.dumps(record_dict(task_args={"i": 1, "j": 100}, metrics={"m": "high"}))  # builds, then refused
    locations = good_files(tmp_path, bad)
    helped(monkeypatch, 2, parent_lines=2)
    calls: list[list[int]] = []
    value, entries, problems = load.read_then(locations, counting_use(calls))
    assert len(calls) == 2 and 100 in calls[0] and 100 not in calls[1]  # read first, then without the refused line
    assert value == 2 * sum(range(6)) and len(entries) == 12
    assert [p.line for p in problems] == [7] and "does not match the results schema" in problems[0].reason


def test_a_use_that_fails_on_unchecked_records_gets_the_checked_ones(tmp_path, monkeypatch):
    bad = json.dumps(record_dict(task_args={"i": 1, "j": "x"}, metrics={"m": "high"}))
    locations = good_files(tmp_path, bad)
    helped(monkeypatch, 2, parent_lines=2)
    calls: list[list[int]] = []
    value, _, problems = load.read_then(locations, counting_use(calls))  # sum() fails on "x" at first
    assert len(calls) == 2 and value == 2 * sum(range(6)) and len(problems) == 1


def test_read_line_after_line_use_runs_once(tmp_path, monkeypatch):
    bad = json.dumps(record_dict(task_args={"i": 1, "j": 100}, metrics={"m": "high"}))
    locations = good_files(tmp_path, bad)
    monkeypatch.setattr(load, "cpus", lambda: 1)
    calls: list[list[int]] = []
    value, _, problems = load.read_then(locations, counting_use(calls))
    assert len(calls) == 1 and 100 not in calls[0] and value == 2 * sum(range(6)) and len(problems) == 1
