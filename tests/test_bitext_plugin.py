"""The example third-party plugin, installed with pip as a user would, then used through the CLI."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, shared_data

HARNESS = str(Path(sys.executable).with_name("harness"))


@pytest.fixture(scope="module")
def installed_plugin():
    """pip install -e plugins/harness-bitext into this environment, unless it is installed from there already
    (the README's setup does it): reinstalling would hide the plugin's entry points for a moment from the tests
    another pytest-xdist worker runs at the same time."""
    spec = importlib.util.find_spec("harness_bitext")
    if spec is not None and spec.origin is not None and Path(spec.origin).is_relative_to(REPO / "plugins"):
        return True
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "-e",
            str(REPO / "plugins" / "harness-bitext"),
        ],
        check=True,
        capture_output=True,
    )
    return True


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([HARNESS, *args], capture_output=True, text=True, env={**os.environ, **(env or {})})


def test_plugin_is_listed(installed_plugin):
    tasks = cli("list", "tasks")
    assert tasks.returncode == 0 and "bitext_mining" in tasks.stdout
    assert "tfidf-char" in cli("list", "models").stdout
    plugins = {row["name"]: row for row in json.loads(cli("plugins").stdout)}
    assert plugins["bitext"]["package"] == "harness-bitext" and plugins["bitext"]["version"] == "0.1.0"
    assert plugins["bitext"]["tasks"] == ["bitext_mining"] and plugins["bitext"]["models"] == ["tfidf-char"]


@pytest.mark.slow  # a second pytest session in a subprocess
def test_the_plugins_own_test_suite_passes(installed_plugin):
    """The plugin's tests, run as its own package's CI would run them."""
    suite = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            str(REPO / "plugins" / "harness-bitext" / "tests"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO / "plugins" / "harness-bitext",
    )
    assert suite.returncode == 0, suite.stdout[-3000:]
    assert " passed" in suite.stdout.splitlines()[-1]


def test_disabling_the_plugin(installed_plugin):
    listing = cli("list", "tasks", env={"HARNESS_DISABLE_PLUGINS": "bitext"})
    assert listing.returncode == 0 and "bitext_mining" not in listing.stdout


@pytest.mark.real  # the real Multi30K captions, three CLI runs
@pytest.mark.slow
def test_real_multi30k_end_to_end_cache_and_resume(installed_plugin, tmp_path):
    data = shared_data("multi30k")
    env = {"HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    args = [
        "run",
        "--tasks",
        "bitext_mining",
        "--model",
        "tfidf-char",
        "--data-dir",
        str(data),
        "--task-args",
        "src=en,tgt=fr",
    ]
    first = cli(*args, "--output", str(tmp_path / "a"), env=env)
    assert first.returncode == 0, first.stderr
    record = json.loads((tmp_path / "a" / "results.jsonl").read_text())
    assert record["dataset"]["size"] == 1000 and record["task_args"]["src"] == "en"
    # character TF-IDF finds far more translations than chance (1/1000) on real captions
    assert 0.2 < record["metrics"]["accuracy"] < 1.0
    assert record["metrics"]["accuracy_margin"] >= record["metrics"]["accuracy"]
    second = cli(*args, "--output", str(tmp_path / "b"), env=env)
    assert second.returncode == 0 and "encoding texts" not in second.stderr  # entirely from the cache
    assert json.loads((tmp_path / "b" / "results.jsonl").read_text())["metrics"] == record["metrics"]
    resumed = cli(*args, "--output", str(tmp_path / "a"), "--resume", env=env)
    assert "skipped bitext_mining" in resumed.stderr
    assert (tmp_path / "a" / "results.jsonl").read_text().count("\n") == 1
