"""Every hook has a section in docs/plugins.md and a test named test_hook_<hook> (datasette's rule);
the engine names no built-in task or family (they reach it only through the hooks)."""

from __future__ import annotations

import ast
import inspect
import re
from importlib import metadata
from pathlib import Path

import pytest

from harness.plugins import hookspecs
from harness.plugins.registry import HOOKS, build_registry

REPO = Path(__file__).resolve().parent.parent
HOOK_NAMES = sorted(
    name for name, obj in vars(hookspecs).items() if inspect.isfunction(obj) and hasattr(obj, "harness_spec")
)


def test_hookspecs_are_the_registry_hooks():
    assert sorted(HOOKS.values()) == HOOK_NAMES


@pytest.mark.parametrize("hook", HOOK_NAMES)
def test_hook_is_documented(hook):
    docs = (REPO / "docs" / "plugins.md").read_text()
    assert re.search(rf"^### {hook}$", docs, re.MULTILINE), f"docs/plugins.md has no '### {hook}' section"


@pytest.mark.parametrize("hook", HOOK_NAMES)
def test_hook_has_a_test(hook):
    tests = "\n".join(p.read_text() for p in (REPO / "tests").rglob("test_*.py"))
    assert re.search(rf"def test_hook_{hook}\b", tests), f"no test function named test_hook_{hook}"


def bitext_registry():
    """A registry of the example plugin alone, loaded from its entry point as an installed plugin would be."""
    pytest.importorskip(
        "harness_bitext", reason="the example plugin is not installed (pip install -e plugins/harness-bitext)"
    )
    return build_registry([metadata.EntryPoint("bitext", "harness_bitext.plugin", "harness")])


def test_hook_register_families(tmp_path):
    """The example plugin's family gets its own table and its own plot."""
    from leaderboard.builders import record

    from harness.leaderboard.families import registered_families
    from harness.leaderboard.merge import merge
    from harness.leaderboard.plots import write_plots
    from harness.leaderboard.tables import family_tables
    from harness.results.load import Entry

    registry = bitext_registry()
    assert registry.plugins["bitext"].registered["family"] == ["bitext"]
    families = registered_families(registry)
    (family,) = families.families
    assert (family.name, family.title, family.tasks, family.average) == (
        "bitext",
        "Bitext mining",
        ("bitext_mining",),
        False,
    )
    args = {"src": "en", "tgt": "fr"}
    board = merge(
        [Entry(record("bitext_mining", m, v, args=args), Path("results.jsonl")) for m, v in (("a", 0.4), ("b", 0.9))],
        families,
    )
    (table,) = family_tables(board)
    assert (table.family.title, table.title, [r.label for r in table.rows]) == (
        "Bitext mining",
        "ikea test en→fr",
        ["b", "a"],
    )
    (plot,) = write_plots(board, tmp_path)
    assert (plot.family, plot.file) == ("bitext", "bitext_accuracy_ikea_test_en_fr.png")
    assert (tmp_path / plot.file).read_bytes().startswith(b"\x89PNG")


def _code_strings_and_names(path: Path) -> list[str]:
    """Every identifier and string constant of a module, docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append(node.value)
        elif isinstance(node, ast.Name):
            found.append(node.id)
        elif isinstance(node, ast.Attribute):
            found.append(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(node.name)
    return found


def built_in_names() -> set[str]:
    """The tasks and families that the harness's own distribution registers through its entry points."""
    registry = build_registry(
        [ep for ep in metadata.entry_points(group="harness") if ep.dist is not None and ep.dist.name == "xling-harness"]
    )
    names = set(registry.names("task")) | set(registry.names("family"))
    assert {"xlr", "commute_tc", "yisi2_sts", "retrieval", "commute", "yisi"} <= names  # the lookup itself works
    return names


def test_no_file_under_harness_names_a_built_in_task_or_family():
    pattern = re.compile(
        r"(?<![A-Za-z0-9_])("
        + "|".join(sorted(map(re.escape, built_in_names()), key=len, reverse=True))
        + r")(?![A-Za-z0-9_])"
    )
    offenders = sorted(
        {
            f"{path.relative_to(REPO)}: {match}"
            for path in (REPO / "harness").rglob("*.py")
            for text in _code_strings_and_names(path)
            for match in pattern.findall(text)
        }
    )
    assert offenders == [], "the engine must learn tasks and families from the hooks: " + "; ".join(offenders)
