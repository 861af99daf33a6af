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
    """Off a terminal: a line once the loop has lasted 1 s, then one whenever 10 s passed since the last, one at the
    end."""
    clock = Clock()
    monkeypatch.setattr("harness.progress.time.perf_counter", clock)
    stream = io.StringIO()
    with Progress(stream=stream).task("encoding", 8) as advance:
        for _ in range(8):
            clock.now += 4.0  # an item every 4 s: lines after items 1 (4 s), 4 (16 s) and 7 (28 s), then the end
            advance(1)
    assert stream.getvalue().splitlines() == [
        "encoding: 1/8 (0.2/s, 4.0s)",
        "encoding: 4/8 (0.2/s, 16.0s)",
        "encoding: 7/8 (0.2/s, 28.0s)",
        "encoding: 8/8 (0.2/s, 32.0s)",
    ]


def test_a_quick_loop_prints_nothing(monkeypatch):
    """A loop done within a second (a few outputs the cache lacked) is no news: no "0/1 ... 1/1"."""
    clock = Clock()
    monkeypatch.setattr("harness.progress.time.perf_counter", clock)
    stream = io.StringIO()
    for _ in Progress(stream=stream).track(range(8), "encoding"):
        clock.now += 0.1
    assert stream.getvalue() == ""


def test_a_heartbeat_prints_while_no_item_finishes(monkeypatch):
    """``advance(0)`` (the wait on a long native call) prints at 1 s, then every 10 s, though the count stays put."""
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
