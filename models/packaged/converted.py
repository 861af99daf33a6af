"""Model folders converted once from a package's weights and kept in the harness cache.

A folder is named by what it was built from (a content hash of the source and the converter's
version) and built by ``harness.artefacts.ensure_built``: under a lock, in a scratch folder beside
it, sealed with a manifest and renamed into place when complete, and verified against the manifest
whenever it is opened (a damaged folder is built again). ``HARNESS_MODELS_DIR`` overrides the
location (default: ``<harness cache>/models``).
"""

from __future__ import annotations

import os
from pathlib import Path

from harness.adapters.cache import default_cache_dir


def models_dir() -> Path:
    """Where converted models are kept."""
    if os.environ.get("HARNESS_MODELS_DIR"):
        return Path(os.environ["HARNESS_MODELS_DIR"]).expanduser()
    return default_cache_dir() / "models"


def converted_folder(name: str, key: str) -> Path:
    """The folder of a conversion (it may not exist yet)."""
    safe = key.replace(":", "-")
    return models_dir() / f"{name}-{safe}"
