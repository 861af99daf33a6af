"""Issue 23, points 6 and 7, and all-zero image features.

A truncated JPEG or a decompression bomb is a data error naming the list file, row and image,
found while the data is loaded (before any inference); an image name that leaves ``--images``
(absolute, ``..``, a symlink pointing out) is refused by every loader that reads image names,
with one check shared by all. Image features that are all zero warn that g is constant.
"""

from __future__ import annotations

import io
import struct
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest
from commute.mmt_builders import stand_in_images, write_commute
from PIL import Image
from retrieval.builders import CAPTIONS, write_ikea, write_images, write_multi30k

from harness.errors import DataError
from harness_tasks.commute.data import CommuteLoader
from harness_tasks.parallel_data.multi30k import Multi30kLoader
from harness_tasks.retrieval.hf_dataset import ImageTextLoader
from harness_tasks.retrieval.ikea import IkeaLoader


def _jpeg(size: tuple[int, int] = (64, 48)) -> bytes:
    buffer = io.BytesIO()
    pixels = np.random.default_rng(0).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=95)
    return buffer.getvalue()


def _bomb(path: Path) -> None:
    """A PNG whose header says 20000 x 20000 (400 million pixels): Pillow refuses it on opening."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 20000, 20000, 8, 0, 0, 0, 0)  # 8-bit greyscale
    rows = zlib.compress(b"\0" * 20001 * 4)  # a few rows are enough: it is never decoded
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b""))


NAMES = [f"img{i}.png" for i in range(6)]


def _load_multi30k(tmp_path: Path, images: Path, names: list[str]) -> str:
    data = write_multi30k(tmp_path / "m30k", images=names)
    Multi30kLoader("multi30k").load(str(data), {}, images_dir=str(images))
    return str(data / "test_2016_flickr.images.txt")


def _load_ikea(tmp_path: Path, images: Path, names: list[str]) -> str:
    data = write_ikea(tmp_path / "ikea", images=names)
    IkeaLoader("ikea").load(str(data), {}, images_dir=str(images))
    return str(data / "en.de" / "test.images.txt")


def _load_image_text(tmp_path: Path, images: Path, names: list[str]) -> str:
    import datasets

    rows = {"id": [str(i) for i in range(6)], "text_en": CAPTIONS["en"], "text_de": CAPTIONS["de"], "image_file": names}
    saved = tmp_path / "saved"
    datasets.DatasetDict({"test": datasets.Dataset.from_dict(rows)}).save_to_disk(str(saved))
    ImageTextLoader("image-text").load(str(saved), {}, images_dir=str(images))
    return str(saved)


LOADERS = {"multi30k": _load_multi30k, "ikea": _load_ikea, "image-text": _load_image_text}


def _images(tmp_path: Path) -> Path:
    write_images(tmp_path / "images", 6)
    return tmp_path / "images"


def _refused(kind: str, tmp_path: Path, images: Path, names: list[str]) -> str:
    """The loader's error message, which must start with the file that lists the images."""
    listed_in = {"multi30k": tmp_path / "m30k" / "test_2016_flickr.images.txt"}.get(kind)
    with pytest.raises(DataError) as raised, warnings.catch_warnings():
        warnings.simplefilter("error")  # no DecompressionBombWarning (or other) escapes either
        LOADERS[kind](tmp_path, images, names)
    message = str(raised.value)
    expected = {
        "multi30k": tmp_path / "m30k" / "test_2016_flickr.images.txt",
        "ikea": tmp_path / "ikea" / "en.de" / "test.images.txt",
        "image-text": tmp_path / "saved",
    }[kind]
    assert listed_in is None or message.startswith(str(listed_in))
    assert message.startswith(f"{expected}, row "), message
    return message


@pytest.mark.parametrize("kind", LOADERS)
def test_a_truncated_jpeg_is_named_with_its_list_and_row(kind, tmp_path):
    images = _images(tmp_path)
    (images / "img3.png").write_bytes(_jpeg()[:-600])  # cut short: the header is whole, the scan is not
    message = _refused(kind, tmp_path, images, NAMES)
    assert "row 4" in message and "img3.png" in message and "truncated" in message, message


@pytest.mark.parametrize("kind", LOADERS)
def test_a_decompression_bomb_is_named_with_its_list_and_row(kind, tmp_path):
    images = _images(tmp_path)
    _bomb(images / "img2.png")
    message = _refused(kind, tmp_path, images, NAMES)
    assert "row 3" in message and "img2.png" in message and "20000 x 20000" in message, message


@pytest.mark.parametrize("kind", LOADERS)
@pytest.mark.parametrize("escape", ["absolute", "dotdot", "symlink"])
def test_an_image_name_that_leaves_the_images_folder_is_refused(kind, escape, tmp_path):
    images = _images(tmp_path)
    outside = tmp_path / "outside.png"
    Image.new("RGB", (8, 8)).save(outside)
    (images / "img4.png").unlink()
    (images / "img4.png").symlink_to(outside)
    names = list(NAMES)
    names[4] = {"absolute": str(outside), "dotdot": "../outside.png", "symlink": "img4.png"}[escape]
    message = _refused(kind, tmp_path, images, names)
    assert "row 5" in message and "--images" in message, message


def test_commute_refuses_a_symlink_that_points_out(tmp_path):
    data = write_commute(tmp_path / "commute")
    names = (data / "en-fr" / "img.order").read_text().splitlines()
    images = stand_in_images(tmp_path / "images", names)
    outside = tmp_path / "outside.jpg"
    (images / names[0]).rename(outside)
    (images / names[0]).symlink_to(outside)
    with pytest.raises(DataError, match=r"img\.order, row 1, field 'image': .* outside --images"):
        CommuteLoader("commute").load(str(data), {"lang": "fr"}, images_dir=str(images))


def test_all_zero_image_features_warn_that_g_is_constant(tmp_path, capsys):
    data = write_ikea(tmp_path / "ikea", features=np.zeros((6, 4), dtype=np.float32))
    IkeaLoader("ikea").load(str(data), {})
    err = capsys.readouterr().err
    assert err.count("harness: warning:") == 1, err
    assert f"{data / 'en.de' / 'test.image_features.npy'}: every image feature vector is zero" in err
    assert "g is constant" in err
    write_ikea(tmp_path / "fine", features=np.eye(6, 4, dtype=np.float32))
    IkeaLoader("ikea").load(str(tmp_path / "fine"), {})
    assert capsys.readouterr().err == ""


def test_identical_image_features_from_the_hub_layout_warn_too(tmp_path, capsys):
    import datasets

    rows = {"id": [str(i) for i in range(6)], "text_en": CAPTIONS["en"], "text_de": CAPTIONS["de"]}
    rows["image_features"] = [[0.5, 0.5]] * 6
    datasets.Dataset.from_dict(rows).save_to_disk(str(tmp_path / "saved"))
    ImageTextLoader("image-text").load(str(tmp_path / "saved"), {})
    err = capsys.readouterr().err
    assert "every image feature vector is the same" in err and "g is constant" in err, err
