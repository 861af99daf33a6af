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


def test_what_is_kept_goes_to_the_oldest_generation_unless_objects_are_held_frozen():
    with gc_paused(kept=True):
        built = [[index] for index in range(1000)]
    oldest = {id(item) for item in gc.get_objects(generation=2)}
    assert all(id(item) in oldest for item in built) and gc.get_count()[0] < 100 and gc.get_freeze_count() == 0
    with gc_paused():
        young = [[index] for index in range(1000)]
    oldest = {id(item) for item in gc.get_objects(generation=2)}
    assert not any(id(item) in oldest for item in young)
    held = [[index] for index in range(10)]  # tracked objects that will be frozen, and held
    gc.freeze()
    try:
        with gc_paused(kept=True):
            more = [[index] for index in range(1000)]
        # what someone froze stays frozen: in no generation the collector visits (an unfreeze would put it in the
        # oldest); the freeze count itself may fall meanwhile, whenever some other frozen object is freed
        visited = {id(item) for generation in range(3) for item in gc.get_objects(generation=generation)}
        assert not any(id(item) in visited for item in held) and gc.get_freeze_count() > 0 and len(more) == 1000
    finally:
        gc.unfreeze()
