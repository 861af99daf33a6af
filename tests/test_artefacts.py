"""Issue 38, items 1 and 8: a derived folder is sealed by a manifest written last, verified on every open and built
again when it fails; one process builds it while a second waits; the scratch of a killed build is removed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import harness.adapters.model
from harness.artefacts import MANIFEST, ensure_built, scratch_folders, sealed_digest, verify, write_manifest


def toy_build(built: list[Path]):
    """A build writing two files (one in a subfolder), counting its calls."""

    def build(folder: Path) -> None:
        built.append(folder)
        (folder / "weights.bin").write_bytes(bytes(range(256)) * 64)
        (folder / "sub").mkdir()
        (folder / "sub" / "config.json").write_text('{"layers": 2}')

    return build


def test_a_build_is_sealed_last_and_kept(tmp_path, capsys):
    built: list[Path] = []
    target = tmp_path / "models" / "toy-1"
    assert ensure_built(target, toy_build(built), "building toy") == target
    assert capsys.readouterr().err == f"harness: building toy, once; kept in {target}\n"
    record = json.loads((target / MANIFEST).read_text())
    assert sorted(record["files"]) == ["sub/config.json", "weights.bin"]
    assert record["files"]["weights.bin"]["size"] == 256 * 64
    assert sealed_digest(target) == record["digest"] and verify(target) == (record["digest"], "")
    assert ensure_built(target, toy_build(built), "building toy") == target and len(built) == 1
    assert capsys.readouterr().err == ""  # verified, nothing done, nothing said
    assert sorted(p.name for p in target.parent.iterdir()) == [".lock-toy-1", "toy-1"]  # no scratch left


def _zero_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    quarter = len(data) // 4
    data[quarter : 3 * quarter] = bytes(2 * quarter)
    path.write_bytes(bytes(data))


def _random_same_size(path: Path) -> None:
    path.write_bytes(os.urandom(path.stat().st_size))


DAMAGES = {
    "zeroed in place": (lambda f: _zero_middle(f / "weights.bin"), "weights.bin with other contents than sealed"),
    "truncated": (lambda f: os.truncate(f / "weights.bin", 100), "weights.bin of another size than sealed"),
    "emptied": (lambda f: (f / "weights.bin").write_bytes(b""), "weights.bin of another size than sealed"),
    "random bytes": (lambda f: _random_same_size(f / "weights.bin"), "weights.bin with other contents than sealed"),
    "file removed": (lambda f: (f / "sub" / "config.json").unlink(), "lost ['sub/config.json']"),
    "file added": (lambda f: (f / "extra.txt").write_text("x"), "files it did not seal: ['extra.txt']"),
    "no manifest": (lambda f: (f / MANIFEST).unlink(), f"has no {MANIFEST}"),
    "manifest garbage": (lambda f: (f / MANIFEST).write_text("{not json"), f"an unreadable {MANIFEST}"),
    "manifest edited": (
        lambda f: (f / MANIFEST).write_text((f / MANIFEST).read_text().replace('"size": 16384', '"size": 100')),
        f"a damaged {MANIFEST}",
    ),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_folder_is_built_again_with_one_line_saying_why(tmp_path, capsys, monkeypatch, damage):
    monkeypatch.setattr(harness.adapters.model, "RACY_SECONDS", 0.0)  # the memo is trusted as soon as it can be
    built: list[Path] = []
    target = tmp_path / "toy-1"
    ensure_built(target, toy_build(built))
    assert sealed_digest(target) is not None  # hashed and memoised: the damage must be seen through the memo
    good = (target / "weights.bin").read_bytes()
    capsys.readouterr()
    change, reason = DAMAGES[damage]
    change(target)
    assert sealed_digest(target) is None and reason in verify(target)[1]
    ensure_built(target, toy_build(built))
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"harness: {target} ") and reason in err[0] and err[0].endswith("; building it again")
    assert err[1] == f"harness: converting toy-1, once; kept in {target}" and len(err) == 2
    assert len(built) == 2 and (target / "weights.bin").read_bytes() == good and sealed_digest(target) is not None
    assert not (target / "extra.txt").exists() and scratch_folders(target) == []


def test_a_failing_build_leaves_nothing(tmp_path):
    def broken(folder: Path) -> None:
        (folder / "half").write_text("x")
        raise RuntimeError("boom")

    target = tmp_path / "toy-1"
    with pytest.raises(RuntimeError, match="boom"):
        ensure_built(target, broken)
    assert not target.exists() and scratch_folders(target) == []


def test_the_manifest_digest_names_the_contents(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    for folder in (one, two):
        folder.mkdir()
        (folder / "w").write_bytes(b"abc")
    assert write_manifest(one) == write_manifest(two)  # the same files: the same digest, wherever they are
    (two / "w").write_bytes(b"abd")
    assert write_manifest(two) != sealed_digest(one)


CHILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from harness.artefacts import ensure_built

    target, log, started, go = map(Path, sys.argv[1:5])

    def build(folder):
        with open(log, "a") as handle:
            handle.write("built\\n")
        (folder / "weights").write_text("w")
        started.write_text(str(folder))
        while not go.exists():
            time.sleep(0.01)

    ensure_built(target, build, "building toy")
    print("done", flush=True)
    """
)


def _child(tmp_path: Path, target: Path) -> subprocess.Popen[str]:
    files = [str(tmp_path / name) for name in ("log", "started", "go")]
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(target), *files], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _wait_for(path: Path) -> None:
    while not path.exists():
        time.sleep(0.01)


def test_two_processes_build_once_and_a_live_build_keeps_its_scratch(tmp_path):
    target = tmp_path / "models" / "toy-1"
    first = _child(tmp_path, target)
    _wait_for(tmp_path / "started")
    scratch = Path((tmp_path / "started").read_text())
    second = _child(tmp_path, target)
    assert second.stderr is not None
    assert second.stderr.readline() == f"harness: waiting for another process building {target}\n"
    assert scratch.is_dir() and scratch_folders(target) == [scratch]  # the live build's scratch is left alone
    (tmp_path / "go").write_text("")
    out_first, err_first = first.communicate(timeout=60)
    out_second, err_second = second.communicate(timeout=60)
    assert first.returncode == second.returncode == 0 and out_first == out_second == "done\n"
    assert (tmp_path / "log").read_text() == "built\n"  # one build; the second process reused it
    assert "once; kept in" in err_first and err_second == ""  # the rest of the second's stderr: nothing
    assert sealed_digest(target) is not None and not scratch.exists()


def test_the_scratch_of_a_killed_build_is_removed_by_the_next_build(tmp_path, capsys):
    target = tmp_path / "models" / "toy-1"
    child = _child(tmp_path, target)
    _wait_for(tmp_path / "started")
    scratch = Path((tmp_path / "started").read_text())
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    assert scratch.is_dir() and not target.exists()  # kill -9: the scratch is left behind
    other = tmp_path / "models" / ".toy-10.abcdefgh"  # another folder's scratch (toy-10) is not this one's
    other.mkdir()
    built: list[Path] = []
    ensure_built(target, toy_build(built))
    assert not scratch.exists() and len(built) == 1 and sealed_digest(target) is not None
    assert other.is_dir() and scratch_folders(target) == []


def test_a_models_folder_that_cannot_be_written_is_one_line(tmp_path):
    from harness.errors import HarnessError

    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(HarnessError, match=r"cannot write converted models to .*file.* \(set HARNESS_MODELS_DIR\)"):
        ensure_built(blocker / "toy-1", toy_build([]))
