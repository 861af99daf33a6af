"""``harness commute-stand-in-images``: labelled stand-in images for a CoMMuTE folder.

CoMMuTE's images are distributed separately by its authors (``images.tar.gz``, see
docs/commute.md). So that the IC/GIC examples run anywhere, this command writes one image per
name in ``img.order`` (every language folder, or one), each clearly labelled as a stand-in and
different from every other (a colour and pattern derived from its name). Numbers computed with
them measure nothing about the real images: use them to check a setup, never to report.
"""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from harness.errors import HarnessError
from harness.run.data import read_lines, require_folder
from harness_tasks.commute.data import outside_folder

if TYPE_CHECKING:
    from PIL import Image

SIZE = 224


def image_names(root: Path, lang: str | None) -> list[str]:
    """The distinct names of the ``img.order`` files under ``root`` (``en-<lang>/`` only when ``lang`` is given)."""
    orders = (
        [root / "img.order"] if (root / "img.order").is_file() else sorted(root.glob(f"en-{lang or '*'}/img.order"))
    )
    if not orders:
        raise HarnessError(f"{root} has no img.order" + (f" in en-{lang}/" if lang else " (nor en-*/img.order)"))
    return sorted({name for order in orders for name in read_lines(order) if name.strip()})


def draw(name: str) -> Image.Image:
    """A stand-in image for ``name``: a colour and stripes from its hash, and the words STAND-IN and the name."""
    from PIL import Image, ImageDraw

    digest = hashlib.sha256(name.encode()).digest()
    image = Image.new("RGB", (SIZE, SIZE), tuple(digest[:3]))
    pen = ImageDraw.Draw(image)
    step = 8 + digest[3] % 24
    for offset in range(-SIZE, SIZE, step):
        pen.line([(offset, 0), (offset + SIZE, SIZE)], fill=tuple(digest[4:7]), width=1 + digest[7] % 4)
    pen.rectangle([8, 8, SIZE - 8, 64], fill=(255, 255, 255))
    pen.text((14, 14), "STAND-IN IMAGE", fill=(200, 0, 0))
    pen.text((14, 30), "not from CoMMuTE", fill=(0, 0, 0))
    pen.text((14, 46), name[:34], fill=(0, 0, 0))
    return image


class StandInImages:
    """Write labelled stand-in images named as in a CoMMuTE folder's img.order."""

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """The CoMMuTE folder, an optional language, the output folder."""
        parser.add_argument(
            "--data-dir", required=True, help="the CoMMuTE folder (with en-<lang>/) or one en-<lang> folder"
        )
        parser.add_argument(
            "--lang", default=None, help="only the names of en-<lang>/img.order (default: every language)"
        )
        parser.add_argument("--output", required=True, help="folder to write the images to (existing files are kept)")

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        """Write the missing images and say how many."""
        names = image_names(require_folder(args.data_dir), args.lang)
        for name in names:  # all checked before anything is written, as the CoMMuTE loader checks them
            problem = outside_folder(name)
            if problem is not None:
                raise HarnessError(f"img.order names {name!r}, which {problem}: image names must stay inside --output")
        folder = Path(args.output)
        folder.mkdir(parents=True, exist_ok=True)
        written = 0
        for name in names:
            target = folder / name
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                draw(name).save(target)
                written += 1
        print(
            f"wrote {written} stand-in images to {folder} ({len(names) - written} already there); "
            "they are labelled STAND-IN: results with them are for checking a setup only"
        )
        return 0


COMMAND = StandInImages()
