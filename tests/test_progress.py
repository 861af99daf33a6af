"""Progress output: plain lines off a terminal, silence when disabled."""

from __future__ import annotations

import io

from harness.progress import Progress


class Clock:
    """A stand-in for ``time.perf_counter`` that moves only when told."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_plain_lines_when_not_a_terminal(monkeypatch):
    """Off a terminal: a line at the start, one whenever 10 s passed since the last, one at the end."""
    clock = Clock()
    monkeypatch.setattr("harness.progress.time.perf_counter", clock)
    stream = io.StringIO()
    with Progress(stream=stream).task("encoding", 8) as advance:
        for _ in range(8):
            clock.now += 4.0  # an item every 4 s: lines after items 3 (12 s) and 6 (24 s), then the end
            advance(1)
    lines = stream.getvalue().splitlines()
    assert lines == [
        "encoding: 0/8",
        "encoding: 3/8 (0.2/s, 12.0s)",
        "encoding: 6/8 (0.2/s, 24.0s)",
        "encoding: 8/8 (0.2/s, 32.0s)",
    ]


def test_a_fast_loop_prints_its_start_and_end_only(monkeypatch):
    monkeypatch.setattr("harness.progress.time.perf_counter", Clock())
    stream = io.StringIO()
    assert list(Progress(stream=stream).track(range(8), "encoding")) == list(range(8))
    assert stream.getvalue().splitlines() == ["encoding: 0/8", "encoding: 8/8 (0.0/s, 0.0s)"]


def test_a_heartbeat_prints_while_no_item_finishes(monkeypatch):
    """``advance(0)`` (the wait on a long native call) prints every 10 s though the count stays put."""
    clock = Clock()
    monkeypatch.setattr("harness.progress.time.perf_counter", clock)
    stream = io.StringIO()
    with Progress(stream=stream).task("encoding", 4) as advance:
        for _ in range(250):  # 25 s of heartbeats, one every 0.1 s
            clock.now += 0.1
            advance(0)
        advance(4)
    lines = [line.split(" (")[0] for line in stream.getvalue().splitlines()]
    assert lines == ["encoding: 0/4", "encoding: 0/4", "encoding: 0/4", "encoding: 4/4"]


def test_disabled_prints_nothing():
    stream = io.StringIO()
    with Progress(enabled=False, stream=stream).task("x", 5) as advance:
        advance(5)
    assert stream.getvalue() == ""


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_rich_bars_on_a_terminal():
    stream = FakeTerminal()
    progress = Progress(stream=stream)
    with progress.task("scoring", 3) as advance:
        for _ in range(3):
            advance(1)
    assert "scoring" in stream.getvalue() and "3/3" in stream.getvalue()
