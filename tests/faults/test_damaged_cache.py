"""Issue 14, point 2: a damaged cache heals (moved aside, one warning, a fresh file), and --no-cache opens none."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from faults.conftest import results_lines, run_cli, run_counting
from fixtures.plugins.fake import CountingEncoder

from harness.adapters.cache import TABLE, checksum

PAGE = 4096


def _run(capsys, data_dir: str, output: Path, *extra: str) -> tuple[int, str, str]:
    return run_counting(capsys, data_dir, output, *extra)


def _settle(path: Path) -> None:
    """Move everything from the WAL into the main file, as a finished run leaves it."""
    with sqlite3.connect(path) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _garble(path: Path, start: int, end: int | None = None) -> None:
    size = path.stat().st_size
    end = size if end is None else end
    with open(path, "r+b") as handle:
        handle.seek(start)
        handle.write(b"\xde\xad\xbe\xef" * ((end - start) // 4))


def test_garbage_pages_found_mid_run_move_the_file_aside_and_the_run_completes(data_dir, tmp_path, capsys, fresh_cache):
    assert _run(capsys, data_dir, tmp_path / "out")[0] == 0
    cache_file = fresh_cache / "cache.sqlite3"
    _settle(cache_file)
    _garble(cache_file, PAGE)  # the header page is sound: the file opens, the first lookup meets garbage
    CountingEncoder.calls.clear()
    code, _, err = _run(capsys, data_dir, tmp_path / "again")
    assert code == 0, err
    assert (
        err.count("is damaged") == 1
        and "database disk image is malformed" in err
        and "continuing with an empty cache" in err
    )
    (aside,) = fresh_cache.glob("cache.sqlite3.corrupt-*")
    assert aside.stat().st_size > PAGE  # kept for inspection, not deleted
    assert sum(CountingEncoder.calls) == 8  # recomputed into the fresh cache
    (first,), (second,) = results_lines(tmp_path / "out"), results_lines(tmp_path / "again")
    assert first["metrics"] == second["metrics"]  # the earlier line is intact and the numbers agree
    CountingEncoder.calls.clear()
    assert _run(capsys, data_dir, tmp_path / "third")[0] == 0 and CountingEncoder.calls == []  # the fresh cache serves


def test_garbage_in_the_header_at_the_start_heals_before_any_work(data_dir, tmp_path, capsys, fresh_cache):
    fresh_cache.mkdir(parents=True, exist_ok=True)
    (fresh_cache / "cache.sqlite3").write_bytes(b"this is not SQLite" * 300)
    code, _, err = _run(capsys, data_dir, tmp_path / "out")
    assert code == 0, err
    assert "is damaged (file is not a database)" in err and len(list(fresh_cache.glob("cache.sqlite3.corrupt-*"))) == 1
    assert len(results_lines(tmp_path / "out")) == 1


def test_a_damaged_value_is_a_miss_and_is_computed_again(data_dir, tmp_path, capsys, fresh_cache):
    assert _run(capsys, data_dir, tmp_path / "out")[0] == 0
    with sqlite3.connect(fresh_cache / "cache.sqlite3") as connection:  # valid SQLite, wrong bytes in one value
        (key,) = connection.execute(f"SELECT key FROM {TABLE} LIMIT 1").fetchone()
        connection.execute(f"UPDATE {TABLE} SET value = ? WHERE key = ?", (b"\x93NUMPY garbage", key))
    CountingEncoder.calls.clear()
    code, _, err = _run(capsys, data_dir, tmp_path / "again")
    assert code == 0, err
    assert "1 damaged value(s) ignored" in err and sum(CountingEncoder.calls) == 1
    assert results_lines(tmp_path / "out")[0]["metrics"] == results_lines(tmp_path / "again")[0]["metrics"]


def test_an_intact_value_that_does_not_decode_is_a_miss_and_is_computed_again(data_dir, tmp_path, capsys, fresh_cache):
    assert _run(capsys, data_dir, tmp_path / "out")[0] == 0
    with sqlite3.connect(fresh_cache / "cache.sqlite3") as connection:  # checksum right, bytes no codec reads
        (key,) = connection.execute(f"SELECT key FROM {TABLE} LIMIT 1").fetchone()
        value = b"not an array"
        connection.execute(
            f"UPDATE {TABLE} SET value = ?, checksum = ? WHERE key = ?", (value, checksum(key, value), key)
        )
    CountingEncoder.calls.clear()
    code, _, err = _run(capsys, data_dir, tmp_path / "again")
    assert code == 0, err
    assert "1 cached text_encoder value(s) could not be decoded" in err and sum(CountingEncoder.calls) == 1
    assert results_lines(tmp_path / "out")[0]["metrics"] == results_lines(tmp_path / "again")[0]["metrics"]


def test_no_cache_opens_no_cache_file_not_even_for_the_weight_hash_memo(data_dir, tmp_path, capsys, monkeypatch):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(blocked))
    weights = tmp_path / "weights.bin"
    weights.write_bytes(b"w" * 16)
    args = [
        "run",
        "--tasks",
        "mean_similarity",
        "--model",
        "weights-file-encoder",
        "--model-args",
        f"weights={weights}",
        "--data-dir",
        data_dir,
        "--seed",
        "0",
        "--output",
        str(tmp_path / "out"),
    ]
    code, _, err = run_cli(capsys, *args)  # the cache is never a reason for a run to fail (issue 23.13)
    assert code == 0 and err.count("harness: warning: cache folder") == 1 and "running without a cache" in err
    code, _, err = run_cli(capsys, *args, "--no-cache")
    assert code == 0, err
    assert blocked.read_text() == "a file where the cache folder would be" and len(results_lines(tmp_path / "out")) == 2
