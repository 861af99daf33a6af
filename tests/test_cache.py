"""The content-addressed cache: round trips, keys, and crash safety under kill -9."""

from __future__ import annotations

import multiprocessing
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from harness.adapters.cache import (
    TABLE,
    Cache,
    array_to_bytes,
    bytes_to_array,
    bytes_to_arrays,
    make_key,
    make_keys,
)
from harness.adapters.cached_model import _decode_tokens, _encode_tokens, image_content_key
from harness.adapters.capabilities import TokenEmbeddings


def test_put_get_and_missing(tmp_path):
    cache = Cache(tmp_path)
    cache.put_many({"a": b"1", "b": b"2"})
    assert cache.get_many(["a", "b", "c"]) == {"a": b"1", "b": b"2"}
    assert len(cache) == 2 and Cache(tmp_path).get_many(["a"]) == {"a": b"1"}  # persisted


def test_many_keys_beyond_sqlite_parameter_limit(tmp_path):
    cache = Cache(tmp_path)
    items = {str(i): str(i).encode() for i in range(2500)}
    cache.put_many(items)
    assert cache.get_many(list(items)) == items


@given(arrays(np.float32, st.tuples(st.integers(0, 5), st.integers(1, 4))))
def test_array_round_trip(array):
    assert np.array_equal(bytes_to_array(array_to_bytes(array)), array, equal_nan=True)


def test_token_embeddings_round_trip():
    value = TokenEmbeddings(["Ein", "##e", "ü"], np.arange(6, dtype=np.float32).reshape(3, 2))
    back = _decode_tokens(_encode_tokens(value))
    assert back.tokens == value.tokens and np.array_equal(back.vectors, value.vectors)


def test_keys_separate_parts():
    assert make_key("ab", "c") != make_key("a", "bc")
    assert make_key(b"x", {"lang": "en"}) != make_key(b"x", {"lang": "de"})
    assert make_key({"a": 1, "b": 2}) == make_key({"b": 2, "a": 1})


def test_keys_with_a_common_prefix_are_make_keys():
    prefix = ("digest", "text_encoder", {"lang": "en"})
    contents = [b"a", b"", "b", b"a"]
    assert make_keys(prefix, contents) == [make_key(*prefix, content) for content in contents]
    assert make_keys(prefix, []) == []


@given(st.lists(arrays(np.float32, st.tuples(st.integers(0, 3), st.integers(1, 3))), max_size=6))
def test_arrays_decoded_together_equal_each_decoded_alone(values):
    stored = {f"k{i}": array_to_bytes(value) for i, value in enumerate(values)}
    decoded = bytes_to_arrays(stored)
    assert set(decoded) == set(stored)
    for key, data in stored.items():
        alone = bytes_to_array(data)
        assert decoded[key].dtype == alone.dtype and decoded[key].shape == alone.shape
        assert np.array_equal(decoded[key], alone, equal_nan=True)


def test_arrays_of_mixed_shapes_dtypes_and_damage_decode_as_alone():
    vectors = [np.arange(3, dtype=np.float32) + i for i in range(4)]
    stored = {f"v{i}": array_to_bytes(v) for i, v in enumerate(vectors)}
    stored["f64"] = array_to_bytes(np.ones(3))
    stored["matrix"] = array_to_bytes(np.eye(2, dtype=np.float32))
    stored["scalar"] = array_to_bytes(np.float32(7.5))  # stored as shape (1,) (ascontiguousarray)
    stored["empty"] = array_to_bytes(np.zeros(0, np.float32))
    stored["truncated"] = array_to_bytes(np.ones(3, np.float32))[:-4]  # the vectors' header, too short
    stored["garbage"] = b"not an array"
    decoded = bytes_to_arrays(stored)
    assert set(decoded) == set(stored) - {"truncated", "garbage"}  # what np.load refuses is left out
    for i, vector in enumerate(vectors):
        assert np.array_equal(decoded[f"v{i}"], vector) and decoded[f"v{i}"].dtype == np.float32
    decoded["v0"][0] = 42.0  # writable, and its own row: the others are unchanged
    assert decoded["v1"][0] == 1.0
    assert decoded["f64"].dtype == np.float64 and decoded["matrix"].shape == (2, 2)
    assert decoded["scalar"].shape == (1,) and decoded["scalar"][0] == np.float32(7.5)
    assert decoded["empty"].shape == (0,)


def test_image_keys_depend_on_pixels_mode_and_size():
    from PIL import Image

    red = Image.new("RGB", (2, 2), (255, 0, 0))
    assert image_content_key(red) == image_content_key(Image.new("RGB", (2, 2), (255, 0, 0)))
    assert image_content_key(red) != image_content_key(Image.new("RGB", (2, 2), (255, 0, 1)))
    assert image_content_key(red) != image_content_key(Image.new("RGB", (4, 1), (255, 0, 0)))
    assert image_content_key(np.zeros(3, np.float32)) != image_content_key(np.zeros(3, np.float64))


