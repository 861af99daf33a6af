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

        def fixed(lines):
            found = bounds(lines)
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
