"""Generation: byte-identical output for (size, seed), distinct items, and images that carry the
caption's information (colours, shapes, places) in their pixels."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from harness.errors import HarnessError
from harness_tasks.default_benchmark.benchmark import generate, revision
from harness_tasks.default_benchmark.features import FEATURE_SIZE, orientation_histogram, pixel_features
from harness_tasks.default_benchmark.render import IMAGE_SIDE, RGB, render
from harness_tasks.default_benchmark.scenes import GENERATOR_VERSION, Placed

# The digest of generate(40, 3): change it only together with scenes.GENERATOR_VERSION.
DIGEST_40_3 = (2, "118c72cd70205665549ea4156d7011677a6ffa656e3737077f0e7527cd4918cf")


def digest(size: int, seed: int) -> str:
    """sha256 over every caption (language, text) and every image's raw RGB pixels."""
    bench = generate(size, seed)
    h = hashlib.sha256()
    for lang, texts in sorted(bench.captions.items()):
        for text in texts:
            h.update(f"{lang}\t{text}\n".encode())
    for pixels in bench.images:
        h.update(pixels.tobytes())
    return h.hexdigest()


def test_same_size_and_seed_give_the_pinned_bytes():
    assert (GENERATOR_VERSION, digest(40, 3)) == DIGEST_40_3


def test_a_smaller_size_is_a_prefix_and_another_seed_differs():
    small, large, other = generate(20, 3), generate(40, 3), generate(20, 4)
    assert small.captions["cs"] == large.captions["cs"][:20]
    assert all(np.array_equal(a, b) for a, b in zip(small.images, large.images))
    assert small.captions["en"] != other.captions["en"]
    assert revision(20, 3) != revision(40, 3) != revision(40, 4) and revision(20, 3) == revision(20, 3)


def test_items_and_captions_are_distinct():
    bench = generate(3000, 5)
    assert len({item.scene for item in bench.items}) == 3000
    for lang, texts in bench.captions.items():
        assert len(set(texts)) == 3000, lang


@pytest.mark.parametrize(("size", "seed"), [(0, 0), (100_001, 0), (10, -1)])
def test_bad_parameters_are_refused(size, seed):
    with pytest.raises(HarnessError, match=r"size must be|seed must be"):
        generate(size, seed)


def test_pixels_show_colour_shape_and_background():
    objects = (Placed("ring", "red", 0.25, 0.5, 0.12), Placed("square", "blue", 0.75, 0.5, 0.12))
    pixels = render("grey", objects)
    assert pixels.shape == (IMAGE_SIDE, IMAGE_SIDE, 3) and pixels.dtype == np.uint8
    at = lambda x, y: tuple(pixels[int(y * IMAGE_SIDE), int(x * IMAGE_SIDE)])  # noqa: E731
    assert at(0.25, 0.5) == RGB["grey"]  # the ring's hole
    assert at(0.25 + 0.09, 0.5) == RGB["red"]  # its band
    assert at(0.75, 0.5) == at(0.75 + 0.09, 0.5 + 0.09) == RGB["blue"]  # a square fills its corners
    assert at(0.02, 0.02) == RGB["grey"]
    edge = pixels[:, int(0.25 * IMAGE_SIDE) + int(0.12 * IMAGE_SIDE)]
    assert any(p not in (RGB["grey"], RGB["red"]) for p in map(tuple, edge))  # anti-aliased edge


def test_shapes_differ_in_pixels():
    shapes = ("circle", "square", "triangle", "star", "cross", "diamond", "hexagon", "ring")
    masks = [render("black", (Placed(shape, "white", 0.5, 0.5, 0.3),))[..., 0] > 127 for shape in shapes]
    for i in range(len(shapes)):
        for j in range(i + 1, len(shapes)):
            assert (masks[i] != masks[j]).sum() > 50, (shapes[i], shapes[j])


def test_pixel_features_are_three_unit_parts_and_tell_scenes_apart():
    bench = generate(60, 1)
    features = np.stack([pixel_features(p) for p in bench.images])
    assert features.shape == (60, FEATURE_SIZE) and features.dtype == np.float32
    for start, stop in ((0, 192), (192, 256), (256, 320)):
        assert np.allclose(np.linalg.norm(features[:, start:stop], axis=1), 1, atol=1e-5)
    cosine = features @ features.T
    assert (np.argmax(cosine, axis=1) == np.arange(60)).all()


def test_edge_orientations_tell_a_square_from_a_diamond():
    square, diamond = (
        orientation_histogram(render("black", (Placed(shape, "white", 0.5, 0.5, 0.3),))).reshape(-1, 4).sum(0)
        for shape in ("square", "diamond")
    )
    assert square[:2].sum() > 5 * square[2:].sum() and diamond[2:].sum() > 5 * diamond[:2].sum()
