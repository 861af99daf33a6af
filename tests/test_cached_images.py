"""Images with known content keys are read only where the cache lacks their vectors
(``CachedModel.encode_images(images, keys=...)``), and give the vectors of a call without keys."""

from __future__ import annotations

import numpy as np
from PIL import Image

from harness.adapters.cache import Cache
from harness.adapters.cached_model import CachedModel, image_content_key
from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity


class MeanColour(ModelAdapter):
    """The mean colour of each image; counts the images it was given."""

    capabilities = frozenset({Capability.IMAGE_ENCODER})

    def __init__(self, name):
        super().__init__(name)
        self.seen = 0

    def identity(self):
        return ModelIdentity("mean-colour", "tests:MeanColour", "src", "rev1", {}, "float32", "pkg", "1.0", "abc")

    def encode_images(self, images):
        self.seen += len(images)
        return np.stack([np.asarray(image, dtype=np.float32).mean(axis=(0, 1)) for image in images])


class Recorded:
    """A sequence of images that records which were read."""

    def __init__(self, images):
        self.images, self.read = images, []

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        self.read.append(index)
        return self.images[index]


IMAGES = [Image.new("RGB", (3, 2), (10 * i, 20, 255 - i)) for i in range(5)]
KEYS = [image_content_key(image) for image in IMAGES]


def test_only_the_uncached_images_are_read_and_encoded(tmp_path):
    cache = Cache(tmp_path)
    expected = CachedModel(MeanColour("m"), None).encode_images(IMAGES)
    assert expected[2].tolist() == [20.0, 20.0, 253.0]
    first = MeanColour("m")
    CachedModel(first, cache).encode_images(Recorded(IMAGES[1:3]), keys=KEYS[1:3])
    assert first.seen == 2
    images, later = Recorded(IMAGES), MeanColour("m")
    vectors = CachedModel(later, cache).encode_images(images, keys=KEYS)
    assert sorted(images.read) == [0, 3, 4] and later.seen == 3  # items 1 and 2 came from the cache
    assert np.array_equal(vectors, expected)
    again, model = Recorded(IMAGES), MeanColour("m")
    assert np.array_equal(CachedModel(model, cache).encode_images(again, keys=KEYS), expected)
    assert again.read == [] and model.seen == 0


def test_keys_given_or_computed_address_the_same_entries(tmp_path):
    cache = Cache(tmp_path)
    CachedModel(MeanColour("m"), cache).encode_images(IMAGES)  # keys computed from the pixels
    images, model = Recorded(IMAGES), MeanColour("m")
    CachedModel(model, cache).encode_images(images, keys=KEYS)
    assert images.read == [] and model.seen == 0


def test_a_repeated_key_is_encoded_once(tmp_path):
    images, model = Recorded([IMAGES[0], IMAGES[0], IMAGES[1]]), MeanColour("m")
    vectors = CachedModel(model, Cache(tmp_path)).encode_images(images, keys=[KEYS[0], KEYS[0], KEYS[1]])
    assert model.seen == 2 and len(images.read) == 2
    assert np.array_equal(vectors[0], vectors[1]) and not np.array_equal(vectors[0], vectors[2])


def test_calls_inside_a_progress_run_show_one_run(tmp_path, monkeypatch):
    """Images encoded a chunk at a time inside ``progress_run`` report as one run of all of them, cached ones counted
    as done."""
    import io

    from harness.progress import Progress

    ticks = iter(range(0, 1000, 2))  # every clock read is 2 s later: each advance is due for a line
    monkeypatch.setattr("harness.progress.time.perf_counter", lambda: float(next(ticks)))
    stream = io.StringIO()
    cache = Cache(tmp_path)
    CachedModel(MeanColour("m"), cache).encode_images(IMAGES[:2])  # cached before: images 0 and 1
    model = CachedModel(MeanColour("m"), cache, Progress(stream=stream))
    with model.progress_run("encoding images", total=len(IMAGES)):
        for start in (0, 3):  # chunks of three and two: 0-2 (two cached), 3-4
            model.encode_images(IMAGES[start : start + 3])
    counts = [line.split(" (")[0] for line in stream.getvalue().splitlines()]
    assert counts[0] == "m: encoding images: 2/5" and counts[-1] == "m: encoding images: 5/5"
    assert {line.split(": ")[1] for line in counts} == {"encoding images"}  # one run, no run of its own per call
