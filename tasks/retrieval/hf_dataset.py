"""``image-text``: any Hugging Face dataset (Hub id or ``save_to_disk`` folder) in the retrieval schema.

Columns are renamed to the schema with ``columns=schema:dataset;...`` (for example
``columns=id:sku;text_en:caption_en;text_de:caption_de;image_features:clip``). A dataset that
names image files in an ``image_file`` column gets its images from ``--images DIR`` (a local JSONL, CSV,
TSV or Parquet file: from the file's folder by default).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.params import Param, resolve_params
from harness.run.data import DatasetLoader, LoadedData, is_table_file, load_hf_dataset, uses_hf_dataset
from harness_tasks.parallel_data.images import attach_images, combined_revision
from harness_tasks.retrieval.schema import DATA_PARAMS, SCHEMA, apply_columns, image_features, languages, validate


def load_mapped(source: str, args: Mapping[str, Any], images_dir: str | None) -> LoadedData:
    """Load a Hub or ``save_to_disk`` dataset, rename its columns, attach images, and validate it."""
    langs = languages(args)
    loaded = load_hf_dataset(source, args["split"])
    loaded.data = apply_columns(source, loaded.data, args["columns"])
    if images_dir is None and is_table_file(source) and "image_file" in loaded.data.column_names:
        images_dir = str(Path(source).expanduser().parent)  # a local file's image paths: read against its folder
    if images_dir is not None and "image" not in loaded.data.column_names:
        loaded.data, images_revision = attach_images(loaded.data, images_dir, source)
        loaded.identity.update(
            images=str(images_dir), revision=combined_revision(str(loaded.identity["revision"]), images_revision)
        )
    validate(source, loaded.data, langs)
    if "image_features" in loaded.data.column_names:
        warn_if_constant(source, image_features(source, loaded.data))
    return loaded


def warn_if_constant(source: str, features: np.ndarray) -> None:
    """One warning when every image feature vector is the same (all zero, say): the image similarity g is
    then constant, so BackRetrieval sits at chance and CORR is undefined whatever the text model does."""
    if len(features) < 2 or not (features == features[0]).all():
        return
    what = "zero" if not features.any() else "the same"
    print(
        f"harness: warning: {source}: every image feature vector is {what}, so g is constant: BackRetrieval "
        "can only be at chance and CORR is undefined (were the features extracted?)",
        file=sys.stderr,
    )


class ImageTextLoader(DatasetLoader):
    """A bilingual image-text dataset from the Hub or a ``save_to_disk`` folder."""

    params = {**DATA_PARAMS, "split": Param("test", "dataset split")}
    layout = "--data-dir a Hub dataset id, save_to_disk folder or JSONL/CSV/TSV/Parquet file with text_<lang> columns and an image, image_file or image_features column"
    schema = SCHEMA

    def load(self, source: str | None, args: Mapping[str, Any], images_dir: str | None = None) -> LoadedData:
        """Load and validate the split."""
        if source is None or not uses_hf_dataset(source):
            raise HarnessError(
                f"dataset {self.name!r} needs --data-dir set to a Hub dataset id, a save_to_disk folder or a "
                f"JSONL, CSV, TSV or Parquet file (got {source!r}); for raw folders use dataset=ikea or dataset=multi30k"
            )
        return load_mapped(source, resolve_params(self.params, args, f"dataset {self.name!r}"), images_dir)
