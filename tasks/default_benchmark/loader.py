"""``xling-shapes``: the built-in benchmark as a dataset loader in the retrieval schema."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.errors import HarnessError
from harness.params import Param, resolve_params
from harness.run.data import DatasetLoader, LoadedData
from harness_tasks.default_benchmark.benchmark import NAME, dataset, revision
from harness_tasks.default_benchmark.grammar import LANGUAGES
from harness_tasks.default_benchmark.scenes import GENERATOR_VERSION
from harness_tasks.retrieval.schema import SCHEMA, languages

DEFAULT_SIZE = 1000


class XlingShapesLoader(DatasetLoader):
    """Generated scenes of coloured shapes with captions in en, de, fr, es and cs."""

    params = {
        "src": Param("en", "source language code"),
        "tgt": Param("de", "target language code"),
        "size": Param(DEFAULT_SIZE, "number of items generated"),
        "seed": Param(0, "generator seed (the tasks' sampling seeds are --seeds)"),
    }
    layout = "no data needed: the scenes and their captions are generated (size=, seed=)"
    schema = SCHEMA

    def load(self, source: str | None, args: Mapping[str, Any], images_dir: str | None = None) -> LoadedData:
        """The items for (size, seed) (``benchmark.dataset``: made once and kept in the harness cache, images drawn
        when read); all languages are columns."""
        args = resolve_params(self.params, args, f"dataset {self.name!r}")
        if source is not None:
            raise HarnessError(f"dataset {self.name!r} is generated and takes no --data-dir (got {source!r})")
        if images_dir is not None:
            raise HarnessError(f"dataset {self.name!r} draws its own images and takes no --images (got {images_dir!r})")
        for lang in languages(args):
            if lang not in LANGUAGES:
                raise HarnessError(f"dataset {self.name!r} has no language {lang!r} (it has: {', '.join(LANGUAGES)})")
        size, seed = args["size"], args["seed"]
        identity = {
            "loader": NAME,
            "source": f"{NAME}:size={size},seed={seed}",
            "revision": revision(size, seed),
            "split": None,
            "generator": GENERATOR_VERSION,
        }
        return LoadedData(dataset(size, seed), identity)
