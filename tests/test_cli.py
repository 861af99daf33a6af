"""The command line: run, list, plugins, plugin commands, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.plugins.fake import CountingEncoder, fake_data
from fixtures.registries import fixture_registry

import harness.plugins.registry
from harness.cli import main


@pytest.fixture(autouse=True)
def fake_plugins(monkeypatch, fresh_cache):
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", fixture_registry("fake", "commands"))
    CountingEncoder.calls.clear()


@pytest.fixture
def data_dir(tmp_path):
    return str(fake_data(tmp_path / "data", ["a b", "c d", "e f"], ["x y", "z w", "u v"]))


def test_run_prints_a_plain_table_and_writes_results(data_dir, tmp_path, capsys):
    code = main(
        [
            "run",
            "--tasks",
            "mean_similarity",
            "--model",
            "counting-encoder",
            "--data-dir",
            data_dir,
            "--output",
            str(tmp_path / "out"),
            "--seeds",
            "2",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0].split("\t") == ["task", "metric", "value", "95% CI (items)", "chance", "n", "seeds", "time"]
    assert lines[1].startswith("mean_similarity\tsimilarity *\t") and "\t3\t2\t" in lines[1]
    assert "encoding texts" not in err  # a loop done within a second prints no progress (tests/test_progress.py)
    assert (tmp_path / "out" / "results.jsonl").read_text().count("\n") == 1


def test_resume_reports_skip(data_dir, tmp_path, capsys):
    args = [
        "run",
        "--tasks",
        "mean_similarity",
        "--model",
        "counting-encoder",
        "--data-dir",
        data_dir,
        "--output",
        str(tmp_path),
    ]
    assert main(args) == 0
    capsys.readouterr()
    assert main([*args, "--resume"]) == 0
    assert "skipped mean_similarity: already in the results" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["run", "--tasks", "mean_similarty", "--model", "counting-encoder"],
            "unknown task 'mean_similarty'; did you mean 'mean_similarity'?",
        ),
        (["run", "--tasks", "mean_similarity", "--model", "countingencoder"], "did you mean 'counting-encoder'"),
        (
            ["run", "--tasks", "needs_scorer", "--model", "counting-encoder"],
            "cannot serve task 'needs_scorer': it is not a translation scorer",
        ),
        (
            ["run", "--tasks", "mean_similarity", "--model", "counting-encoder", "--model-args", "dim"],
            "malformed --model-args 'dim'",
        ),
        (
            ["run", "--tasks", "mean_similarity", "--model", "counting-encoder", "--data-dir", "/nonexistent/x"],
            "data folder '/nonexistent/x' does not exist",
        ),
        (["list", "gadgets"], "unknown listing 'gadgets'"),
    ],
)
def test_errors_are_one_line_with_exit_code_2(argv, message, tmp_path, capsys):
    assert main(argv + (["--output", str(tmp_path)] if argv[0] == "run" else [])) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("harness: error: ") and message in err[0]


def test_debug_shows_the_traceback(capsys):
    assert main(["--debug", "run", "--tasks", "nope", "--model", "counting-encoder"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_list_kinds(capsys):
    assert main(["list", "tasks"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[0] == "mean_similarity" and "Mean cosine" in out[0]
    assert main(["list", "models"]) == 0 and "counting-encoder-dim2" in capsys.readouterr().out
    assert main(["list", "datasets"]) == 0 and "line_pairs" in capsys.readouterr().out
    assert main(["list", "commands"]) == 0 and "greet" in capsys.readouterr().out
    assert main(["list", "family"]) == 0 and main(["list", "families"]) == 0  # singular or plural, for every kind


def test_plugins_is_json(capsys):
    assert main(["plugins"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["fake"]["tasks"] == ["mean_similarity", "needs_scorer"]
    assert set(rows["fake"]) >= {
        "tasks",
        "models",
        "datasets",
        "commands",
        "families",
    }  # plurals as the CLI spells them
    assert rows["commands"]["commands"] == ["greet"]


def test_plugin_command_runs(capsys):
    assert main(["greet", "world"]) == 0
    assert capsys.readouterr().out == "hello world\n"


def test_installed_console_script_and_module_entry():
    script = Path(sys.executable).with_name("harness")
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("xling-harness ")
    listing = subprocess.run(
        [sys.executable, "-m", "harness", "list", "datasets"], capture_output=True, text=True, check=True
    )
    assert "multi30k" in listing.stdout


def _preset_folder(tmp_path):
    folder = tmp_path / "presets"
    folder.mkdir()
    (folder / "p.yaml").write_text(
        "presets:\n"
        "  - {name: toy_xx_yy, base: mean_similarity, family: toy, languages: [xx, yy], dataset: {loader: line_pairs}}\n"
        "  - {name: toy_xx_zz, base: mean_similarity, family: toy, languages: [xx, zz], dataset: {loader: line_pairs},"
        " args: {scale: 2.5}}\n"
    )
    return str(folder)


def test_list_tasks_filters_by_family_and_language_as_json(tmp_path, capsys):
    folder = _preset_folder(tmp_path)
    assert main(["list", "tasks", "--include-path", folder, "--family", "toy", "--lang", "zz", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["name"], r["family"], r["languages"]) for r in rows] == [("toy_xx_zz", "toy", ["xx", "zz"])]
    assert main(["list", "tasks", "--include-path", folder, "--lang", "xx"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert [n for n in listed if n.startswith("toy")] == ["toy_xx_yy", "toy_xx_zz"]
    assert "mean_similarity" in listed  # a task whose languages are arguments takes any language
    assert main(["list", "tasks", "--family", "nothing-here", "--json"]) == 2
    assert "unknown family 'nothing-here'" in capsys.readouterr().err


def test_list_models_marks_availability():
    from harness.cli.describe import model_availability
    from harness.plugins.registry import Registration

    def reg(**info):
        return Registration("model", "m", "x:y", "", "p", info)

    assert model_availability(reg(preset={"pretrained": "google-bert/bert-base-multilingual-cased"})) == "hub"
    assert model_availability(reg(default_for=("text_encoder",))) == "source"
    assert model_availability(reg()) == "offline"
    assert model_availability(reg(preset={"base": "e5-small", "noise": 0.04})) == "offline"


def test_describe_a_preset_task_shows_parameters_types_defaults_and_the_dataset(tmp_path, capsys):
    assert main(["describe", "toy_xx_zz", "--include-path", _preset_folder(tmp_path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    params = {p["name"]: p for p in info["params"]}
    assert info["kind"] == "task" and info["requires"] == ["text_encoder"] and info["seeds"] == 3
    assert params["scale"]["type"] == "float" and params["scale"]["default"] == 2.5  # the preset's value
    assert params["side_a"]["default"] == "a"
    assert info["dataset"]["loader"] == "line_pairs" and [p["name"] for p in info["dataset"]["params"]] == [
        "side_a",
        "skip",
    ]
    assert info["preset"]["base"] == "mean_similarity"


def test_describe_a_model_and_an_unknown_name(capsys):
    assert main(["describe", "counting-encoder-dim2"]) == 0
    out = capsys.readouterr().out
    assert "capabilities: text_encoder" in out and "dim: int = 8  vector size" in out and "availability: offline" in out
    assert main(["describe", "counting-encodr"]) == 2
    assert "did you mean 'counting-encoder'" in capsys.readouterr().err
