"""The tutorial plugin and docs/plugins.md teach the public API only (issue 35): every import of the harness is
``import harness`` / ``from harness import ...``, every name they import is exported, and every Python block
of the page runs."""

from __future__ import annotations

import ast
import re

import pytest
from conftest import REPO

import harness

DOC = REPO / "docs" / "plugins.md"
TUTORIAL = REPO / "plugins" / "harness-bitext"


def harness_imports(source: str) -> list[tuple[str, tuple[str, ...]]]:
    """(module, names) of every import of ``harness`` or a module under it in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "harness":
            found.append((node.module, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.Import):
            found += [(alias.name, ()) for alias in node.names if alias.name.split(".")[0] == "harness"]
    return found


def _private(source: str) -> list[str]:
    """The harness imports of ``source`` that are not the public API: a submodule, or a name not exported."""
    bad = []
    for module, names in harness_imports(source):
        if module != "harness":
            bad.append(module)
        bad += [f"harness.{name}" for name in names if name not in harness.__all__]
    return bad


def test_the_check_catches_a_private_import():
    assert _private("from harness.run.task import Task\nimport harness.errors\nfrom harness import Nope") == [
        "harness.run.task",
        "harness.errors",
        "harness.Nope",
    ]
    assert _private("import harness\nfrom harness import Task, hookimpl\nfrom harness_bitext import x") == []


@pytest.mark.parametrize("path", sorted(TUTORIAL.rglob("*.py")), ids=lambda p: str(p.relative_to(TUTORIAL)))
def test_the_tutorial_plugin_imports_only_harness(path):
    assert _private(path.read_text(encoding="utf-8")) == []


def python_blocks() -> list[tuple[str, str]]:
    """(title or "", code) of every ```python block of docs/plugins.md."""
    return re.findall(r'```python(?: title="([^"]+)")?\n(.*?)```', DOC.read_text(encoding="utf-8"), re.S)


def test_every_python_block_of_the_plugin_docs_imports_only_harness():
    blocks = python_blocks()
    assert len(blocks) >= 8
    assert [(title, _private(code)) for title, code in blocks if _private(code)] == []


def test_every_untitled_python_block_runs(tmp_path, monkeypatch, fresh_cache):
    """The titled blocks are the complete plugin's files (tests/test_docs_plugins.py runs them); the others run
    here, each in its own namespace, from an empty folder."""
    monkeypatch.chdir(tmp_path)
    untitled = [code for title, code in python_blocks() if not title]
    assert untitled
    for code in untitled:
        exec(compile(code, str(DOC), "exec"), {"__name__": "docs_block"})
