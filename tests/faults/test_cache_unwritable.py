"""Issue 23, point 13: a cache folder that cannot be written never fails a run.

A read-only cache folder is read (a warm cache still saves the inference) and never written; a
folder that cannot be created, or a full disk, runs without a cache. Each costs one warning.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from faults.conftest import results_lines, run_counting
from faults.test_full_disk import _fill, tiny_disk  # noqa: F401  (the fixture)
from fixtures.plugins.fake import CountingEncoder

import harness.adapters.cache


def _run(capsys, data_dir: str, output: Path, *extra: str) -> tuple[int, str, str]:
    return run_counting(capsys, data_dir, output, *extra)


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("harness: warning:")]


def test_a_cache_folder_that_cannot_be_created_runs_without_a_cache(data_dir, tmp_path, capsys, monkeypatch):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "file" / "cache"))
    code, _, err = _run(capsys, data_dir, tmp_path / "out")
    assert code == 0, err
    assert len(_warnings(err)) == 1 and "running without a cache" in err, err
    assert len(results_lines(tmp_path / "out")) == 1


@pytest.fixture
def disk(tmp_path):
    """A 16 MiB tmpfs, to be remounted read-only (needs root and a kernel that lets this process mount)."""
    mount = tmp_path / "disk16"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount
    finally:
        _close_caches()
        subprocess.run(["umount", str(mount)], check=False)


def _close_caches() -> None:
    """Close this process's cache connections (an open file keeps a mount busy)."""
    for cache in harness.adapters.cache._DEFAULT.values():
        cache._drop_connection()
    harness.adapters.cache._DEFAULT.clear()


def _remount(mount: Path, mode: str) -> None:
    done = subprocess.run(["mount", "-o", f"remount,{mode}", str(mount)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot remount {mode}: {done.stderr.strip()}")


def test_a_read_only_warm_cache_is_read_and_never_written(data_dir, tmp_path, capsys, monkeypatch, disk):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(disk / "cache"))
    code, _, err = _run(capsys, data_dir, tmp_path / "first")
    assert code == 0 and _warnings(err) == [], err
    _close_caches()
    files = {p.name: p.read_bytes() for p in (disk / "cache").iterdir()}
    _remount(disk, "ro")
    try:
        CountingEncoder.calls.clear()
        code, _, err = _run(capsys, data_dir, tmp_path / "again")
        assert code == 0, err
        assert CountingEncoder.calls == []  # every vector came from the read-only cache
        assert len(_warnings(err)) == 1 and "read-only" in err, err
        assert {p.name: p.read_bytes() for p in (disk / "cache").iterdir()} == files
        assert results_lines(tmp_path / "again")[0]["metrics"] == results_lines(tmp_path / "first")[0]["metrics"]
    finally:
        _remount(disk, "rw")


def test_a_read_only_empty_cache_folder_runs_without_writing(data_dir, tmp_path, capsys, monkeypatch, disk):
    (disk / "cache").mkdir()
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(disk / "cache"))
    _remount(disk, "ro")
    try:
        code, _, err = _run(capsys, data_dir, tmp_path / "out")
        assert code == 0, err
        assert len(_warnings(err)) == 1, err
        assert list((disk / "cache").iterdir()) == []
    finally:
        _remount(disk, "rw")


def test_a_full_cache_disk_runs_with_one_warning(data_dir, tmp_path, capsys, monkeypatch, tiny_disk):  # noqa: F811
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tiny_disk / "cache"))
    _fill(tiny_disk)
    code, _, err = _run(capsys, data_dir, tmp_path / "out")
    assert code == 0, err
    assert len(_warnings(err)) == 1, err
    assert len(results_lines(tmp_path / "out")) == 1
