"""docs/plugins.md's complete plugin listing: written out of the page, registered, and run."""

from __future__ import annotations

import re
import sys
from importlib import metadata
from importlib.metadata import EntryPoint

import pytest
import tomllib
from conftest import REPO

import harness
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
    return build_registry([*metadata.entry_points(group="harness"), *plugins]), data


def test_the_listing_has_every_file_of_the_package():
    assert set(listing()) == {
        "pyproject.toml",
        "harness_toy/__init__.py",
        "harness_toy/plugin.py",
        "harness_toy/task.py",
        "harness_toy/adapter.py",
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
