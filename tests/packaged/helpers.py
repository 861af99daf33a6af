"""Shared by the packaged-model and real-data tests: package checks, the converted-models folder, real photos."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

import pytest

# three real photographs that installed packages ship, with the ImageNet class each shows
PHOTOS = {
    "grace_hopper": ("matplotlib", "mpl-data/sample_data/grace_hopper.jpg", "military uniform"),
    "china": ("sklearn", "datasets/images/china.jpg", "palace"),
    "flower": ("sklearn", "datasets/images/flower.jpg", "daisy"),
}


def need(*modules: str) -> None:
    """Skip the test unless every module is importable (the offline-models extra is installed)."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f'needs {", ".join(missing)}: pip install -e ".[offline-models]"')


def persistent_models_dir() -> Path:
    """Where the tests keep converted models between sessions (a conversion is deterministic and slow)."""
    return Path(os.environ.get("HARNESS_TEST_MODELS_DIR") or Path(tempfile.gettempdir()) / "xling-harness-models")


@pytest.fixture(autouse=True, scope="module")
def converted_models_folder():
    """Point HARNESS_MODELS_DIR at the persistent folder for each module of the folders that import it (into a
    conftest), and only there: a session scope left it set for every later test of the session."""
    patch = pytest.MonkeyPatch()
    patch.setenv("HARNESS_MODELS_DIR", str(persistent_models_dir()))
    yield
    patch.undo()


def photo(name: str):
    """A real photo as an RGB PIL image (skips when its package is absent)."""
    from PIL import Image

    module, relative, _ = PHOTOS[name]
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        pytest.skip(f"the photo {name} comes with {module}, which is not installed")
    with Image.open(Path(spec.origin).parent / relative) as image:
        return image.convert("RGB")
