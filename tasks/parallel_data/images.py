"""Images from a folder the user gives (``--images DIR``), attached to a dataset that names them.

A dataset with an ``image_file`` column (file names relative to the folder) gains an ``image``
column (``datasets.Image``, decoded lazily, one image at a time). Every file is checked first:
a missing, unreadable, truncated or oversized file (a decompression bomb) is an error naming the
list it came from, its row and the file, raised while the data is loaded, before any inference.

Every loader that reads image names (ikea, multi30k, image-text, CoMMuTE) keeps them inside the
images folder with ``image_file``: an absolute name, a ``..`` component, or a symlink that points
out of the folder is refused.
"""

from __future__ import annotations

import hashlib
import warnings
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from harness.errors import DataError
from harness.run.data import files_revision, require_folder


def outside_folder(name: str) -> str | None:
    """Why the relative name ``name`` could reach outside its folder (absolute, a drive, ``..``), or None."""
    posix, windows = PurePosixPath(name.replace("\\", "/")), PureWindowsPath(name)
    if posix.is_absolute() or windows.drive or windows.root:
        return "is an absolute path"
    if ".." in posix.parts:
        return "goes up with '..'"
    return None


def image_file(folder: Path, name: str, listed_in: str, row: int | None, field: str) -> Path:
    """The path of the image ``name`` inside ``folder``; a name or symlink leading out of it is a ``DataError``.

    The one check of every loader that reads image names (the file need not exist: see ``check_image``).
    """
    problem = outside_folder(name)
    if problem is not None:
        raise DataError(
            listed_in, f"image name {name!r} {problem}: image names must resolve inside --images", row=row, field=field
        )
    path = folder / name
    resolved, inside = path.resolve(), folder.resolve()
    if resolved != inside and inside not in resolved.parents:
        raise DataError(
            listed_in,
            f"image {name!r} is a symbolic link to {resolved}, outside --images {str(folder)!r}: "
            "image names must resolve inside --images",
            row=row,
            field=field,
        )
    return path


def check_image(path: Path, listed_in: str, row: int | None, field: str) -> None:
    """Decode the image once (JPEG at 1/8 scale) so a truncated or oversized file is found before any inference."""
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                image.verify()
            with Image.open(path) as image:
                image.draft("RGB", (1, 1))  # a JPEG decodes every block at 1/8 scale: truncation still shows
                image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        width, height = _size(path)
        raise DataError(
            listed_in,
            f"image file {str(path)!r} is {width} x {height} pixels, more than Pillow decodes safely "
            f"({Image.MAX_IMAGE_PIXELS:,} pixels; a decompression bomb?)",
            row=row,
            field=field,
        ) from None
    except (OSError, UnidentifiedImageError, SyntaxError, ValueError) as exc:
        raise DataError(listed_in, f"image file {str(path)!r} cannot be read: {exc}", row=row, field=field) from None


def _size(path: Path) -> tuple[int, int]:
    from PIL import Image

    limit = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None  # only the header is read
    try:
        with Image.open(path) as image:
            return image.size
    finally:
        Image.MAX_IMAGE_PIXELS = limit


def image_paths(names: list[str], images_dir: str, listed_in: str) -> list[str]:
    """The validated paths of ``names`` inside ``images_dir`` (rows are 1-based in errors)."""
    folder = require_folder(images_dir, "images folder")
    paths = []
    for row, name in enumerate(names, start=1):
        if not name or not name.strip():
            raise DataError(listed_in, "empty image file name", row=row, field="image_file")
        path = image_file(folder, name.strip(), listed_in, row, "image_file")
        if not path.is_file():
            raise DataError(listed_in, f"image file {str(path)!r} not found", row=row, field="image_file")
        check_image(path, listed_in, row, "image_file")
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
