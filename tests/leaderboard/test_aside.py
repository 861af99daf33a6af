"""Work done aside in a forked process: its result, its exception, a process that dies, and no fork at all."""

from __future__ import annotations

import os
import time

import pytest
from leaderboard.builders import record, write_results

from harness.leaderboard import aside
from harness.leaderboard.aside import Aside

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forking is what is tested")


def _pid_and(value: int) -> tuple[int, int]:
    return os.getpid(), value * 2


def test_the_result_comes_from_another_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aside, "cpus", lambda: 2)
    work = Aside(lambda: _pid_and(21), "a test")
    pid, value = work.result()
    assert value == 42
    assert pid != os.getpid()
    assert work.result() == (pid, 42)  # asked again: the same outcome, not computed again


def test_on_one_cpu_it_is_computed_in_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aside, "cpus", lambda: 1)
    work = Aside(lambda: _pid_and(5), "a test")
    assert work.process is None
    assert work.result() == (os.getpid(), 10)


def test_little_work_is_done_in_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aside, "cpus", lambda: 2)
    work = Aside(lambda: _pid_and(1), "a test", worth=False)
    assert work.process is None
    assert work.result() == (os.getpid(), 2)


def test_an_exception_is_raised_in_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aside, "cpus", lambda: 2)

    def fails() -> None:
        raise ValueError("row 3 of nowhere")

    work = Aside(fails, "a test")
    with pytest.raises(ValueError, match="row 3 of nowhere"):
        work.result()


def test_a_process_that_dies_is_computed_again_here_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(aside, "cpus", lambda: 2)
    parent = os.getpid()

    def dies_in_a_child() -> str:
        if os.getpid() != parent:
            os._exit(3)
        return "computed here"

    work = Aside(dies_in_a_child, "the exports")
    assert work.result() == "computed here"
    assert "the process computing the exports ended (exit code 3); computing it here" in capfd.readouterr().err


def test_close_stops_a_process_still_working(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(aside, "cpus", lambda: 2)
    work = Aside(lambda: time.sleep(60), "a test")
    process = work.process
    started = time.monotonic()
    work.close()
    assert time.monotonic() - started < 30
    assert not process.is_alive()
    assert process.exitcode is not None and process.exitcode < 0  # ended by a signal


def test_a_board_writes_the_same_exports_from_another_process(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.leaderboard import build

    write_results(tmp_path / "results", [record(model=m, values=v) for m, v in (("a", 0.5), ("b", 0.7), ("a", 0.6))])
    monkeypatch.setattr(aside, "cpus", lambda: 2)
    monkeypatch.setattr(build, "ASIDE", 0)  # every board's exports in another process
    forked: list[bool] = []

    class Watched(Aside):  # type: ignore[type-arg]
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            forked.append(self.process is not None)

    monkeypatch.setattr(build, "Aside", Watched)
    build.write_leaderboard([str(tmp_path / "results")], tmp_path / "forked", "test", plots=False)
    monkeypatch.setattr(build, "ASIDE", 10**9)  # none
    build.write_leaderboard([str(tmp_path / "results")], tmp_path / "here", "test", plots=False)
    assert forked == [True, False]
    for name in ("leaderboard.csv", "leaderboard.json"):
        assert (tmp_path / "forked" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()
    assert b'"superseded": true' in (tmp_path / "here" / "leaderboard.json").read_bytes().replace(b'":true', b'": true')
