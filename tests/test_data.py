"""Validated reading of raw layouts and of save_to_disk datasets."""

from __future__ import annotations

import re

import numpy as np
import pytest

from harness.errors import DataError, HarnessError
from harness.run.data import (
    LazyColumn,
    Table,
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


def squares(calls):
    """A lazy column of squares that records the rows it made."""

    def make(row):
        calls.append(row)
        return row * row

    return LazyColumn(make, range(5))


def test_a_table_gives_columns_rows_and_selections():
    calls, made = [], []

    def features():
        made.append(1)
        return np.arange(10.0).reshape(5, 2)

    table = Table({"id": list("abcde"), "square": squares(calls), "features": features}, 5)
    assert table.column_names == ["id", "square", "features"] and len(table) == 5
    assert calls == [] and made == []  # nothing made before it is read
    picked = table.select([4, 0, 4])
    assert len(picked) == 3 and picked["id"] == ["e", "a", "e"]
    assert list(picked["square"]) == [16, 0, 16] and calls == [4, 0, 4]
    assert picked["features"].tolist() == [[8.0, 9.0], [0.0, 1.0], [8.0, 9.0]]
    assert table["features"].shape == (5, 2) and made == [1]  # made once, for the table and its selections
    row = table[1]
    assert (row["id"], row["square"], row["features"].tolist()) == ("b", 1, [2.0, 3.0]) and len(row) == 3
    assert table.select(np.array([2]))[0]["square"] == 4 and picked.select(range(1, 3))["id"] == ["a", "e"]
    assert table.with_format("numpy") is table
    assert len(table.select([])) == 0 and table.select([])["id"] == []


def test_a_lazy_column_slices_and_takes_without_making():
    calls = []
    column = squares(calls)
    assert len(column[1:4]) == 3 and calls == []
    assert list(column[1:4]) == [1, 4, 9] and column.take(np.array([3, 3]))[1] == 9
    assert column.content_keys() is None


def test_a_lazy_column_gives_the_content_keys_of_its_rows_without_making_them():
    calls = []
    column = LazyColumn(lambda row: calls.append(row), range(4), keys=lambda: ["k0", "k1", "k2", "k3"])
    assert column.content_keys() == ["k0", "k1", "k2", "k3"]
    assert column.take(np.array([2, 0, 2])).content_keys() == ["k2", "k0", "k2"]
    assert column[1:3].content_keys() == ["k1", "k2"]
    table = Table({"image": column}, 4).select([3])
    assert table["image"].content_keys() == ["k3"] and calls == []


def test_a_table_refuses_unequal_columns_missing_names_and_rows_out_of_range():
    with pytest.raises(HarnessError, match="table column 'b' has 2 values, the table 3 rows"):
        Table({"a": [1, 2, 3], "b": [1, 2]}, 3)
    late = Table({"a": [1, 2, 3], "b": lambda: [1]}, 3)
    with pytest.raises(HarnessError, match="table column 'b' has 1 values"):
        late["b"]
    with pytest.raises(KeyError, match=r"no column 'c' \(columns: a, b\)"):
        late["c"]
    with pytest.raises(IndexError, match=r"rows 0\.\.3 of a table of 3 rows"):
        late.select([0, 3])
    with pytest.raises(IndexError, match="row 3 of a table of 3 rows"):
        late[3]
