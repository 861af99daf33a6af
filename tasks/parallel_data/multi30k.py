"""The Multi30K loader: the raw ``<split>.<lang>`` layout, or a Hub / save_to_disk dataset.

Schema (``datasets.Dataset``): ``id`` (string, the 1-based line number in the raw layout),
``text_<src>`` and ``text_<tgt>`` (strings), and ``image_file`` (string) when the layout has
``<split>.images.txt``. With ``--images DIR`` (the Flickr30k images, which Multi30K does not
ship) every listed file is checked and an ``image`` column (``datasets.Image``) is added.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.errors import DataError, HarnessError
from harness.params import Param, resolve_params
from harness.run.data import (
    DatasetLoader,
    LoadedData,
    check_nonempty,
    files_revision,
    load_hf_dataset,
    read_aligned,
    require_columns,
    require_folder,
    uses_hf_dataset,
)
from harness_tasks.parallel_data.images import attach_images, combined_revision


class Multi30kLoader(DatasetLoader):
    """Multi30K (or any folder in its layout): one caption per line, one file per language."""

    params = {
        "src": Param("en", "source language code"),
        "tgt": Param("de", "target language code"),
        "split": Param("test_2016_flickr", "split file prefix, e.g. test_2016_flickr or val"),
    }
    layout = "--data-dir DIR with <split>.<lang> (one caption per line, aligned across languages) and <split>.images.txt (the images from --images, for tasks that use them)"
    schema = "id: string, text_<src>: string, text_<tgt>: string, image_file: string (optional), image: Image (with --images)"

    def load(self, source: str | None, args: Mapping[str, Any], images_dir: str | None = None) -> LoadedData:
        """Read and validate one split for the pair (src, tgt), with its images when ``images_dir`` is given."""
        loaded = self._load_texts(source, resolve_params(self.params, args, f"dataset {self.name!r}"))
        if images_dir is not None and "image" not in loaded.data.column_names:
            listed_in = loaded.identity.get("image_list", str(source))
            loaded.data, images_revision = attach_images(loaded.data, images_dir, listed_in)
            loaded.identity.update(images=str(images_dir), images_revision=images_revision)
            loaded.identity["revision"] = combined_revision(loaded.identity["revision"], images_revision)
        return loaded

    def _load_texts(self, source: str | None, args: Mapping[str, Any]) -> LoadedData:
        if source is None:
            raise HarnessError(
                "dataset 'multi30k' needs --data-dir: a folder with <split>.<lang> files, a save_to_disk folder or a Hub id"
            )
        src, tgt, split = args["src"], args["tgt"], args["split"]
        if src == tgt:
            raise HarnessError(f"src and tgt are both {src!r}: give two different languages")
        columns = [f"text_{src}", f"text_{tgt}"]
        if uses_hf_dataset(source):
            loaded = load_hf_dataset(source, split)
            require_columns(source, loaded.data, ["id", *columns])
            for column in columns:
                check_nonempty(source, column, loaded.data[column])
            return loaded
        folder = require_folder(source)
        files = {columns[0]: folder / f"{split}.{src}", columns[1]: folder / f"{split}.{tgt}"}
        for path in files.values():
            if not path.is_file():
                available = sorted({p.suffix.lstrip(".") for p in folder.glob(f"{split}.*")} - {"txt"})
                raise DataError(
                    str(path), f"not found (languages of split {split!r} here: {', '.join(available) or 'none'})"
                )
        image_list = folder / f"{split}.images.txt"
        if image_list.is_file():
            files["image_file"] = image_list
        texts = read_aligned(files)
        for column in columns:
            check_nonempty(str(files[column]), column, texts[column])
        import datasets

        rows = {"id": [str(i) for i in range(1, len(texts[columns[0]]) + 1)], **texts}
        identity = {"source": str(folder), "revision": files_revision(list(files.values())), "split": split}
        if "image_file" in files:
            identity["image_list"] = str(image_list)
        return LoadedData(datasets.Dataset.from_dict(rows), identity)
