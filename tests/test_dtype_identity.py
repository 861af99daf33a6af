"""A model run in another dtype (``dtype=int8`` or ``bfloat16`` against float32) gives other numbers, so its results
lines have their own signature and label: a resumed run or a suite never takes one for the other, and a board
never lets one supersede the other. float32 lines, and those of weights stored in another format, keep the
signatures they had."""

from __future__ import annotations

from pathlib import Path

import pytest
from leaderboard.builders import record
from tiny_models import tiny_bert

import harness
from harness.leaderboard.merge import merge, model_labels
from harness.results.load import Entry
from harness.results.records import read_records
from harness.results.signature import ModelPart, identifying_args
from harness.run.runner import Skipped


def test_identifying_args_add_a_dtype_other_than_float32_only():
    plain = {"name": "minilm", "args": {"layer": 4}}
    assert identifying_args(plain) == identifying_args({**plain, "dtype": "float32"}) == {"layer": 4}
    assert identifying_args({**plain, "dtype": "q4_0"}) == {"layer": 4}  # the weights' own format: their revision
    assert identifying_args({**plain, "dtype": "int8"}) == {"layer": 4, "dtype": "int8"}
    assert identifying_args({"name": "e5", "dtype": "bfloat16"}) == {"dtype": "bfloat16"}
    float32 = ModelPart.of("model", {**plain, "dtype": "float32"})
    assert float32 == ModelPart.of("model", plain)  # float32 lines keep their signatures
    assert ModelPart.of("model", {**plain, "dtype": "int8"}).args_digest != float32.args_digest


def test_a_board_shows_both_dtypes_of_a_model_and_supersedes_neither(tmp_path):
    older, newer = record("xlr", "minilm", 0.55), record("xlr", "minilm", 0.54, started="2026-02-01T00:00:00+00:00")
    newer.model = {**newer.model, "dtype": "int8"}
    board = merge([Entry(r, tmp_path / "results.jsonl") for r in (older, newer)])
    assert [r.superseded for r in board.results] == [False, False]
    assert sorted(board.labels.values()) == ["minilm(dtype=float32)", "minilm(dtype=int8)"]
    assert model_labels({"a": older.model}) == {"a": "minilm"}


@pytest.fixture(scope="module")
def bert(tmp_path_factory) -> Path:
    return tiny_bert(tmp_path_factory.mktemp("bert"), layers=2)


def test_a_resumed_run_in_another_dtype_runs_and_writes_its_own_line(bert, tmp_path):
    common = {"task_args": {"size": "24", "n": "16"}, "output": tmp_path / "out", "resume": True, "progress": False}
    args = {"pretrained": str(bert)}
    (first,) = harness.evaluate("xlr", "hf-text-encoder", model_args=args, **common)
    (again,) = harness.evaluate("xlr", "hf-text-encoder", model_args=args, **common)
    assert isinstance(again, Skipped) and again.signature == first.signature  # the same run: resumed
    (half,) = harness.evaluate("xlr", "hf-text-encoder", model_args={**args, "dtype": "bfloat16"}, **common)
    assert not isinstance(half, Skipped) and half.model["dtype"] == "bfloat16"  # another run: it runs
    assert half.signature != first.signature
    lines = read_records(tmp_path / "out" / "results.jsonl")[0]
    assert [line.model["dtype"] for line in lines] == ["float32", "bfloat16"]


def test_a_suite_tells_an_int8_cell_from_the_float32_line_the_results_hold():
    from harness.suite.grid import record_configuration

    float32 = record("xlr", "minilm", 0.55)
    float32.model = {**float32.model, "dtype": "float32"}
    int8 = record("xlr", "minilm", 0.54)
    int8.model = {**int8.model, "dtype": "int8"}
    assert record_configuration(float32) != record_configuration(int8)
    assert record_configuration(float32) == record_configuration(record("xlr", "minilm", 0.55))  # as before
