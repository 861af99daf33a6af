"""Progress output: plain lines off a terminal, silence when disabled."""

from __future__ import annotations

import io

from harness.progress import Progress


def test_plain_lines_when_not_a_terminal():
    stream = io.StringIO()
    progress = Progress(stream=stream)
    assert list(progress.track(range(8), "encoding")) == list(range(8))
    lines = stream.getvalue().splitlines()
    assert lines[0] == "encoding: 0/8"
    assert [line.split(" (")[0] for line in lines[1:]] == [
        "encoding: 2/8",
        "encoding: 4/8",
        "encoding: 6/8",
        "encoding: 8/8",
    ]
    assert all("/s, " in line for line in lines[1:])


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
