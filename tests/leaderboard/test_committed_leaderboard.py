"""The committed leaderboard/ regenerates byte for byte from its committed input results."""

from __future__ import annotations

from pathlib import Path

from harness.cli import main

REPO = Path(__file__).resolve().parents[2]
BOARD = REPO / "leaderboard"


def test_committed_leaderboard_regenerates_identically(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "board"
    assert main(["leaderboard", "leaderboard/results", "-o", str(out)]) == 0
    inputs = {Path("suite.yaml")}  # the suite file that makes the results: an input, not an output
    committed = sorted(
        p.relative_to(BOARD)
        for p in BOARD.rglob("*")
        if p.is_file() and "results" not in p.relative_to(BOARD).parts and p.relative_to(BOARD) not in inputs
    )
    assert committed == sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    for name in committed:
        expected, got = (BOARD / name).read_bytes(), (out / name).read_bytes()
        if name == Path("README.md"):  # the regenerate command names the output folder
            got = got.replace(str(out).encode(), b"leaderboard")
        assert got == expected, name
