"""Model-free tasks (issue 35): ``needs_model = False`` runs once per configuration without ``--model``, as the
stand-in model ``reference`` (``model.kind == "reference"``), and is not recomputed for each model."""

from __future__ import annotations

import json
import textwrap
from importlib.metadata import EntryPoint

import pytest
from fixtures.registries import project_entry_points

import harness
import harness.plugins.registry
from harness.cli import main
from harness.plugins.registry import build_registry
from harness.run.reference import is_reference

PLUGIN = '''
from harness import Metric, Param, Task, TaskOutput, hookimpl


class Overlap(Task):
    """Share of items whose two texts have the same length: needs no model (a reference row)."""

    needs_model = False
    dataset = "files"
    main_metric = "same_length"
    metrics = (Metric("same_length"),)
    params = {"scale": Param(1.0, "multiplies the share")}

    def evaluate(self, data, model, ctx):
        same = [len(a) == len(b) for a, b in zip(data["a"], data["b"])]
        return TaskOutput([{"same_length": self.args["scale"] * sum(same) / len(same)}])


@hookimpl
def register_tasks(register):
    register("overlap", "free_plugin:Overlap", "Same-length share of the pairs (model-free).")
'''


@pytest.fixture
def free(tmp_path, monkeypatch, fresh_cache):
    (tmp_path / "free_plugin.py").write_text(textwrap.dedent(PLUGIN))
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = build_registry([*project_entry_points(), EntryPoint("free-plugin", "free_plugin", "harness")])
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", registry)
    rows = [{"a": "ab", "b": "cd"}, {"a": "abc", "b": "d"}, {"a": "x", "b": "y"}, {"a": "xyz", "b": "xy"}]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_model_free_task_runs_without_a_model_as_the_reference(free, tmp_path):
    out = tmp_path / "out"
    assert main(["run", "--tasks", "overlap", "--data-dir", str(free), "--output", str(out)]) == 0
    [line] = _lines(out / "results.jsonl")
    assert line["metrics"]["same_length"] == 0.5  # ab/cd and x/y of four pairs
    assert (line["model"]["name"], line["model"]["kind"]) == ("reference", "reference") and is_reference(line["model"])


def test_with_a_model_it_runs_once_beside_the_model_s_tasks(free, tmp_path, capsys):
    out = tmp_path / "out"
    common = ["--data-dir", str(free), "--output", str(out), "--task-args", "scale=2"]
    assert main(["run", "--tasks", "overlap", *common]) == 0
    # another run names a model: the model-free line of the same configuration is already there, not recomputed
    assert main(["run", "--tasks", "overlap", "--model", "random-encoder", *common]) == 0
    assert "skipped overlap: already in the results" in capsys.readouterr().err
    assert [line["model"]["name"] for line in _lines(out / "results.jsonl")] == ["reference"]
    assert _lines(out / "results.jsonl")[0]["metrics"]["same_length"] == 1.0


def test_mixed_tasks_run_the_model_free_one_under_the_reference(free, tmp_path):
    (tmp_path / "p.yaml").write_text(f"name: my_overlap\nbase: overlap\ndataset: {{loader: files, source: {free}}}\n")
    records = harness.evaluate(
        ["xlr", "my_overlap"],
        "random-encoder",
        include_path=str(tmp_path),
        output=str(tmp_path / "mixed"),
        seed=0,
        task_args={"xlr.size": 30, "my_overlap.scale": 4},  # scoped arguments reach their task in either part
    )
    assert [(r.task, r.model["name"]) for r in records] == [("xlr", "random-encoder"), ("my_overlap", "reference")]
    assert records[1].metrics["same_length"] == 2.0 and records[0].dataset["size"] == 30


def test_a_task_that_needs_a_model_says_so_without_one(free, tmp_path, capsys):
    assert main(["run", "--tasks", "xlr", "--output", str(tmp_path / "o")]) == 2
    assert "task 'xlr' needs a model: give --model" in capsys.readouterr().err
