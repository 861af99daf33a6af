"""CoMMuTE data: the tuple schema, the original layout, Hub / save_to_disk datasets, and images.

Schema (``datasets.Dataset``, one row per tuple (s, i^a, t^a, i^b, t^b)):

- ``id`` (string): the tuple's 1-based number; ``line_a``, ``line_b`` (int): its 1-based lines
- ``source`` (string): the ambiguous English sentence
- ``target_a``, ``target_b`` (string): the translation correct for image a / image b
- ``incorrect_a``, ``incorrect_b`` (string): the file's incorrect translation of each line
  (the partner's correct one, except for two en-fr pairs, loaded as they are)
- ``image_a``, ``image_b`` (string): image file names as in ``img.order``
- ``image_a_path``, ``image_b_path`` (string): absolute paths, when ``--images`` is given
- ``candidates_a``, ``candidates_b`` (list of string; ``commute_extended`` only): the original
  image first, then the extra candidates of ``<images>/extended/<id>/a/`` (and ``b/``) by name

The original layout (``--data-dir`` the CoMMuTE folder or one ``en-<lang>`` folder of it):
``src.en``, ``correct.<l>``, ``incorrect.<l>``, ``img.order``, line-aligned, lines 2j-1 and 2j
forming tuple j. A Hub id or ``save_to_disk`` folder must have the columns above up to
``image_b`` in its ``test`` split; a ``lang`` column, if present, selects the rows.

Image names are relative paths inside ``--images``: an absolute name or one with a ``..``
component is a data error naming the file, row and field, whether or not images are given.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import DataError, HarnessError
from harness.params import Param
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
from harness_tasks.commute import contracts
from harness_tasks.parallel_data.images import check_image, combined_revision, image_file, outside_folder

TEXT_COLUMNS = ("source", "target_a", "target_b", "incorrect_a", "incorrect_b")
COLUMNS = ("id", *TEXT_COLUMNS, "image_a", "image_b")
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".bmp", ".gif"}
LANG_PARAM = Param(
    "fr",
    "target language: the folder en-<lang> (fr, de, cs, ar, ru, zh, or a variant such as fr_dev)",
    meaning=contracts.TARGET.meaning,
)


def target_language(lang: str) -> str:
    """The language code of a folder name: ``fr_dev`` -> ``fr``."""
    return lang.split("_")[0]


def pair_folder(root: Path, lang: str) -> Path:
    """The ``en-<lang>`` folder under ``root`` (or ``root`` itself when it holds ``src.en``)."""
    if (root / "src.en").is_file():
        return root
    folder = root / f"en-{lang}"
    if not folder.is_dir():
        available = sorted(p.name.removeprefix("en-") for p in root.glob("en-*") if p.is_dir())
        raise HarnessError(f"{root} has no folder en-{lang} (languages here: {', '.join(available) or 'none'})")
    return folder


def read_raw(folder: Path, lang: str) -> tuple[dict[str, list[Any]], list[Path]]:
    """Columns of the original layout, validated; and the files read."""
    code = target_language(lang)
    files = {
        "source": folder / "src.en",
        "correct": folder / f"correct.{code}",
        "incorrect": folder / f"incorrect.{code}",
        "image": folder / "img.order",
    }
    lines = read_aligned(files)
    for name, values in lines.items():
        check_nonempty(str(files[name]), name, values)
    count = len(lines["source"])
    if count % 2:
        raise DataError(str(files["source"]), f"has {count} lines, an odd number (lines 2j-1 and 2j form tuple j)")
    for first in range(0, count, 2):
        if lines["source"][first] != lines["source"][first + 1]:
            raise DataError(
                str(files["source"]),
                f"lines {first + 1} and {first + 2} form a tuple but their sources differ",
                row=first + 2,
                field="source",
            )
    half = range(0, count, 2)
    columns: dict[str, list[Any]] = {
        "id": [str(i // 2 + 1) for i in half],
        "line_a": [i + 1 for i in half],
        "line_b": [i + 2 for i in half],
        "source": [lines["source"][i] for i in half],
        "target_a": [lines["correct"][i] for i in half],
        "target_b": [lines["correct"][i + 1] for i in half],
        "incorrect_a": [lines["incorrect"][i] for i in half],
        "incorrect_b": [lines["incorrect"][i + 1] for i in half],
        "image_a": [lines["image"][i] for i in half],
        "image_b": [lines["image"][i + 1] for i in half],
    }
    return columns, list(files.values())


def check_tuples(source: str, columns: Mapping[str, list[Any]]) -> None:
    """Non-empty texts, and two different correct translations in every tuple."""
    for name in (*TEXT_COLUMNS, "image_a", "image_b"):
        check_nonempty(source, name, columns[name])
    for row, (a, b) in enumerate(zip(columns["target_a"], columns["target_b"]), start=1):
        if a == b:
            raise DataError(
                source, "the two correct translations of the tuple are identical", row=row, field="target_b"
            )


def check_image_names(source: str, columns: Mapping[str, list[Any]], by_line: bool) -> None:
    """Every image name stays inside the images folder; rows are file lines (``by_line``) or 1-based tuple rows."""
    for side in ("a", "b"):
        for index, name in enumerate(columns[f"image_{side}"]):
            problem = outside_folder(name)
            if problem is not None:
                row = columns[f"line_{side}"][index] if by_line else index + 1
                raise DataError(
                    source,
                    f"image name {name!r} {problem}: image names must resolve inside --images",
                    row=row,
                    field="image" if by_line else f"image_{side}",
                )


def attach_images(columns: dict[str, list[Any]], images_dir: str, listed_in: str, by_line: bool) -> list[Path]:
    """Add absolute image paths; every missing file is named, a symlink out of ``images_dir`` or an
    unreadable image is an error naming ``listed_in`` and the row (as ``check_image_names``). Returns the image files."""
    folder = require_folder(images_dir, "images folder")
    names = columns["image_a"] + columns["image_b"]
    missing = sorted({name for name in names if not (folder / name).is_file()})
    if missing:
        raise DataError(
            str(folder), f"{len(missing)} image file(s) of the dataset are missing: {', '.join(missing)}", field="image"
        )
    checked: set[str] = set()
    for side in ("a", "b"):
        for index, name in enumerate(columns[f"image_{side}"]):
            row = columns[f"line_{side}"][index] if by_line else index + 1
            field = "image" if by_line else f"image_{side}"
            path = image_file(folder, name, listed_in, row, field)
            if name not in checked:
                checked.add(name)
                check_image(path, listed_in, row, field)
    for side in ("a", "b"):
        columns[f"image_{side}_path"] = [str((folder / name).resolve()) for name in columns[f"image_{side}"]]
    return sorted({folder / name for name in names})


def hub_columns(source: str, lang: str) -> tuple[dict[str, list[Any]], dict[str, Any]]:
    """Columns and identity of a Hub id or save_to_disk folder (rows of ``lang`` if it has a lang column)."""
    loaded = load_hf_dataset(source, "test")
    data = loaded.data
    if "lang" in data.column_names:
        data = data.filter(lambda row: row["lang"] == lang)
        if len(data) == 0:
            raise DataError(source, f"has no rows with lang {lang!r}", field="lang")
    require_columns(source, data, COLUMNS)
    columns = {name: list(data[name]) for name in COLUMNS}
    for side in ("a", "b"):
        line = f"line_{side}"
        columns[line] = list(data[line]) if line in data.column_names else [None] * len(data)
    return columns, loaded.identity


class CommuteLoader(DatasetLoader):
    """CoMMuTE tuples from the original layout, a Hub id or a save_to_disk folder; images from ``--images``."""

    params = {"lang": LANG_PARAM}
    layout = "--data-dir the CoMMuTE folder (holding en-<lang>/) or one en-<lang> folder, with src.en, correct.<lang>, incorrect.<lang> (one text per line, two lines per tuple) and img.order (the image file of each line); the images from --images, else from the en-<lang>/images folder when the set has one"
    schema = (
        "id, line_a, line_b, source, target_a, target_b, incorrect_a, incorrect_b, image_a, image_b[, image_*_path]"
    )

    def load(self, source: str | None, args: Mapping[str, Any], images_dir: str | None = None) -> LoadedData:
        """Read, validate, and attach the images when a folder is given."""
        if source is None:
            raise HarnessError(
                f"dataset {self.name!r} needs --data-dir: the CoMMuTE folder (with en-<lang>/), "
                "a save_to_disk folder or a Hub id"
            )
        lang = args["lang"]
        by_line = not uses_hf_dataset(source)
        if not by_line:
            columns, identity = hub_columns(source, lang)
            listed_in = source
        else:
            folder = pair_folder(require_folder(source), lang)
            if images_dir is None and (folder / "images").is_dir():
                images_dir = str(folder / "images")  # a set that carries its own images (xling-shapes-commute)
            columns, files = read_raw(folder, lang)
            listed_in = str(folder / "img.order")
            identity = {"source": str(folder), "revision": files_revision(files), "split": folder.name}
        check_image_names(listed_in, columns, by_line=by_line)
        check_tuples(identity["source"], columns)
        if images_dir is not None:
            identity["revision"] = combined_revision(
                identity["revision"], files_revision(attach_images(columns, images_dir, listed_in, by_line))
            )
            identity["images"] = str(images_dir)
        self.extend(columns, images_dir, identity)
        import datasets

        return LoadedData(datasets.Dataset.from_dict(columns), identity)

    def extend(self, columns: dict[str, list[Any]], images_dir: str | None, identity: dict[str, Any]) -> None:
        """Hook for loaders that add columns (the plain loader adds none)."""


def candidate_files(folder: Path) -> list[Path]:
    """The image files of one candidate folder, by name."""
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)


class CommuteExtendedLoader(CommuteLoader):
    """CoMMuTE with k candidate images per translation: ``<images>/extended/<id>/{a,b}/``."""

    schema = CommuteLoader.schema + ", candidates_a, candidates_b"

    def extend(self, columns: dict[str, list[Any]], images_dir: str | None, identity: dict[str, Any]) -> None:
        """Candidate lists: the original image, then the extended folder's images."""
        if images_dir is None:
            raise HarnessError(
                f"dataset {self.name!r} needs --images DIR with the original images and "
                "extended/<id>/a/, extended/<id>/b/ candidate folders"
            )
        root = Path(images_dir) / "extended"
        if not root.is_dir():
            raise HarnessError(f"{root} does not exist: the extended layout needs one folder per tuple id there")
        for row, tuple_id in enumerate(columns["id"], start=1):
            if outside_folder(tuple_id) is not None or Path(tuple_id).name != tuple_id:
                raise DataError(
                    identity["source"],
                    f"tuple id {tuple_id!r} is not a plain folder name under {root}",
                    row=row,
                    field="id",
                )
        extra: list[Path] = []
        for side in ("a", "b"):
            lists = []
            for tuple_id, original in zip(columns["id"], columns[f"image_{side}_path"]):
                found = candidate_files(root / tuple_id / side)
                extra += found
                lists.append([original, *(str(p.resolve()) for p in found)])
            columns[f"candidates_{side}"] = lists
        identity["revision"] = combined_revision(identity["revision"], files_revision(extra) if extra else "none")
