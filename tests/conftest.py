"""Shared fixtures: an isolated cache per test session, the real data folder, tiny models."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests are judged on what they find, never on how long an example took: a loaded CI machine
# would otherwise fail them with DeadlineExceeded (hypothesis's default is 200 ms per example).
settings.register_profile("harness", deadline=None, print_blob=True)
settings.load_profile("harness")

sys.path.insert(0, str(Path(__file__).resolve().parent))  # tiny_models, fixtures: importable from every test folder
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before any test module imports huggingface_hub, which reads it once

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


def _only_this_projects_plugins() -> None:
    """The suite sees this repository's plugins (and the fixtures it builds), whatever else is installed.

    Every installed ``harness`` plugin of another package (a user's, the tutorial's ``toy``) is
    disabled by its entry-point name, in this process and in every ``harness`` subprocess a test
    starts (they inherit the environment); a ``HARNESS_LOAD_PLUGINS`` of the user's is dropped. A test
    that wants such a plugin builds its registry itself and removes it from ``HARNESS_DISABLE_PLUGINS``.
    """
    from fixtures.registries import foreign_plugin_names

    os.environ.pop("HARNESS_LOAD_PLUGINS", None)
    foreign = foreign_plugin_names()
    if foreign:
        os.environ["HARNESS_DISABLE_PLUGINS"] = ",".join(foreign)
    else:
        os.environ.pop("HARNESS_DISABLE_PLUGINS", None)


_only_this_projects_plugins()  # before any test module builds the process-wide registry


@pytest.fixture(autouse=True, scope="session")
def _project_registry():
    """The process-wide registry, built afresh from this project's plugins for the session."""
    from harness.plugins.registry import reset_registry

    reset_registry()
    yield
    reset_registry()


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory):
    """Never touch the user's cache: every test session gets its own."""
    folder = tmp_path_factory.mktemp("harness-cache")
    previous = os.environ.get("HARNESS_CACHE_DIR")
    os.environ["HARNESS_CACHE_DIR"] = str(folder)
    yield folder
    if previous is None:
        os.environ.pop("HARNESS_CACHE_DIR", None)
    else:
        os.environ["HARNESS_CACHE_DIR"] = previous


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch) -> Path:
    """A cache folder of this test's own (for tests that count model calls)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(folder))
    return folder


def shared_data(*parts: str) -> Path:
    """A path under ../shared/data, or skip the test with the reason when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path} is absent (see ../shared/data/README.md)")
    return path


@pytest.fixture(scope="session")
def tiny_bert_12(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 12-layer tiny BERT (hidden 32, random weights) on ``tiny_models.DEFAULT_CORPUS``, built once per session."""
    from tiny_models import tiny_bert

    return tiny_bert(tmp_path_factory.mktemp("tiny-bert-12"))
