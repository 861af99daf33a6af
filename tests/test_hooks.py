"""Every hook has a section in docs/plugins.md and a test named test_hook_<hook> (datasette's rule)."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from harness import hookspecs
from harness.registry import HOOKS

REPO = Path(__file__).resolve().parent.parent
HOOK_NAMES = sorted(name for name, obj in vars(hookspecs).items() if inspect.isfunction(obj) and hasattr(obj, "harness_spec"))


def test_hookspecs_are_the_registry_hooks():
    assert HOOK_NAMES == sorted(HOOKS.values())


@pytest.mark.parametrize("hook", HOOK_NAMES)
def test_hook_is_documented(hook):
    docs = (REPO / "docs" / "plugins.md").read_text()
    assert re.search(rf"^### {hook}$", docs, re.MULTILINE), f"docs/plugins.md has no '### {hook}' section"


@pytest.mark.parametrize("hook", HOOK_NAMES)
def test_hook_has_a_test(hook):
    tests = "\n".join(p.read_text() for p in (REPO / "tests").rglob("test_*.py"))
    assert re.search(rf"def test_hook_{hook}\b", tests), f"no test function named test_hook_{hook}"
