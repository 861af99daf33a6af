"""Local table files (issue 35): a YAML preset over a JSONL, CSV, TSV or Parquet file needs no Python, runs from
another working directory, and a preset of a preset inherits everything it does not set."""

from __future__ import annotations

import csv
import json
import os

import pytest
from fixtures.registries import project_entry_points

import harness
import harness.plugins.registry
from harness.cli import main
from harness.cli.describe import _network_needs
from harness.errors import DataError, HarnessError
from harness.plugins.registry import build_registry
from harness.run.data import read_rows
from harness.run.files import FilesLoader
from harness.run.presets import PresetError, read_presets

ROWS = [
    {"sku": "a1", "en": "red box", "de": "rote Kiste", "feat": [1.0, 0.0]},
    {"sku": "b2", "en": "blue cup", "de": "blaue Tasse", "feat": [0.0, 1.0]},
    {"sku": "c3", "en": "green pen", "de": "gruener Stift", "feat": [0.5, 0.5]},
]


@pytest.fixture(autouse=True)
def project(monkeypatch):
    """The project's registry, fresh: presets included by one test are not another's."""
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", build_registry(project_entry_points()))


def _jsonl(path, rows=ROWS):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _table(path, delimiter):
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, ["sku", "en", "de"], delimiter=delimiter)
        writer.writeheader()
        writer.writerows({k: row[k] for k in ("sku", "en", "de")} for row in ROWS)
    return path


