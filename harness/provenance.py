"""Where a number came from: harness version and git hash, library versions, hardware."""

from __future__ import annotations

import os
import platform
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

LIBRARIES = ("torch", "transformers", "datasets", "numpy", "scipy", "tokenizers")


def harness_version() -> str:
    """The installed version of xling-harness."""
    try:
        return metadata.version("xling-harness")
    except metadata.PackageNotFoundError:
        return "unknown"


@lru_cache(maxsize=1)
def harness_git() -> str | None:
    """The git commit of the harness source (with ``-dirty`` for local changes), if any."""
    folder = Path(__file__).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("-dirty" if dirty else "") if commit else None


def library_versions() -> dict[str, Any]:
    """Python and the versions of the libraries that affect the numbers."""
    versions: dict[str, Any] = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def cpu_name() -> str | None:
    """The CPU model name (from /proc/cpuinfo on Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def hardware(device: str) -> dict[str, Any]:
    """The device used, the CPU, and the GPU name when on CUDA."""
    info: dict[str, Any] = {"device": device, "machine": platform.machine(), "cpu": cpu_name(), "cpu_count": os.cpu_count()}
    if device.startswith("cuda"):
        import torch

        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return info
