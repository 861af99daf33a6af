"""While a converted folder is built, glibc's malloc serves large buffers from its heap (reused, not mapped anew each
time); after the build it maps them again."""

from __future__ import annotations

import ctypes
import platform
import sys

import pytest

from harness_models.packaged.converted import ensure_converted, reused_memory

pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc on Linux only"
)
LARGE = 48 << 20  # above the 32 MiB from which glibc always maps a buffer of its own


def in_heap(buffer: bytearray) -> bool:
    """Whether ``buffer``'s memory lies in the process's ``[heap]`` (glibc's main arena), per /proc/self/maps."""
    address = ctypes.addressof((ctypes.c_char * len(buffer)).from_buffer(buffer))
    with open("/proc/self/maps") as maps:
        for line in maps:
            if line.rstrip().endswith("[heap]"):
                start, end = (int(bound, 16) for bound in line.split()[0].split("-"))
                return start <= address < end
    return False


def test_a_large_buffer_comes_from_the_heap_only_inside_the_block():
    assert not in_heap(bytearray(LARGE))
    with reused_memory():
        assert in_heap(bytearray(LARGE))
    assert not in_heap(bytearray(LARGE))


def test_a_build_runs_inside_the_block(tmp_path):
    placed = []

    def build(folder):
        placed.append(in_heap(bytearray(LARGE)))
        (folder / "weights").write_bytes(b"1")

    folder = ensure_converted(tmp_path / "model", build)
    assert placed == [True] and (folder / "weights").read_bytes() == b"1"
    assert not in_heap(bytearray(LARGE))
