"""The tutorial's plugin (docs/plugins.md), installed with pip as a user would, then run end to end from the CLI.

It is installed into a temporary folder (``pip install --no-deps --target``) put on ``PYTHONPATH`` of the
``harness`` subprocesses only, so this environment is left as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata

import pytest
import tomllib
from test_docs_plugins import listing


def _pyproject() -> dict:
    return tomllib.loads(listing()["pyproject.toml"])["project"]


@pytest.mark.slow  # builds and installs a wheel, then four harness subprocesses
def test_the_tutorial_plugin_installed_with_pip_runs_end_to_end(tmp_path):
    project = _pyproject()
    package = tmp_path / "package"
    for path, text in listing().items():
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text(text)
    site = tmp_path / "site"
    try:
        metadata.distribution(project["name"])
        installed = True  # already in this environment (the suite must pass that way too): use it as it is
    except metadata.PackageNotFoundError:
        installed = False
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation"]
        subprocess.run([*pip, "--target", str(site), str(package)], check=True, capture_output=True, cwd=tmp_path)
    data = tmp_path / "data" / "multi30k"
    data.mkdir(parents=True)
    (data / "val.en").write_text("alpha one\nbeta two\ngamma three\ndelta beta\n")
    (data / "val.fr").write_text("alpha un\nbeta deux\ngamma trois\nquatre cinq\n")
    plugin = next(iter(project["entry-points"]["harness"]))
    disabled = [name for name in os.environ.get("HARNESS_DISABLE_PLUGINS", "").split(",") if name and name != plugin]
    env = {
        **os.environ,
        "HARNESS_DISABLE_PLUGINS": ",".join(disabled),
        "HARNESS_DATA_DIR": str(tmp_path / "data"),
        "PYTHONPATH": os.pathsep.join(p for p in ("" if installed else str(site), os.environ.get("PYTHONPATH")) if p),
    }

    def harness(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, "-m", "harness", *args], capture_output=True, text=True, env=env, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        return done

    plugins = {row["name"]: row for row in json.loads(harness("plugins").stdout)}
    assert plugins[plugin]["package"] == project["name"] and plugins[plugin]["version"] == project["version"]
    assert "error" not in plugins[plugin]
    listed = harness("list", "tasks", "--family", "toy").stdout
    assert "nearest_translation " in listed and "nearest_translation_en_fr " in listed
    out = tmp_path / "results"
    harness(
        "run", "--tasks", "nearest_translation", "--model", "toy-bow", "--data-dir", str(data),
        "--task-args", "tgt=fr,n=4,split=val", "--seeds", "3", "--output", str(out),
    )  # fmt: skip
    harness("run", "--tasks", "nearest_translation_en_fr", "--model", "toy-bow", "--seed", "0", "--output", str(out))
    first, preset = (json.loads(line) for line in (out / "results.jsonl").read_text().splitlines())
    assert first["per_seed"]["accuracy"] == [0.75, 0.75, 0.75]  # 3 of 4 nearest translations, every seed
    assert first["plugins"] == {project["name"]: project["version"], "xling-harness": first["harness"]["version"]}
    assert preset["task"] == "nearest_translation_en_fr" and preset["metrics"]["accuracy"] == 0.75
    assert preset["dataset"]["source"] == str(data)  # the preset's ${HARNESS_DATA_DIR}/multi30k
