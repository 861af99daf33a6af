"""Issue 23, points 2 and 3: the leaderboard folder is swapped in whole, and no symlink in it is followed.

A reader sees the old board or the new one, never a mix: an interrupted build (Ctrl-C, SIGTERM)
removes its temporary folder and leaves the old board byte for byte. A symlink among the files
a leaderboard writes or deletes (its own names, ``plots``, the manifest's entries), or the output
folder itself as a symlink, is refused with exit 2 naming it; nothing outside the folder changes.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from faults.conftest import run_cli
from leaderboard.builders import record, write_results

import harness.leaderboard.output
import harness.plugins.registry


def _results(folder: Path) -> Path:
    write_results(
        folder,
        [
            record(task, model, [value, value + 0.1])
            for model, value in (("labse", 0.5), ("mbert", 0.4))
            for task in ("xlr", "backretrieval")
        ],
    )
    return folder


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def board(tmp_path, capsys, monkeypatch) -> Path:
    """A leaderboard written once (with the retrieval family's plots) from two results."""
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", None)  # the installed plugins draw the plots
    code, _, err = run_cli(capsys, "leaderboard", str(_results(tmp_path / "r")), "-o", str(tmp_path / "board"))
    assert code == 0, err
    (tmp_path / "board" / "notes.txt").write_text("the user's own")  # not generated: kept as it is
    return tmp_path / "board"


@pytest.mark.parametrize("signum", [None, signal.SIGTERM])
def test_an_interrupted_build_leaves_the_old_board_and_no_temporary(board, tmp_path, capsys, monkeypatch, signum):
    before = _snapshot(board)
    write_results(tmp_path / "r2", [record("xlr", "xlmr", 0.7)])
    real = harness.leaderboard.output.write_file
    written: list[str] = []

    def interrupted(path: Path, data: bytes) -> None:
        real(path, data)
        written.append(path.name)
        if len(written) == 2:  # the new README and one more file are written
            if signum is None:
                raise KeyboardInterrupt
            os.kill(os.getpid(), signum)

    monkeypatch.setattr(harness.leaderboard.output, "write_file", interrupted)
    code, _, err = run_cli(capsys, "leaderboard", str(tmp_path / "r2"), "-o", str(board))
    assert code == (130 if signum is None else 143) and len(written) == 2
    lines = err.strip().splitlines()  # the plots' and pages' progress lines, then one line, as for Ctrl-C
    assert lines[-1].startswith("harness: interrupted") and all(
        line.startswith(("harness: plots", "harness: pages")) for line in lines[:-1]
    )
    assert _snapshot(board) == before
    # no temporary folder beside the board ("cache" is the test's own cache folder: the kept pages' keys)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board", "cache", "r", "r2"]


def test_a_new_board_replaces_the_old_whole_and_keeps_the_users_files(board, tmp_path, capsys):
    write_results(tmp_path / "r2", [record("corr", "xlmr", 0.3)])
    assert run_cli(capsys, "leaderboard", str(tmp_path / "r2"), "-o", str(board), "--no-plots")[0] == 0
    assert (board / "notes.txt").read_text() == "the user's own"
    assert not (board / "plots").exists()  # only generated plots were there: stale ones are gone
    assert "xlmr" in (board / "README.md").read_text() and "labse" not in (board / "README.md").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["board", "cache", "r", "r2"]  # cache: the test's own


@pytest.mark.parametrize("name", ["README.md", "leaderboard.csv", "plots"])
def test_a_symlink_among_the_generated_files_is_refused(board, tmp_path, capsys, name):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    assert any((board / "plots").iterdir())
    for png in (board / "plots").iterdir():
        (victim / png.name).write_bytes(b"not yours")
    target = board / name
    if target.is_dir():
        for child in target.iterdir():
            child.unlink()
        target.rmdir()
        target.symlink_to(victim, target_is_directory=True)
    else:
        target.unlink()
        target.symlink_to(victim / "keep.txt")
    before = _snapshot(victim)
    code, _, err = run_cli(capsys, "leaderboard", str(tmp_path / "r"), "-o", str(board))
    assert code == 2 and f"{board / name} is a symbolic link" in err, err
    assert _snapshot(victim) == before


def test_a_manifest_entry_through_a_symlinked_folder_deletes_nothing(board, tmp_path, capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.png").write_bytes(b"precious")
    (board / "elsewhere").symlink_to(outside, target_is_directory=True)
    manifest = board / ".leaderboard-manifest.json"
    manifest.write_text(manifest.read_text().replace('"README.md"', '"README.md", "elsewhere/precious.png"'))
    code, _, err = run_cli(capsys, "leaderboard", str(tmp_path / "r"), "-o", str(board), "--no-plots")
    assert code == 2 and f"{board / 'elsewhere'} is a symbolic link" in err, err
    assert (outside / "precious.png").read_bytes() == b"precious"


def test_an_output_folder_that_is_a_symlink_is_refused(tmp_path, capsys):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "board").symlink_to(real, target_is_directory=True)
    code, _, err = run_cli(capsys, "leaderboard", str(_results(tmp_path / "r")), "-o", str(tmp_path / "board"))
    assert code == 2 and f"{tmp_path / 'board'} is a symbolic link" in err, err
    assert list(real.iterdir()) == []
