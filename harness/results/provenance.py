"""Where a number came from: harness version and git hash, library versions, hardware, and the code of adapters."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import platform
import subprocess
import sys
from dataclasses import dataclass
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
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
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
    info: dict[str, Any] = {
        "device": device,
        "machine": platform.machine(),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
    }
    if device.startswith("cuda"):
        import torch

        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
    return info


@dataclass(frozen=True)
class CodeIdentity:
    """The code behind a class: its distribution and version, and a hash of its source when that can change in place."""

    distribution: str | None
    version: str | None
    source_hash: str | None


def code_identity(class_path: str) -> CodeIdentity:
    """Distribution, version and (for code that can change without a new version) a source hash of ``module:Class``.

    The source is hashed when the module belongs to no installed distribution, to one installed
    from a direct URL (PEP 610 ``direct_url.json``: editable, a local folder, VCS or an archive),
    or to a source tree's ``.egg-info`` (no ``RECORD``): their version need not change when
    their code does. A plain index install is pinned by its name and version. The hash covers the module and, statically, every module of
    the same top-level package that it imports (helpers included).
    """
    module_name, colon, _ = class_path.partition(":")
    if not module_name or not colon:
        return CodeIdentity(None, None, None)
    dist = _distribution_of(module_name.split(".")[0])
    if dist is None:
        return CodeIdentity(None, None, source_hash(module_name))
    pinned = dist.read_text("RECORD") is not None and dist.read_text("direct_url.json") is None
    return CodeIdentity(dist.metadata["Name"], dist.version, None if pinned else source_hash(module_name))


def _distribution_of(top_level: str) -> metadata.Distribution | None:
    """The installed distribution providing the top-level import name (harness plugins are checked first: cheap)."""
    names = _plugin_top_levels().get(top_level) or metadata.packages_distributions().get(top_level) or []
    for name in names:
        try:
            return metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
    return None


@lru_cache(maxsize=1)
def _plugin_top_levels() -> dict[str, list[str]]:
    """Top-level import name -> distributions, from the ``harness`` entry points alone (no scan of every package)."""
    found: dict[str, list[str]] = {}
    for ep in metadata.entry_points(group="harness"):
        if ep.dist is not None:
            found.setdefault(ep.value.split(":")[0].split(".")[0], []).append(ep.dist.name)
    return found


def source_hash(module_name: str) -> str | None:
    """SHA-256 over the source files of a module and of the modules it imports from its top-level package."""
    files = module_sources(module_name)
    if not files:
        return None
    combined = hashlib.sha256()
    for name, path in sorted(files.items()):
        combined.update(f"{name}\0".encode() + hashlib.sha256(path.read_bytes()).digest())
    return "sha256:" + combined.hexdigest()[:16]


def module_sources(module_name: str) -> dict[str, Path]:
    """Module name -> source file of the module, its packages, and (transitively) what it imports from its top-level package."""
    import ast

    top = module_name.split(".")[0]
    found: dict[str, Path] = {}
    todo = [module_name]
    while todo:
        name = todo.pop()
        if name in found or not (name == top or name.startswith(top + ".")):
            continue
        path = _source_file(name)
        if path is None:
            continue
        found[name] = path
        parent = name.rpartition(".")[0]
        package = name if path.name == "__init__.py" else parent
        todo += [parent] if parent else []
        try:
            tree = ast.parse(path.read_bytes(), str(path))
        except (SyntaxError, ValueError):
            continue
        todo += _imported_names(tree, package)
    return found


def _imported_names(tree: Any, package: str) -> list[str]:
    """The modules an AST imports (``from a import b`` yields a and a.b: b may be a submodule)."""
    import ast

    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                if node.level - 1 >= len(parts):
                    continue
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names += [base] + [f"{base}.{alias.name}" for alias in node.names]
    return names


def _source_file(module_name: str) -> Path | None:
    """The ``.py`` file of a module (loaded or importable), or None (built-in, extension, not found, not a module)."""
    module = sys.modules.get(module_name)
    origin = getattr(module, "__file__", None) if module is not None else None
    if origin is None:
        try:
            spec = importlib.util.find_spec(module_name)
        except (ImportError, ValueError, AttributeError):
            return None
        origin = spec.origin if spec is not None else None
    path = Path(origin) if origin else None
    return path if path is not None and path.suffix == ".py" and path.is_file() else None
