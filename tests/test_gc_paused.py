"""Reading results pauses the cyclic garbage collector (issue 24.7: half the time of reading 100,000 lines) and
gives it back as it was, also when reading fails."""

from __future__ import annotations

import gc

import pytest

from harness.errors import HarnessError
from harness.results.load import gc_paused, load_entries


def test_the_collector_is_off_inside_and_as_before_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()


def test_a_failed_read_gives_the_collector_back(tmp_path):
    (tmp_path / "results.jsonl").write_text('{"task": "xlr"}\n{not json\n', encoding="utf-8")
    entries, problems = load_entries([str(tmp_path)])
    assert entries == [] and [p.line for p in problems] == [1, 2] and gc.isenabled()
    with pytest.raises(HarnessError, match="not found"):
        load_entries([str(tmp_path / "missing")])
    assert gc.isenabled()
