"""Validated reading of raw layouts and of save_to_disk datasets."""

from __future__ import annotations

import re

import pytest

from harness.errors import DataError, HarnessError
from harness.run.data import (
    check_nonempty,
    files_revision,
    is_hub_id,
    load_hf_dataset,
    read_aligned,
    read_lines,
    require_columns,
    uses_hf_dataset,
)


def test_read_lines_endings(tmp_path):
    path = tmp_path / "x.en"
    path.write_bytes(b"one\r\ntwo\nthree")  # CRLF, LF, and a last line without newline
    assert read_lines(path) == ["one", "two", "three"]
    path.write_bytes(b"one\n\n")
    assert read_lines(path) == ["one", ""]
    path.write_bytes(b"")
    assert read_lines(path) == []


def test_read_lines_drops_a_byte_order_mark(tmp_path):
    path = tmp_path / "bom.en"
    path.write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")  # as Windows Notepad saves UTF-8
    assert read_lines(path) == ["one", "two"]
    path.write_bytes(b"one\n\xef\xbb\xbftwo\n")  # at the start of any line (files joined with cat), issue 23
    assert read_lines(path) == ["one", "two"]
    path.write_bytes(b"\xef\xbb\xbf")
    assert read_lines(path) == []


def test_read_lines_errors_name_file_and_row(tmp_path):
    with pytest.raises(DataError, match=re.escape("missing.en: file not found")):
        read_lines(tmp_path / "missing.en")
    bad = tmp_path / "bad.de"
    bad.write_bytes("gut\nschön\n".encode() + b"\xff\xfe\n")
    with pytest.raises(DataError, match=r"bad.de, row 3: is not valid UTF-8"):
        read_lines(bad)


def test_read_aligned_names_counts(tmp_path):
    (tmp_path / "a").write_text("1\n2\n")
    (tmp_path / "b").write_text("1\n")
    with pytest.raises(DataError) as info:
        read_aligned({"a": tmp_path / "a", "b": tmp_path / "b"})
    assert "a has 2 lines" in str(info.value) and "b has 1 lines" in str(info.value)


def test_check_nonempty():
    check_nonempty("f", "text", ["a", "b"])
    with pytest.raises(DataError, match="f, row 3, field 'text': empty text"):
        check_nonempty("f", "text", ["a", "b", "\t"])


def test_files_revision_tracks_content(tmp_path):
    (tmp_path / "a").write_text("x")
    first = files_revision([tmp_path / "a"])
    assert first == files_revision([tmp_path / "a"]) and first.startswith("sha256:")
    (tmp_path / "a").write_text("y")
    assert files_revision([tmp_path / "a"]) != first


def test_hub_ids_and_folders(tmp_path):
    assert is_hub_id("org/name") and is_hub_id("name") and not is_hub_id("../x/y") and not is_hub_id(str(tmp_path))
    assert uses_hf_dataset("org/name") and not uses_hf_dataset("../missing/dir") and not uses_hf_dataset(str(tmp_path))


def test_save_to_disk_round_trip(tmp_path):
    import datasets

    data = datasets.Dataset.from_dict({"id": ["1", "2"], "text_en": ["a", "b"]})
    datasets.DatasetDict({"test": data}).save_to_disk(tmp_path / "dd")
    data.save_to_disk(tmp_path / "d")
    loaded = load_hf_dataset(str(tmp_path / "d"), "test")
    assert loaded.data["text_en"] == ["a", "b"] and loaded.identity["size"] == 2 and loaded.identity["revision"]
    assert uses_hf_dataset(str(tmp_path / "d"))
    assert load_hf_dataset(str(tmp_path / "dd"), "test").data["id"] == ["1", "2"]
    with pytest.raises(DataError, match="has no split 'val'"):
        load_hf_dataset(str(tmp_path / "dd"), "val")
    with pytest.raises(DataError, match=r"missing column\(s\) text_de"):
        require_columns("src", loaded.data, ["text_en", "text_de"])
    with pytest.raises(HarnessError, match="neither a raw-layout folder"):
        load_hf_dataset(str(tmp_path), "test")
