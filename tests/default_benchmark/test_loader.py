"""The ``xling-shapes`` loader: the retrieval schema, its identity, its errors, and the retrieval
tasks falling back to it when no --data-dir is given."""

from __future__ import annotations

import numpy as np
import pytest

from harness.adapters.capabilities import image_content_key
from harness.errors import HarnessError
from harness.run.plan import DataSource
from harness.run.runner import resolve_data_source
from harness_tasks.default_benchmark.benchmark import generate, revision
from harness_tasks.default_benchmark.features import FEATURE_SIZE, pixel_features
from harness_tasks.default_benchmark.loader import XlingShapesLoader
from harness_tasks.default_benchmark.scenes import GENERATOR_VERSION
from harness_tasks.retrieval.ikea import IkeaLoader
from harness_tasks.retrieval.schema import image_features
from harness_tasks.retrieval.tasks import Xlr

LOADER = XlingShapesLoader("xling-shapes")


def test_the_data_has_the_retrieval_schema_in_every_language():
    loaded = LOADER.load(None, {"size": 30, "seed": 2, "src": "cs", "tgt": "es"})
    data, bench = loaded.data, generate(30, 2)
    assert data.column_names == [
        "id",
        *(f"text_{lang}" for lang in ("en", "de", "fr", "es", "cs")),
        "image",
        "image_features",
    ]
    assert list(data["id"]) == [f"2-{i}" for i in range(30)]
    for lang, texts in bench.captions.items():
        assert list(data[f"text_{lang}"]) == texts
    image = data[0]["image"]
    assert image.size == (128, 128) and image.mode == "RGB"
    assert all(np.array_equal(np.asarray(image), pixels) for image, pixels in zip(data["image"], bench.images))
    assert data["image"].content_keys() == [image_content_key(image) for image in data["image"]]
    assert data.select([3, 1])["image"].content_keys() == [image_content_key(data["image"][i]) for i in (3, 1)]
    features = image_features("xling-shapes", data)
    assert features.shape == (30, FEATURE_SIZE)
    assert np.array_equal(features, np.stack([pixel_features(pixels) for pixels in bench.images]))
    assert loaded.identity == {
        "loader": "xling-shapes",
        "source": "xling-shapes:size=30,seed=2",
        "revision": revision(30, 2),
        "split": None,
        "generator": GENERATOR_VERSION,
    }


def test_defaults_are_a_thousand_items_seed_zero_en_de():
    loaded = LOADER.load(None, {})
    assert len(loaded.data) == 1000 and loaded.identity["revision"] == revision(1000, 0)


@pytest.mark.parametrize(
    ("source", "args", "images", "message"),
    [
        (None, {"tgt": "ja"}, None, "has no language 'ja' \\(it has: en, de, fr, es, cs\\)"),
        (None, {"src": "de", "tgt": "de"}, None, "src and tgt are both 'de'"),
        ("some/folder", {}, None, "is generated and takes no --data-dir"),
        (None, {}, "images/", "draws its own images and takes no --images"),
        (None, {"size": "many"}, None, "argument size='many' is not a valid int"),
    ],
)
def test_errors_name_the_problem(source, args, images, message):
    with pytest.raises(HarnessError, match=message):
        LOADER.load(source, {"size": 10, **args}, images_dir=images)


def test_the_ikea_loader_names_xling_shapes_as_its_fallback_and_needs_a_source_itself():
    assert IkeaLoader.fallback == "xling-shapes"
    with pytest.raises(HarnessError, match="dataset 'ikea' needs --data-dir"):
        IkeaLoader("ikea").load(None, {"src": "en", "tgt": "fr"})


def test_without_the_plugin_the_runner_asks_for_data_dir():
    class WithoutTheDefaultBenchmark:
        def load(self, kind, name):
            return IkeaLoader

        def names(self, kind):
            return ["ikea"]

    registry, task = WithoutTheDefaultBenchmark(), Xlr("xlr")
    with pytest.raises(HarnessError, match=r"dataset 'ikea' needs --data-dir.*'xling-shapes', is not available"):
        resolve_data_source(registry, task, None)
    # with a --data-dir the fallback does not apply
    assert resolve_data_source(registry, task, "/some/ikea") == DataSource("ikea", "/some/ikea")


def test_the_fallback_is_a_data_source_and_the_task_is_not_rewritten():
    class WithTheDefaultBenchmark:
        def load(self, kind, name):
            return {"ikea": IkeaLoader, "xling-shapes": XlingShapesLoader}[name]

        def names(self, kind):
            return ["ikea", "xling-shapes"]

    task = Xlr("xlr")
    assert resolve_data_source(WithTheDefaultBenchmark(), task, None) == DataSource("xling-shapes", None)
    assert task.dataset == task.args["dataset"] == "ikea"
    # the results record the loader that loaded, as a run with dataset=xling-shapes does
    assert task.recorded_args("xling-shapes") == {**task.args, "dataset": "xling-shapes"}
    assert task.recorded_args("ikea") == task.args
