"""The CoMMuTE loaders: original layout (real and synthetic), validation errors, Hub/disk datasets, extended layout."""

from __future__ import annotations

import re

import pytest
from commute.mmt_builders import MINI, stand_in_images, write_commute
from conftest import shared_data

from harness.errors import DataError, HarnessError
from harness_tasks.commute.data import CommuteExtendedLoader, CommuteLoader


def load(source, images=None, lang="fr", loader=CommuteLoader):
    return loader("commute").load(str(source), {"lang": lang}, images_dir=None if images is None else str(images))


@pytest.mark.real
@pytest.mark.parametrize("lang, tuples", [("fr", 154), ("de", 150), ("cs", 154), ("fr_dev", None)])
def test_real_commute_loads_as_tuples(lang, tuples):
    loaded = load(shared_data("commute"), lang=lang)
    data = loaded.data
    if tuples is not None:
        assert len(data) == tuples
    first = data[0]
    assert first["id"] == "1" and (first["line_a"], first["line_b"]) == (1, 2)
    assert first["source"] and first["target_a"] != first["target_b"]
    assert loaded.identity["revision"].startswith("sha256:") and loaded.identity["split"] == f"en-{lang}"


@pytest.mark.real
def test_the_two_en_fr_pairs_that_are_not_swaps_are_loaded_faithfully():
    data = load(shared_data("commute")).data
    swaps = [row["incorrect_a"] == row["target_b"] and row["incorrect_b"] == row["target_a"] for row in data]
    not_swaps = [row for row, swap in zip(data, swaps) if not swap]
    assert [(row["line_a"], row["line_b"]) for row in not_swaps] == [(23, 24), (99, 100)]
    assert not_swaps[0]["incorrect_b"] == "J'ai du mal à respirer.../J'ai la poitrine lourde..."
    assert (
        not_swaps[1]["incorrect_a"] == "Ne mange pas les arêtes !"
        and not_swaps[1]["target_b"] == "Ne mange pas les arêtes"
    )


def test_synthetic_layout_with_images(mini_commute):
    data_dir, images = mini_commute
    loaded = load(data_dir, images)
    rows = loaded.data.to_list()
    assert [r["id"] for r in rows] == ["1", "2", "3"]
    assert rows[1]["incorrect_a"] == "Ne mange pas les arêtes !" and rows[1]["target_b"] == "Ne mange pas les arêtes"
    assert rows[0]["image_a"] == "rive.jpg" and rows[0]["image_a_path"] == str((images / "rive.jpg").resolve())
    assert loaded.identity["images"] == str(images)
    without = load(data_dir)
    assert "image_a_path" not in without.data.column_names
    assert without.identity["revision"] != loaded.identity["revision"]  # images are part of the revision


def test_the_en_lang_folder_itself_can_be_given(mini_commute):
    data_dir, _ = mini_commute
    assert len(load(data_dir / "en-fr").data) == 3


def test_odd_line_count_is_an_error_naming_the_file(tmp_path):
    write_commute(tmp_path, MINI[:5])
    with pytest.raises(DataError, match=r"src\.en: has 5 lines, an odd number"):
        load(tmp_path)


def test_a_pair_whose_sources_differ_is_an_error_naming_the_lines(tmp_path):
    lines = list(MINI)
    lines[3] = ("Something else.", *lines[3][1:])
    write_commute(tmp_path, lines)
    with pytest.raises(DataError, match=r"row 4, field 'source': lines 3 and 4 form a tuple but their sources differ"):
        load(tmp_path)


def test_identical_correct_translations_and_empty_texts_are_errors(tmp_path):
    lines = list(MINI)
    lines[1] = (lines[1][0], lines[0][1], *lines[1][2:])
    write_commute(tmp_path / "same", lines)
    with pytest.raises(DataError, match=r"row 1, field 'target_b': the two correct translations"):
        load(tmp_path / "same")
    lines = list(MINI)
    lines[2] = (lines[2][0], " ", *lines[2][2:])
    write_commute(tmp_path / "empty", lines)
    with pytest.raises(DataError, match=r"correct\.fr, row 3, field 'correct': empty text"):
        load(tmp_path / "empty")


def test_misaligned_files_are_an_error(tmp_path):
    write_commute(tmp_path)
    path = tmp_path / "en-fr" / "img.order"
    path.write_text("\n".join(path.read_text().split("\n")[:4]))
    with pytest.raises(DataError, match="not line-aligned"):
        load(tmp_path)


def test_every_missing_image_is_named(mini_commute, tmp_path):
    data_dir, _ = mini_commute
    partial = stand_in_images(tmp_path / "partial", ["rive.jpg", "os.jpeg", "grain.jpg"])
    with pytest.raises(
        DataError, match=r"3 image file\(s\) of the dataset are missing: aretes.jpg, banque.png, taupe.jpg"
    ):
        load(data_dir, partial)


def test_missing_language_folder_and_data_dir(mini_commute):
    data_dir, _ = mini_commute
    with pytest.raises(HarnessError, match=r"no folder en-de \(languages here: fr\)"):
        load(data_dir, lang="de")
    with pytest.raises(HarnessError, match="needs --data-dir"):
        CommuteLoader("commute").load(None, {"lang": "fr"})


