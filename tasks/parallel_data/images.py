"""Images from a folder the user gives (``--images DIR``), attached to a dataset that names them.

A dataset with an ``image_file`` column (file names relative to the folder) gains an ``image``
column (``datasets.Image``, decoded lazily, one image at a time). Every file is checked first:
a missing or unreadable file is an error naming the list it came from, its row and the file.
"""

from __future__ import annotations

import hashlib
from typing import Any

from harness.errors import DataError
from harness.run.data import files_revision, require_folder


def image_paths(names: list[str], images_dir: str, listed_in: str) -> list[str]:
    """The validated paths of ``names`` inside ``images_dir`` (rows are 1-based in errors)."""
    from PIL import Image, UnidentifiedImageError

    folder = require_folder(images_dir, "images folder")
    paths = []
    for row, name in enumerate(names, start=1):
        if not name or not name.strip():
            raise DataError(listed_in, "empty image file name", row=row, field="image_file")
        path = folder / name.strip()
        if not path.is_file():
            raise DataError(listed_in, f"image file {str(path)!r} not found", row=row, field="image_file")
        try:
            with Image.open(path) as image:
                image.verify()
        except (OSError, UnidentifiedImageError, SyntaxError, ValueError) as exc:
            raise DataError(
                listed_in, f"image file {str(path)!r} cannot be read: {exc}", row=row, field="image_file"
            ) from None
        paths.append(str(path))
    return paths


def attach_images(data: Any, images_dir: str, listed_in: str) -> tuple[Any, str]:
    """``data`` with an ``image`` column for its ``image_file`` names, and the images' content revision."""
    import datasets

    if "image_file" not in data.column_names:
        raise DataError(listed_in, "--images was given but the dataset names no image files (no 'image_file' column)")
    paths = image_paths(list(data["image_file"]), images_dir, listed_in)
    with_images = data.add_column("image", paths).cast_column("image", datasets.Image())
    return with_images, files_revision(sorted(set(paths)))


def combined_revision(*revisions: str) -> str:
    """One revision standing for several (texts and images), so that a change in any shows."""
    return "sha256:" + hashlib.sha256("\n".join(revisions).encode()).hexdigest()[:16]
