"""The retrieval family's loaders: IKEA raw layout (real and synthetic), Hub/save_to_disk with
column mapping, Multi30K with images; every validation error names file, row and field."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import shared_data
from retrieval.builders import CAPTIONS, write_ikea, write_images, write_multi30k

from harness.errors import DataError, HarnessError
from harness_tasks.parallel_data.multi30k import Multi30kLoader
from harness_tasks.retrieval.hf_dataset import ImageTextLoader
from harness_tasks.retrieval.ikea import IkeaLoader
from harness_tasks.retrieval.schema import image_features, parse_columns


def ikea(source, images_dir=None, **args):
    return IkeaLoader("ikea").load(str(source), {"src": "en", "tgt": "de", **args}, images_dir=images_dir)


def test_real_ikea_splits_pairs_and_pooling():
    folder = shared_data("ikea")
    test = ikea(folder)
    assert (
        len(test.data) == 367 and test.identity["split"] == "test" and test.identity["revision"].startswith("sha256:")
    )
    features = image_features("ikea", test.data)
    np.testing.assert_array_equal(features, np.load(folder / "en.de" / "test.image_features.npy"))
    pooled = ikea(folder, split="test+val")
    assert len(pooled.data) == 367 + 363 and pooled.data["id"][367] == "val:1" and pooled.data["id"][0] == "test:1"
    reverse = IkeaLoader("ikea").load(str(folder), {"src": "fr", "tgt": "en", "split": "val"})
    assert len(reverse.data) == 335 and {"text_fr", "text_en", "image_features", "image_file"} <= set(
        reverse.data.column_names
    )
    assert ikea(folder / "en.de").identity["revision"] == test.identity["revision"]  # the pair folder itself


def test_synthetic_layout_reads_and_pools(tmp_path):
    write_ikea(tmp_path, "test")
    write_ikea(tmp_path, "val")
    loaded = ikea(tmp_path, split="val+test")
    assert loaded.data["text_de"][0] == "val ein roter Stuhl" and loaded.data["id"][6] == "test:1"
    assert image_features("x", loaded.data).shape == (12, 4)


def test_the_fingerprint_follows_the_files_not_a_hash_of_the_table(tmp_path, monkeypatch):
    import datasets.arrow_dataset

    def no_table_hash(*args, **kwargs):
        raise AssertionError("the loader hashed the table")

    monkeypatch.setattr(datasets.arrow_dataset, "generate_fingerprint", no_table_hash)
    write_ikea(tmp_path / "a")
    write_ikea(tmp_path / "b")
    first, again, elsewhere = ikea(tmp_path / "a"), ikea(tmp_path / "a"), ikea(tmp_path / "b")
    assert first.data._fingerprint == again.data._fingerprint != elsewhere.data._fingerprint  # another folder
    assert len(first.data._fingerprint) == 16
    np.save(tmp_path / "a" / "en.de" / "test.image_features.npy", np.zeros((6, 4), np.float32))
    assert ikea(tmp_path / "a").data._fingerprint != first.data._fingerprint  # other features, same names
    write_ikea(tmp_path / "a", "val")
    assert ikea(tmp_path / "a", split="test+val").data._fingerprint != first.data._fingerprint  # pooled


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda f: (f / "test.de").write_text("eins\nzwei\n"),
            r"not line-aligned: .*test.en has 6 lines.*test.de has 2 lines",
        ),
        (lambda f: (f / "test.en").write_text("a\n\nc\nd\ne\nf\n"), r"test.en, row 2, field 'text_en': empty text"),
        (
            lambda f: np.save(f / "test.image_features.npy", np.ones((5, 4), np.float32)),
            r"test.image_features.npy: has 5 rows but .*test.en has 6 lines",
        ),
        (
            lambda f: np.save(
                f / "test.image_features.npy", np.array([[1.0, 2.0]] * 3 + [[np.nan, 1.0]] + [[0.0, 0.0]] * 2)
            ),
            r"test.image_features.npy, row 4, field 'image_features': non-finite value nan",
        ),
        (lambda f: np.save(f / "test.image_features.npy", np.ones(6)), r"must be a 2-D numeric array"),
        (lambda f: (f / "test.image_features.npy").write_bytes(b"not numpy"), r"cannot be read as a NumPy array"),
    ],
)
def test_broken_layouts_name_file_row_and_field(tmp_path, damage, message):
    write_ikea(tmp_path)
    damage(tmp_path / "en.de")
    with pytest.raises(DataError, match=message):
        ikea(tmp_path)


def test_unknown_pair_split_and_unpoolable_splits(tmp_path):
    write_ikea(tmp_path)
    with pytest.raises(DataError, match=r"neither a en.cs folder .*pairs here: en.de"):
        IkeaLoader("ikea").load(str(tmp_path), {"src": "en", "tgt": "cs"})
    with pytest.raises(DataError, match=r"dev.en: not found \(splits with en texts here: test\)"):
        ikea(tmp_path, split="dev")
    with pytest.raises(HarnessError, match="each once"):
        ikea(tmp_path, split="test+test")
    write_ikea(tmp_path, "val", features=np.ones((6, 3), np.float32))
    with pytest.raises(DataError, match="different sizes"):
        ikea(tmp_path, split="test+val")
    with pytest.raises(HarnessError, match="both 'en'"):
        IkeaLoader("ikea").load(str(tmp_path), {"src": "en", "tgt": "en"})


def test_images_from_a_folder_and_their_errors(tmp_path):
    names = write_images(tmp_path / "images", 6)
    write_ikea(tmp_path / "data", images=names)
    loaded = ikea(tmp_path / "data", images_dir=str(tmp_path / "images"))
    assert loaded.data[2]["image"].size == (40, 30) and loaded.identity["images"] == str(tmp_path / "images")
    assert loaded.identity["revision"] != ikea(tmp_path / "data").identity["revision"]
    (tmp_path / "images" / names[3]).write_text("not an image")
    with pytest.raises(
        DataError, match=r"test.images.txt, row 4, field 'image_file': image file .*img3.png.* cannot be read"
    ):
        ikea(tmp_path / "data", images_dir=str(tmp_path / "images"))
    (tmp_path / "images" / names[3]).unlink()
    with pytest.raises(
        DataError, match=r"test.images.txt, row 4, field 'image_file': image file .*img3.png.* not found"
    ):
        ikea(tmp_path / "data", images_dir=str(tmp_path / "images"))


def test_multi30k_keeps_its_text_behaviour_and_adds_images(tmp_path):
    names = write_images(tmp_path / "flickr", 6)
    write_multi30k(tmp_path / "m30k", images=names)
    loader = Multi30kLoader("multi30k")
    texts = loader.load(str(tmp_path / "m30k"), {"src": "en", "tgt": "fr", "split": "test_2016_flickr"})
    assert (
        texts.data.column_names == ["id", "text_en", "text_fr", "image_file"]
        and texts.data["text_fr"][0] == CAPTIONS["fr"][0]
    )
    with_images = loader.load(str(tmp_path / "m30k"), {"src": "en", "tgt": "fr"}, images_dir=str(tmp_path / "flickr"))
    assert with_images.data[1]["image"].mode == "L" and with_images.identity["revision"] != texts.identity["revision"]
    write_multi30k(tmp_path / "no-list")
    with pytest.raises(DataError, match="names no image files"):
        loader.load(str(tmp_path / "no-list"), {"src": "en", "tgt": "de"}, images_dir=str(tmp_path / "flickr"))


def saved_dataset(folder, **columns):
    import datasets

    base = {
        "sku": [f"p{i}" for i in range(6)],
        "desc_en": CAPTIONS["en"],
        "desc_de": CAPTIONS["de"],
        "feats": np.random.default_rng(0).random((6, 3)).astype(np.float32).tolist(),
    }
    datasets.DatasetDict({"test": datasets.Dataset.from_dict({**base, **columns})}).save_to_disk(str(folder))
    return str(folder)


MAPPING = "id:sku;text_en:desc_en;text_de:desc_de;image_features:feats"


def test_image_text_loader_maps_columns_and_validates(tmp_path):
    source = saved_dataset(tmp_path / "ok")
    loaded = ImageTextLoader("image-text").load(source, {"columns": MAPPING})
    assert (
        set(loaded.data.column_names) == {"id", "text_en", "text_de", "image_features"}
        and loaded.identity["split"] == "test"
    )
    assert image_features("x", loaded.data).shape == (6, 3)
    ikea_view = IkeaLoader("ikea").load(
        source, {"src": "en", "tgt": "de", "columns": MAPPING}
    )  # same path through ikea
    assert ikea_view.data["id"] == loaded.data["id"]


@pytest.mark.parametrize(
    ("columns", "message"),
    [
        ({"sku": ["p0", "p1", "p2", "p1", "p4", "p5"]}, r"row 4, field 'id': duplicate id 'p1' \(first at row 2\)"),
        ({"desc_de": ["a", "b", "c", "  ", "e", "f"]}, r"row 4, field 'text_de': empty text"),
        (
            {"feats": [[0.0, 1.0, 2.0]] * 4 + [[0.0, float("inf"), 1.0], [1.0, 1.0, 1.0]]},
            r"row 5, field 'image_features': non-finite",
        ),
        (
            {"feats": [[0.0, 1.0, 2.0]] * 4 + [[0.0, 1.0], [1.0, 1.0, 1.0]]},
            r"row 5, field 'image_features': image feature vectors differ in length",
        ),
    ],
)
def test_image_text_validation_errors(tmp_path, columns, message):
    source = saved_dataset(tmp_path / "bad", **columns)
    with pytest.raises(DataError, match=message):
        ImageTextLoader("image-text").load(source, {"columns": MAPPING})


def test_image_text_argument_errors(tmp_path):
    source = saved_dataset(tmp_path / "ok")
    with pytest.raises(DataError, match=r"missing column\(s\) id, text_en, text_de"):
        ImageTextLoader("image-text").load(source, {})
    with pytest.raises(DataError, match=r"names column.* nothing|lacks"):
        ImageTextLoader("image-text").load(source, {"columns": "id:nothing"})
    with pytest.raises(HarnessError, match="for raw folders use dataset=ikea"):
        ImageTextLoader("image-text").load(str(tmp_path), {})
    with pytest.raises(HarnessError, match="malformed columns"):
        parse_columns("id-sku")
    assert parse_columns(" id : sku ; text_en:d ") == {"sku": "id", "d": "text_en"}