def test_kill_minus_nine_leaves_no_corrupt_entry(tmp_path):
    code = (
        "import sys, numpy as np; from harness.adapters.cache import Cache, array_to_bytes\n"
        f"cache = Cache({str(tmp_path)!r}); i = 0\n"
        "def put(i): cache.put_many({f'k{i}-{j}': array_to_bytes(np.full(5000, i, np.float32)) for j in range(20)})\n"
        "put(i); i += 1\n"
        "print('ready', flush=True)\n"  # one transaction is committed, however slow the machine
        "while True:\n"
        "    put(i); i += 1\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert process.stdout.readline().strip() == b"ready"
    time.sleep(0.5)  # the kill lands in a later transaction
    process.send_signal(signal.SIGKILL)
    process.wait()
    cache = Cache(tmp_path)
    keys = [row[0] for row in cache._connection().execute(f"SELECT key FROM {TABLE}")]
    assert keys and len(keys) % 20 == 0  # whole transactions only
    for key, value in cache.get_many(keys).items():
        batch = int(key[1:].split("-")[0])
        assert np.array_equal(bytes_to_array(value), np.full(5000, batch, np.float32))


def _open_and_put(folder: str, index: int, barrier) -> None:
    barrier.wait()  # every process opens the fresh cache at the same moment, as torchrun's ranks do
    Cache(folder).put_many({f"key{index}": b"v"})


@pytest.mark.slow  # 5 rounds of 4 spawned interpreters
def test_processes_opening_a_fresh_cache_at_once_all_succeed(tmp_path):
    context = multiprocessing.get_context("spawn")
    for attempt in range(5):
        folder = tmp_path / f"cache{attempt}"
        barrier = context.Barrier(4)
        processes = [context.Process(target=_open_and_put, args=(str(folder), i, barrier)) for i in range(4)]
        for process in processes:
            process.start()
        for process in processes:
            process.join(60)
        assert [p.exitcode for p in processes] == [0, 0, 0, 0]
        assert Cache(folder).get_many([f"key{i}" for i in range(4)]).keys() == {f"key{i}" for i in range(4)}


def test_a_value_under_another_key_or_altered_is_a_miss(tmp_path, capsys):
    cache = Cache(tmp_path)
    cache.put_many({"a": b"alpha", "b": b"beta", "c": b"gamma"})
    connection = cache._connection()
    connection.execute(f"UPDATE {TABLE} SET value = (SELECT value FROM {TABLE} WHERE key = 'a') WHERE key = 'b'")
    connection.execute(f"UPDATE {TABLE} SET value = X'00' WHERE key = 'c'")
    assert cache.get_many(["a", "b", "c"]) == {"a": b"alpha"}
    assert "2 damaged value(s) ignored" in capsys.readouterr().err
    cache.put_many({"b": b"beta"})  # computed again, stored again
    assert cache.get_many(["b"]) == {"b": b"beta"}


def test_a_text_value_that_is_not_utf8_is_a_miss(tmp_path):
    cache = Cache(tmp_path)
    cache.put_many({"t": b"\xff\xfe"})
    assert cache.get_text("t") is None


def test_one_process_heals_and_another_follows_to_the_fresh_file(tmp_path, capsys):
    first, second = Cache(tmp_path), Cache(tmp_path)
    first.put_many({f"k{i}": bytes(300) for i in range(200)})
    assert len(second) == 200  # both connected to the same file
    first._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    first._drop_connection()
    second._drop_connection()
    with open(first.path, "r+b") as handle:
        handle.seek(4096)
        handle.write(b"\x00\xff" * 20000)
    assert first.get_many(["k1"]) == {}  # heals: moved aside, fresh file
    first.put_many({"new": b"1"})
    assert second.get_many(["new", "k1"]) == {"new": b"1"}  # follows to the fresh file, does not move it aside again
    assert len(list(tmp_path.glob("cache.sqlite3.corrupt-*"))) == 1
    assert capsys.readouterr().err.count("is damaged") == 1


def test_a_failed_write_is_one_warning_and_the_run_goes_on(tmp_path, capsys):
    cache = Cache(tmp_path)
    cache.put_many({"small": b"1"})
    connection = cache._connection()
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")  # as good as a full disk for SQLite
    cache.put_many({"big": bytes(100_000)})
    cache.put_many({"big2": bytes(100_000)})
    err = capsys.readouterr().err
    assert err.count("could not be written") == 1 and "database or disk is full" in err
    assert cache.get_many(["small", "big"]) == {"small": b"1"}


def test_no_cache_means_no_default_cache(tmp_path, monkeypatch):
    from harness.adapters.cache import caching, default_cache

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "c"))
    with caching(False):
        assert default_cache() is None
    assert not (tmp_path / "c").exists()
    assert default_cache() is not None and (tmp_path / "c" / "cache.sqlite3").exists()


def test_a_damaged_file_that_cannot_be_moved_aside_is_a_warning(tmp_path, capsys, monkeypatch):
    import harness.adapters.cache

    cache = Cache(tmp_path)
    cache.put_many({f"k{i}": bytes(300) for i in range(200)})
    cache._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cache._drop_connection()
    with open(cache.path, "r+b") as handle:
        handle.seek(4096)
        handle.write(b"\x00\xff" * 20000)

    def refuse(*args):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(harness.adapters.cache.os, "replace", refuse)
    assert cache.get_many(["k1"]) == {}  # a miss: the run computes the value
    cache.put_many({"k1": b"v"})  # not kept, and no failure
    err = capsys.readouterr().err
    assert (
        "could not be read ([Errno 13] Permission denied)" in err
        and "could not be written ([Errno 13] Permission denied)" in err
    )
