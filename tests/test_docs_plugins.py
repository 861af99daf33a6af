"""docs/plugins.md's complete plugin listing: written out of the page, registered, and run."""

from __future__ import annotations

import json
import re
import sys
from importlib.metadata import EntryPoint

import pytest
import tomllib
from conftest import REPO
from fixtures.registries import project_entry_points

import harness
import harness.plugins.registry
from harness.cli import main
from harness.plugins.registry import build_registry

DOC = REPO / "docs" / "plugins.md"


def listing() -> dict[str, str]:
    """File path -> content of every code block with a title="..." in the page."""
    return dict(re.findall(r'```\w+ title="([^"]+)"\n(.*?)```', DOC.read_text(), re.S))


@pytest.fixture
def toy(tmp_path, monkeypatch, fresh_cache):
    files = listing()
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("harness_toy")]:
        monkeypatch.delitem(sys.modules, name)
    data = tmp_path / "data" / "multi30k"
    data.mkdir(parents=True)
    # pair 4's source shares "beta" with target 2 and nothing with its own translation: 3 of 4 hits
    (data / "val.en").write_text("alpha one\nbeta two\ngamma three\ndelta beta\n")
    (data / "val.fr").write_text("alpha un\nbeta deux\ngamma trois\nquatre cinq\n")
    monkeypatch.setenv("HARNESS_DATA_DIR", str(tmp_path / "data"))
    entry_points = tomllib.loads(files["pyproject.toml"])["project"]["entry-points"]["harness"]
    plugins = [EntryPoint(name, ref, "harness") for name, ref in entry_points.items()]
    monkeypatch.delenv("HARNESS_DISABLE_PLUGINS", raising=False)  # conftest disables an installed toy by its name
    registry = build_registry([*project_entry_points(), *plugins])  # this project's plugins and the toy, nothing else
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", registry)  # what the CLI sees
    return registry, data


def test_the_listing_has_every_file_of_the_package():
    assert set(listing()) == {
        "pyproject.toml",
        "harness_toy/__init__.py",
        "harness_toy/plugin.py",
        "harness_toy/task.py",
        "harness_toy/adapter.py",
        "harness_toy/family.py",
        "harness_toy/presets/nearest_en_fr.yaml",
    }


def test_the_listed_plugin_registers_and_runs(toy):
    registry, data = toy
    assert registry.plugins["toy"].registered["task"] == ["nearest_translation", "nearest_translation_en_fr"]
    [record] = harness.evaluate(
        "nearest_translation",
        "toy-bow",
        data_dir=str(data),
        task_args="tgt=fr,n=4,split=val",
        seeds=3,
        output=None,
        registry=registry,
    )
    assert record.per_seed["accuracy"] == [0.75, 0.75, 0.75]  # every seed samples all 4 sentences
    assert record.model["revision"] == "bow-1" and record.model["args"] == {"dim": 4096}
    [preset] = harness.evaluate("nearest_translation_en_fr", "toy-bow", seed=0, output=None, registry=registry)
    assert preset.task_args["split"] == "val" and preset.task_args["n"] == 50 and preset.metrics["accuracy"] == 0.75
    assert preset.dataset["source"] == str(data)


def test_the_listed_plugin_imports_only_from_harness():
    imports = {
        module
        for text in listing().values()
        for module in re.findall(r"^(?:from|import) ([\w.]+)", text, re.M)
        if module.split(".")[0] not in ("pathlib", "hashlib", "numpy", "datasets", "harness_toy")
    }
    assert imports == {"harness"}


def test_the_listed_family_is_in_list_run_and_the_leaderboard(toy, tmp_path, capsys):
    """Its task in `list --family`, its metric with an interval and a chance level, its section, table and plot."""
    registry, data = toy
    assert harness.task_membership(registry, "nearest_translation") == harness.Membership("toy", "nearest_translation")
    assert harness.task_membership(registry, "nearest_translation_en_fr") == harness.Membership(
        "toy", "nearest_translation"
    )
    assert main(["list", "tasks", "--family", "toy", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [row["name"] for row in listed] == ["nearest_translation", "nearest_translation_en_fr"]
    results = tmp_path / "results"
    for model in ("toy-bow", "toy-bow:dim=8"):
        name, _, args = model.partition(":")
        argv = ["run", "--tasks", "nearest_translation", "--model", name, "--data-dir", str(data)]
        argv += ["--task-args", "tgt=fr,n=4,split=val", "--seeds", "2", "--output", str(results)]
        assert main(argv + (["--model-args", args] if args else [])) == 0
    capsys.readouterr()
    records, _ = harness.read_records(results / "results.jsonl")
    assert [(r.family, r.role) for r in records] == [("toy", "nearest_translation")] * 2
    record = records[0]
    assert record.metrics["accuracy"] == 0.75
    assert record.metric_info["accuracy"]["display"] == "accuracy@1"
    assert record.metric_info["accuracy"]["chance"] == 0.25  # one of 4 targets
    assert record.metric_info["accuracy"]["higher_is_better"] is True
    assert record.intervals["accuracy"]["low"] <= 0.75 <= record.intervals["accuracy"]["high"]
    board = tmp_path / "board"
    assert main(["leaderboard", str(results), "--output", str(board)]) == 0
    readme = (board / "README.md").read_text()
    assert "Nearest translation" in readme and "Other tasks" not in readme
    assert "Toy: sentences per seed" in readme and "accuracy@1" in readme
    assert any(p.name.startswith("toy_accuracy") for p in (board / "plots").iterdir())
