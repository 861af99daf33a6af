"""Shared by the real-data tests: the samples a run logged."""

from __future__ import annotations

import json
from pathlib import Path


def samples(folder: Path, record) -> list[dict]:
    """The per-sample rows a run logged for one record."""
    lines = (folder / record.samples_file).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]
