"""Shared by the real-data tests: the real-runs script's helpers and the samples a run logged."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from conftest import REPO


def real_runs_script() -> ModuleType:
    """``benchmarks/offline_models_real_runs.py``, whose commands produce the documented results."""
    path = REPO / "benchmarks" / "offline_models_real_runs.py"
    spec = importlib.util.spec_from_file_location("offline_models_real_runs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def samples(folder: Path, record) -> list[dict]:
    """The per-sample rows a run logged for one record."""
    lines = (folder / record.samples_file).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]