def test_save_to_disk_round_trip_with_a_lang_column(mini_commute, tmp_path):
    import datasets

    data_dir, images = mini_commute
    rows = load(data_dir).data.to_list()
    table = {key: [r[key] for r in rows] * 2 for key in rows[0]}
    table["lang"] = ["fr"] * 3 + ["de"] * 3
    datasets.DatasetDict({"test": datasets.Dataset.from_dict(table)}).save_to_disk(tmp_path / "saved")
    loaded = load(tmp_path / "saved", images)
    assert len(loaded.data) == 3 and loaded.data[2]["target_a"] == rows[2]["target_a"]
    assert loaded.data[0]["image_b_path"].endswith("banque.png")
    with pytest.raises(DataError, match="has no rows with lang 'cs'"):
        load(tmp_path / "saved", lang="cs")
    datasets.DatasetDict({"test": datasets.Dataset.from_dict({"id": ["1"], "source": ["x"]})}).save_to_disk(
        tmp_path / "bad"
    )
    with pytest.raises(DataError, match="missing column"):
        load(tmp_path / "bad")


def test_extended_layout_lists_the_original_first_then_the_candidates(mini_commute):
    data_dir, images = mini_commute
    stand_in_images(images, ["extended/1/a/x2.jpg", "extended/1/a/x1.png", "extended/1/b/y.jpg", "extended/3/b/z.jpg"])
    (images / "extended" / "1" / "a" / "notes.txt").write_text("not an image")
    loaded = load(data_dir, images, loader=CommuteExtendedLoader)
    rows = loaded.data.to_list()
    assert [p.rsplit("/", 1)[-1] for p in rows[0]["candidates_a"]] == ["rive.jpg", "x1.png", "x2.jpg"]
    assert [p.rsplit("/", 1)[-1] for p in rows[0]["candidates_b"]] == ["banque.png", "y.jpg"]
    assert len(rows[1]["candidates_a"]) == 1 and len(rows[2]["candidates_b"]) == 2
    with pytest.raises(HarnessError, match="needs --images"):
        load(data_dir, loader=CommuteExtendedLoader)


def test_extended_layout_needs_the_extended_folder(mini_commute):
    data_dir, images = mini_commute
    with pytest.raises(HarnessError, match="extended does not exist"):
        load(data_dir, images, loader=CommuteExtendedLoader)


def with_image(line: int, name: str) -> list[tuple[str, str, str, str]]:
    """MINI with the image name of 1-based ``line`` replaced."""
    lines = list(MINI)
    lines[line - 1] = (*lines[line - 1][:3], name)
    return lines


@pytest.mark.parametrize("images_given", [True, False])
def test_image_names_that_leave_the_images_folder_are_data_errors(tmp_path, images_given):
    secret = stand_in_images(tmp_path / "outside", ["secret.png"]) / "secret.png"  # a real image outside --images
    images = stand_in_images(tmp_path / "images" / "inner", [line[3] for line in MINI])
    cases = [
        (4, "../../outside/secret.png", "goes up with '..'"),
        (4, "../../../../etc/passwd", "goes up with '..'"),
        (1, str(secret), "is an absolute path"),
        (5, "sub/../../outside/secret.png", "goes up with '..'"),
        (2, "..\\..\\outside\\secret.png", "goes up with '..'"),
        (6, "C:\\Windows\\win.ini", "is an absolute path"),
    ]
    for line, name, problem in cases:
        data_dir = write_commute(tmp_path / f"data{line}{len(name)}", with_image(line, name))
        expected = f"img.order, row {line}, field 'image': image name {name!r} {problem}: image names must resolve inside --images"
        with pytest.raises(DataError, match=re.escape(expected)):
            load(data_dir, images if images_given else None)


def test_names_inside_the_images_folder_still_load(tmp_path):
    names = ["sub/rive.jpg", "..banque.png", "./os.jpeg", "aretes.jpg", "grain.jpg", "taupe.jpg"]
    images = stand_in_images(tmp_path / "images", names)
    lines = [(*line[:3], name) for line, name in zip(MINI, names)]
    data = load(write_commute(tmp_path / "data", lines), images).data
    assert data[0]["image_a_path"] == str((images / "sub" / "rive.jpg").resolve())
    assert data[0]["image_b_path"] == str((images / "..banque.png").resolve())


def test_hub_image_names_and_extended_ids_that_leave_the_folder_are_data_errors(mini_commute, tmp_path):
    import datasets

    data_dir, images = mini_commute
    rows = load(data_dir).data.to_list()
    table = {key: [r[key] for r in rows] for key in rows[0]}
    table["image_b"][1] = "/etc/passwd"
    datasets.DatasetDict({"test": datasets.Dataset.from_dict(table)}).save_to_disk(tmp_path / "names")
    with pytest.raises(DataError, match=r"names, row 2, field 'image_b': image name '/etc/passwd' is an absolute path"):
        load(tmp_path / "names", images)
    table = {key: [r[key] for r in rows] for key in rows[0]}
    table["id"][2] = "../3"
    datasets.DatasetDict({"test": datasets.Dataset.from_dict(table)}).save_to_disk(tmp_path / "ids")
    stand_in_images(images, ["extended/1/a/x.jpg"])
    with pytest.raises(DataError, match=r"ids, row 3, field 'id': tuple id '\.\./3' is not a plain folder name"):
        load(tmp_path / "ids", images, loader=CommuteExtendedLoader)
