"""The cross-lingual STS loader: SemEval-2016 layout with detected column order, and saved datasets."""

from __future__ import annotations

import re

import datasets
import pytest
from yisi.helpers import STS_PAIRS, write_sts

from harness.errors import DataError, HarnessError
from harness_tasks.yisi.language import first_column_is
from harness_tasks.yisi.sts_data import StsLoader

ARGS = {"src": "en", "tgt": "es", "set": "all", "split": "test"}


def load(source, **overrides):
    return StsLoader("sts_crosslingual").load(str(source), {**ARGS, **overrides})


def test_column_order_is_detected_per_file(sts_dir):
    loaded = load(sts_dir)
    data = loaded.data
    # sets sorted by name; the pair without gold (multisource line 4) is left out
    assert data["id"] == ["multisource:1", "multisource:2", "multisource:3", "news:1", "news:2", "news:3"]
    by_id = dict(zip(data["id"], zip(data["sentence1"], data["sentence2"], data["score"])))
    assert by_id["news:1"] == STS_PAIRS[0]  # the file had Spanish first: swapped back
    assert by_id["multisource:3"] == STS_PAIRS[5]
    assert loaded.identity["column_order"] == {"multisource": "en-es", "news": "es-en"}
    assert loaded.identity["split"] == "multisource+news" and loaded.identity["revision"].startswith("sha256:")


def test_languages_given_the_other_way_round_swap_the_columns(sts_dir):
    data = load(sts_dir, src="es", tgt="en", set="news").data
    assert data["sentence1"][0] == STS_PAIRS[0][1] and data["sentence2"][0] == STS_PAIRS[0][0]


def test_set_selection(sts_dir):
    assert load(sts_dir, set="news").data["set"] == ["news"] * 3
    assert len(load(sts_dir, set="news+multisource").data) == 6
    with pytest.raises(DataError, match=r"STS\.input\.wiki\.txt: not found \(sets here: multisource, news\)"):
        load(sts_dir, set="wiki")


def test_bad_files_name_file_row_and_field(tmp_path):
    folder = write_sts(tmp_path / "a", {"x": (STS_PAIRS[:3], False)})
    (folder / "STS.gs.x.txt").write_text("5\nfive\n3\n")
    with pytest.raises(DataError, match=r"STS\.gs\.x\.txt, row 2, field 'score': not a number: 'five'"):
        load(folder)
    (folder / "STS.gs.x.txt").write_text("5\n4\n")
    with pytest.raises(DataError, match="not line-aligned"):
        load(folder)
    (folder / "STS.gs.x.txt").write_text("5\n4\n3\n")
    (folder / "STS.input.x.txt").write_text("one\ttwo\nno tab here\nthree\tfour\n")
    with pytest.raises(DataError, match=r"STS\.input\.x\.txt, row 2: expected two tab-separated texts"):
        load(folder)
    (folder / "STS.input.x.txt").write_text("one\ttwo\n \tdos\nthree\tfour\n")
    with pytest.raises(DataError, match=r"row 2, field 'column 1': empty text"):
        load(folder)
    with pytest.raises(DataError, match=re.escape("no STS.input.<set>.txt files")):
        load(write_sts(tmp_path / "empty", {}))


def test_argument_errors(sts_dir):
    with pytest.raises(HarnessError, match="both 'en'"):
        load(sts_dir, tgt="en")
    with pytest.raises(HarnessError, match="needs --data-dir"):
        StsLoader("sts_crosslingual").load(None, ARGS)
    with pytest.raises(HarnessError, match="cannot identify languages"):
        load(sts_dir, tgt="xx")


def test_an_evenly_split_file_is_an_error():
    rows = [
        ("The dog sleeps on the sofa.", "El perro duerme en el sofá."),
        ("El gato come pescado.", "The cat eats fish."),
    ]
    with pytest.raises(DataError, match="cannot tell which column is 'en' and which is 'es'"):
        first_column_is(rows, "en", "es", "file.txt")


def test_saved_dataset_with_sentence1_sentence2_score(tmp_path):
    folder = tmp_path / "saved"
    datasets.Dataset.from_dict(
        {"sentence1": ["a b", "c"], "sentence2": ["x", "y z"], "score": [1.5, 4.0]}
    ).save_to_disk(folder)
    data = load(folder).data
    assert data["id"] == ["1", "2"] and data["score"] == [1.5, 4.0]
    bad = tmp_path / "bad"
    datasets.Dataset.from_dict(
        {"sentence1": ["a", "b"], "sentence2": ["x", "y"], "score": [1.0, float("nan")]}
    ).save_to_disk(bad)
    with pytest.raises(DataError, match="row 2, field 'score': score must be a finite number"):
        load(bad)
    empty = tmp_path / "empty"
    datasets.Dataset.from_dict({"sentence1": ["a", ""], "sentence2": ["x", "y"], "score": [1.0, 2.0]}).save_to_disk(
        empty
    )
    with pytest.raises(DataError, match="row 2, field 'sentence1': empty text"):
        load(empty)


def test_a_set_whose_gold_lines_are_all_empty_is_a_data_error(tmp_path):
    folder = write_sts(tmp_path / "a", {"x": ([(en, es, "") for en, es, _ in STS_PAIRS[:3]], False)})
    with pytest.raises(
        DataError, match=r"STS\.gs\.x\.txt, field 'score': no pair has a gold score: all 3 gold lines are empty"
    ):
        load(folder)
    # beside a set with gold, the empty set is still named (not silently dropped)
    write_sts(folder, {"y": (STS_PAIRS[:3], False)})
    with pytest.raises(DataError, match=r"STS\.gs\.x\.txt"):
        load(folder)
    assert len(load(folder, set="y").data) == 3
    (folder / "STS.input.x.txt").write_text("")
    (folder / "STS.gs.x.txt").write_text("")
    with pytest.raises(DataError, match=r"STS\.input\.x\.txt: has no pairs \(the file is empty\)"):
        load(folder, set="x")


def test_a_dataset_without_rows_is_a_data_error(monkeypatch):
    import harness_tasks.yisi.pairs_data as pairs_data
    from harness.run.data import LoadedData

    empty = datasets.Dataset.from_dict({"sentence1": [], "sentence2": [], "score": []})
    monkeypatch.setattr(pairs_data, "load_hf_dataset", lambda source, split: LoadedData(empty, {"source": source}))
    with pytest.raises(DataError, match="owner/sts: split 'test' has no rows"):
        StsLoader("sts_crosslingual").load("owner/sts", ARGS)
