"""Issue 14, point 1: a full disk or quota never leaves a torn results line, a temporary file, or exit 0."""

from __future__ import annotations

import errno
import os
import re
import subprocess
from pathlib import Path

import pytest
from faults.conftest import results_lines, run_cli
from fixtures.plugins.fake import CountingEncoder

import harness.results.jsonl
from harness.errors import HarnessError
from harness.results.jsonl import append_json_line, write_json_lines_atomic


def _args(data_dir: str, output: Path, seed: int, *extra: str) -> list[str]:
    return [
        "run",
        "--tasks",
        "mean_similarity",
        "--model",
        "counting-encoder",
        "--data-dir",
        data_dir,
        "--seed",
        str(seed),
        "--output",
        str(output),
        *extra,
    ]


def _disk_that_fills_after(monkeypatch, budget: int) -> None:
    """``os.write`` writes at most ``budget`` more bytes in all (a short write), then fails with ENOSPC."""
    real = os.write
    left = [budget]

    def write(fd: int, data) -> int:
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        written = real(fd, bytes(data[: left[0]]))
        left[0] -= written
        return written

    monkeypatch.setattr(harness.results.jsonl.os, "write", write)


def test_a_short_write_cuts_the_results_file_back_and_exits_2(data_dir, tmp_path, capsys, monkeypatch):
    output = tmp_path / "out"
    assert run_cli(capsys, *_args(data_dir, output, 0))[0] == 0
    before = (output / "results.jsonl").read_bytes()
    CountingEncoder.calls.clear()
    with monkeypatch.context() as patch:
        _disk_that_fills_after(patch, 100)  # the line is some kilobytes: it stops part way
        code, out, err = run_cli(capsys, *_args(data_dir, output, 1))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"harness: error: cannot write {output / 'results.jsonl'}: No space left on device; it is cut back to its last "
        "complete line, and earlier lines are intact (free space and run again)"
    ]
    assert (output / "results.jsonl").read_bytes() == before  # no torn line; the earlier line is whole
    assert sorted(p.name for p in output.iterdir()) == ["results.jsonl"]
    assert run_cli(capsys, *_args(data_dir, output, 1))[0] == 0  # with space again: nothing to recompute
    assert CountingEncoder.calls == [] and [r["seeds"] for r in results_lines(output)] == [[0], [1]]


def test_a_write_that_makes_no_progress_is_a_full_disk(tmp_path, monkeypatch):
    path = tmp_path / "r.jsonl"
    append_json_line(path, {"a": 1})
    monkeypatch.setattr(harness.results.jsonl.os, "write", lambda fd, data: 0)
    with pytest.raises(HarnessError, match=r"r\.jsonl: No space left on device; it is cut back"):
        append_json_line(path, {"b": 2})
    assert path.read_bytes() == b'{"a": 1}\n'


def test_a_failed_samples_file_leaves_no_temporary_and_no_results_line(data_dir, tmp_path, capsys, monkeypatch):
    output = tmp_path / "out"
    assert run_cli(capsys, *_args(data_dir, output, 0, "--log-samples"))[0] == 0
    kept = {p.name: p.read_bytes() for p in output.iterdir()}
    with monkeypatch.context() as patch:
        _disk_that_fills_after(patch, 50)
        code, _, err = run_cli(capsys, *_args(data_dir, output, 1, "--log-samples"))
    assert code == 2 and "cannot write" in err and "samples_mean_similarity_" in err and "nothing was written" in err
    assert {p.name: p.read_bytes() for p in output.iterdir()} == kept  # no .tmp file, no new line, old files intact


def test_an_earlier_version_survives_a_failed_atomic_rewrite(tmp_path, monkeypatch):
    path = tmp_path / "s.jsonl"
    write_json_lines_atomic(path, [{"x": 1}])
    monkeypatch.setattr(
        harness.results.jsonl.os,
        "write",
        lambda fd, data: (_ for _ in ()).throw(OSError(errno.EDQUOT, "Disk quota exceeded")),
    )
    with pytest.raises(HarnessError, match=re.escape("s.jsonl: Disk quota exceeded; nothing was written")):
        write_json_lines_atomic(path, [{"x": 2}])
    assert path.read_text() == '{"x": 1}\n' and [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (needs root and a kernel that lets this process mount; skipped otherwise)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mount = tmp_path / "disk"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def _fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as handle:
        try:
            while handle.write(b"\0" * 1024):
                pass
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def test_a_real_full_disk(data_dir, tiny_disk, capsys):
    output = tiny_disk / "out"
    assert run_cli(capsys, *_args(data_dir, output, 0))[0] == 0
    filler = _fill(tiny_disk)
    for seed in range(1, 9):  # lines fill the last allocated page until one needs a page the disk has not got
        before = (output / "results.jsonl").read_bytes()
        code, _, err = run_cli(capsys, *_args(data_dir, output, seed))
        if code != 0:
            break
    else:
        pytest.fail("the full disk accepted every line")
    assert code == 2 and f"cannot write {output / 'results.jsonl'}: No space left on device" in err
    assert (output / "results.jsonl").read_bytes() == before and sorted(p.name for p in output.iterdir()) == [
        "results.jsonl"
    ]
    filler.unlink()
    assert run_cli(capsys, *_args(data_dir, output, seed))[0] == 0
    assert [r["seeds"] for r in results_lines(output)] == [[s] for s in range(seed + 1)]


def test_an_unwritable_results_file_is_named_without_a_disk_hint(tmp_path):
    path = tmp_path / "r.jsonl"
    path.mkdir()  # a folder where the file should be
    with pytest.raises(HarnessError, match=r"^cannot write .*r\.jsonl: Is a directory$"):
        append_json_line(path, {"a": 1})
