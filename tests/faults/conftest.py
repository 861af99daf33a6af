"""Fixtures of the fault-injection suite: a registry of test plugins, a small data set, a CLI runner.

Each test injects one fault and asserts the exit code, the message, and that nothing already
computed (earlier results lines, cached model outputs) was lost.
"""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from fixtures.plugins.fake import CountingEncoder, fake_data

import harness.plugins.registry
from harness.cli import main
from harness.plugins.registry import Registry, build_registry

A = ["the cat", "a dog", "the bird", "one fish"]
B = ["le chat", "un chien", "l'oiseau", "un poisson"]


def fault_registry() -> Registry:
    """The well-behaved fake plugin and the fault suite's weights-file encoder."""
    return build_registry(
        [EntryPoint("fake", "fixtures.plugins.fake", "harness"), EntryPoint("faults", "faults.fault_plugin", "harness")]
    )


@pytest.fixture
def registry() -> Registry:
    return fault_registry()


@pytest.fixture
def data_dir(tmp_path) -> str:
    return str(fake_data(tmp_path / "data", A, B))


@pytest.fixture(autouse=True)
def _isolated(fresh_cache, monkeypatch):
    """Every test: its own cache folder, fresh call counters, and the fault registry behind the CLI."""
    from faults.fault_plugin import WeightsFileEncoder

    CountingEncoder.calls.clear()
    CountingEncoder.loads.clear()
    WeightsFileEncoder.calls.clear()
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", fault_registry())
    return fresh_cache


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """``harness ARGV`` in-process: exit code, stdout, stderr."""
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def run_counting(capsys, data_dir: str, output: Path, *extra: str, seed: str | None = "0") -> tuple[int, str, str]:
    """``harness run`` of the fixture task ``mean_similarity`` with ``counting-encoder`` (``seed=None``: its default)."""
    seeds = ("--seed", seed) if seed is not None else ()
    command = ["run", "--tasks", "mean_similarity", "--model", "counting-encoder", "--data-dir", data_dir]
    return run_cli(capsys, *command, *seeds, "--output", str(output), *extra)


def results_lines(folder: Path) -> list[dict]:
    """The parsed lines of ``folder/results.jsonl`` (every line must be whole JSON)."""
    path = Path(folder) / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
