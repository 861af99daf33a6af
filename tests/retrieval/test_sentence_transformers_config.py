"""Reading a sentence-transformers folder's JSON files: the layouts it needs, and one clear error for any other."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness_models.encoders.sentence_transformers_config import read_config


def folder(tmp_path: Path, files: dict[str, object]) -> str:
    """A folder holding each (relative path -> JSON value) file."""
    for name, value in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(json.dumps(value), encoding="utf-8")
    return str(tmp_path)


MODULES = [
    {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
]


def test_a_folder_without_modules_json_is_a_plain_model(tmp_path):
    assert read_config(folder(tmp_path, {"config.json": {}})) is None


def test_absent_settings_files_leave_the_defaults(tmp_path):
    source = folder(tmp_path, {"modules.json": MODULES, "1_Pooling/config.json": {"pooling_mode": "max"}})
    config = read_config(source)
    assert config is not None
    assert (config.pooling, config.max_seq_length, config.do_lower_case) == ("max", None, False)


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"modules.json": {"0": "Transformer"}}, "modules.json must hold a list of JSON objects"),
        ({"modules.json": ["sentence_transformers.models.Transformer"]}, "modules.json must hold a list of JSON"),
        ({"modules.json": MODULES, "sentence_bert_config.json": [256]}, "sentence_bert_config.json must hold a JSON"),
        ({"modules.json": MODULES, "1_Pooling/config.json": "mean"}, "1_Pooling/config.json must hold a JSON object"),
    ],
)
def test_a_json_file_of_the_wrong_kind_is_named(tmp_path, files, message):
    with pytest.raises(HarnessError, match=message):
        read_config(folder(tmp_path, files))
