"""``xling-shapes`` kept across runs: the captions, image keys and features are stored in the harness
cache once; a later load reads them and draws no image until one is read; a damaged or missing part is
made again; under --no-cache nothing is stored."""

from __future__ import annotations

import numpy as np
import pytest

from harness.adapters.cache import Cache, caching
from harness_tasks.default_benchmark import drawn as drawn_module
from harness_tasks.default_benchmark.benchmark import generate
from harness_tasks.default_benchmark.drawn import PARTS, Drawn


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def no_drawing(monkeypatch):
    """Any image drawn from here on fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("an image was drawn")

    monkeypatch.setattr(drawn_module, "render", refuse)


def stored(drawn: Drawn) -> dict[str, bytes]:
    keys = {drawn._key(part): part for part in PARTS}
    return {keys[key]: value for key, value in Cache().get_many(keys).items()}


def test_the_second_load_reads_every_part_and_draws_no_image(cache_dir, monkeypatch):
    first = Drawn(12, 1)
    captions, keys, features = first.captions(), first.image_keys(), first.features()
    assert set(stored(first)) == set(PARTS)
    no_drawing(monkeypatch)
    second = Drawn(12, 1)
    assert second.captions() == captions == generate(12, 1).captions
    assert second.image_keys() == keys and len(set(keys)) == 12
    assert np.array_equal(second.features(), features) and second.features().dtype == np.float32
    with pytest.raises(AssertionError, match="an image was drawn"):
        second.image(0)  # images are drawn when read, never stored


def test_images_drawn_for_the_keys_are_served_without_drawing_again(cache_dir, monkeypatch):
    drawn = Drawn(5, 0)
    drawn.image_keys()
    no_drawing(monkeypatch)
    assert np.array_equal(np.asarray(drawn.image(4)), generate(5, 0).images[4])


def test_a_part_is_made_only_when_asked_for(cache_dir):
    drawn = Drawn(6, 0)
    drawn.captions()
    assert set(stored(drawn)) == {"captions"}
    assert drawn._pixels is None  # no image drawn for the captions


@pytest.mark.parametrize(
    ("part", "bad"),
    [
        ("captions", b"not json"),
        ("captions", b'{"en": ["too few"]}'),
        ("image_keys", b'["a", "b"]'),
        ("features", b"\x93NUMPY garbage"),
    ],
)
def test_a_damaged_or_misshapen_part_is_made_again_and_replaced(cache_dir, part, bad):
    good = Drawn(4, 3)
    expected = getattr(good, part)()
    Cache().put_many({good._key(part): bad})
    again = getattr(Drawn(4, 3), part)()
    if part == "features":
        assert np.array_equal(again, expected)
    else:
        assert again == expected
    assert stored(good)[part] != bad


def test_another_size_seed_or_generator_version_is_another_entry(cache_dir, monkeypatch):
    keys = {Drawn(4, 3)._key("captions"), Drawn(5, 3)._key("captions"), Drawn(4, 4)._key("captions")}
    monkeypatch.setattr(drawn_module, "GENERATOR_VERSION", drawn_module.GENERATOR_VERSION + 1)
    keys.add(Drawn(4, 3)._key("captions"))
    assert len(keys) == 4


def test_without_a_cache_nothing_is_stored(cache_dir):
    with caching(False):
        drawn = Drawn(3, 0)
        assert drawn.captions() == generate(3, 0).captions
    assert stored(drawn) == {}