def test_the_four_formats_read_the_same_rows(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = [{k: row[k] for k in ("sku", "en", "de")} for row in ROWS]
    pq.write_table(pa.Table.from_pylist(texts), tmp_path / "t.parquet")
    found = [
        read_rows(path)
        for path in (
            _jsonl(tmp_path / "t.jsonl", texts),
            _table(tmp_path / "t.csv", ","),
            _table(tmp_path / "t.tsv", "\t"),
            tmp_path / "t.parquet",
        )
    ]
    assert all(rows == texts for rows in found)


@pytest.mark.parametrize(
    ("text", "row", "field", "problem"),
    [
        ('{"a": 1}\n{"b": 2}\n', 2, "a", "no value"),
        ('{"a": 1}\n{"a": 2, "c": 3}\n', 2, "c", "a column the first row does not have"),
        ('{"a": 1}\n[1]\n', 2, None, "expected a JSON object"),
        ('{"a": 1}\n{"a": NaN}\n', 2, None, "not valid JSON"),
    ],
)
def test_a_bad_row_names_the_file_the_row_and_the_field(tmp_path, text, row, field, problem):
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(DataError) as caught:
        read_rows(path)
    assert str(caught.value).startswith(f"{path}, row {row}" + (f", field {field!r}" if field else "") + ":")
    assert problem in str(caught.value)


def test_the_files_loader_renames_columns_and_reads_image_paths_inside_the_file_s_folder(tmp_path):
    folder = tmp_path / "set"
    (folder / "img").mkdir(parents=True)
    for name in ("a.png", "b.png"):
        (folder / "img" / name).write_bytes(b"x")
    rows = [{"key": "1", "text": "t1", "picture": "img/a.png"}, {"key": "2", "text": "t2", "picture": "img/b.png"}]
    path = _jsonl(folder / "pairs.jsonl", rows)
    args = {"split": "test", "columns": "id:key;image:picture", "image_column": "image"}
    loaded = FilesLoader("files").load(str(path), args)
    assert loaded.data.column_names == ["id", "text", "image"]
    assert loaded.data["image"] == [str((folder / "img" / n).resolve()) for n in ("a.png", "b.png")]
    assert loaded.identity["revision"].startswith("sha256:") and loaded.identity["size"] == 2
    outside = tmp_path / "outside.png"
    outside.write_bytes(b"x")
    os.symlink(outside, folder / "img" / "link.png")
    for bad, why in (("../outside.png", "outside"), ("img/link.png", "symbolic link"), ("img/none.png", "not exist")):
        _jsonl(folder / "bad.jsonl", [{"key": "1", "text": "t", "picture": bad}])
        with pytest.raises(DataError, match=rf"bad\.jsonl, row 1, field 'image': .*{why}"):
            FilesLoader("files").load(str(folder / "bad.jsonl"), args)
    with pytest.raises(HarnessError, match=r"reads a local \.jsonl"):
        FilesLoader("files").load(str(folder), args)


def _preset_folder(root):
    _jsonl(root / "data" / "pairs.jsonl")
    (root / "pairs.yaml").write_text(
        "presets:\n"
        "  - name: my_pairs_xlr\n"
        "    base: xlr\n"
        "    languages: [en, de]\n"
        "    description: my pairs, en->de retrieval\n"
        "    dataset:\n"
        "      loader: image-text\n"
        "      source: data/pairs.jsonl\n"
        "      columns: {id: sku, text_en: en, text_de: de, image_features: feat}\n"
        "    args: {src: en, tgt: de, k: 1}\n"
        "  - name: my_pairs_xlr_k2\n"
        "    base: my_pairs_xlr\n"
        "    args: {k: 2}\n",
        encoding="utf-8",
    )
    return root


def test_a_preset_over_a_local_jsonl_runs_from_another_working_directory(tmp_path, monkeypatch, fresh_cache):
    presets = _preset_folder(tmp_path / "mine")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    argv = ["run", "--include-path", str(presets), "--model", "random-encoder", "--seed", "0", "--output", "out"]
    assert main([*argv, "--tasks", "my_pairs_xlr,my_pairs_xlr_k2"]) == 0
    first, second = harness.read_records(elsewhere / "out" / "results.jsonl")[0]
    assert first.dataset["source"] == str(presets / "data" / "pairs.jsonl") == second.dataset["source"]
    assert first.dataset["loader"] == "image-text" and first.dataset["size"] == 3
    assert (first.task_args["k"], second.task_args["k"]) == (1, 2)  # the preset of a preset keeps the rest
    assert (second.family, second.role) == ("retrieval", "xlr")
    assert second.arg_meanings["tgt"] == "lang.target" and second.task_args["columns"] == first.task_args["columns"]


def test_a_preset_of_a_preset_inherits_languages_and_describe_tells_a_local_source(tmp_path, capsys):
    presets = _preset_folder(tmp_path / "mine")
    assert main(["list", "tasks", "--include-path", str(presets), "--lang", "de"]) == 0
    listed = capsys.readouterr().out
    assert "my_pairs_xlr_k2" in listed and "my pairs, en->de retrieval" in listed
    assert main(["describe", "my_pairs_xlr_k2", "--include-path", str(presets)]) == 0
    described = capsys.readouterr().out
    assert "source data/pairs.jsonl (local)" in described and "network" not in described
    [hub] = read_presets(_write(tmp_path / "hub" / "h.yaml", "source: some-org/some-set"))
    assert hub.source_kind() == "hub" and _network_needs(hub)[0].startswith("network (the Hub dataset some-org")
    [local] = read_presets(presets / "pairs.yaml")[:1]
    assert local.source_kind() == "local" and _network_needs(local) == []


def _write(path, dataset):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"name: p\nbase: xlr\ndataset:\n  loader: image-text\n  {dataset}\n", encoding="utf-8")
    return path


def test_a_relative_source_that_is_a_symbolic_link_out_of_the_folder_is_refused(tmp_path):
    data = _jsonl(tmp_path / "outside" / "pairs.jsonl")
    path = _write(tmp_path / "mine" / "p.yaml", "source: link.jsonl")
    os.symlink(data, tmp_path / "mine" / "link.jsonl")
    [preset] = read_presets(path)
    with pytest.raises(PresetError) as caught:
        preset.resolved_source()
    assert str(caught.value).startswith(f"{path}, line 5, key 'dataset.source': 'link.jsonl' is a symbolic link to")
    assert "outside the preset's folder" in str(caught.value)
