"""The content-addressed cache: round trips, keys, and crash safety under kill -9."""

from __future__ import annotations

import multiprocessing
import signal
import subprocess
import sys
import time

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from harness.cache import Cache, array_to_bytes, bytes_to_array, make_key
from harness.cached_model import _decode_tokens, _encode_tokens, image_content_key
from harness.capabilities import TokenEmbeddings


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


def test_image_keys_depend_on_pixels_mode_and_size():
    from PIL import Image

    red = Image.new("RGB", (2, 2), (255, 0, 0))
    assert image_content_key(red) == image_content_key(Image.new("RGB", (2, 2), (255, 0, 0)))
    assert image_content_key(red) != image_content_key(Image.new("RGB", (2, 2), (255, 0, 1)))
    assert image_content_key(red) != image_content_key(Image.new("RGB", (4, 1), (255, 0, 0)))
    assert image_content_key(np.zeros(3, np.float32)) != image_content_key(np.zeros(3, np.float64))


def test_kill_minus_nine_leaves_no_corrupt_entry(tmp_path):
    code = (
        "import sys, numpy as np; from harness.cache import Cache, array_to_bytes\n"
        f"cache = Cache({str(tmp_path)!r}); i = 0\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        "    cache.put_many({f'k{i}-{j}': array_to_bytes(np.full(5000, i, np.float32)) for j in range(20)}); i += 1\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert process.stdout.readline().strip() == b"ready"
    time.sleep(1.0)
    process.send_signal(signal.SIGKILL)
    process.wait()
    cache = Cache(tmp_path)
    keys = [row[0] for row in cache._connection().execute("SELECT key FROM entries")]
    assert keys and len(keys) % 20 == 0  # whole transactions only
    for key, value in cache.get_many(keys).items():
        batch = int(key[1:].split("-")[0])
        assert np.array_equal(bytes_to_array(value), np.full(5000, batch, np.float32))


def _open_and_put(folder: str, index: int, barrier) -> None:
    barrier.wait()  # every process opens the fresh cache at the same moment, as torchrun's ranks do
    Cache(folder).put_many({f"key{index}": b"v"})


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
