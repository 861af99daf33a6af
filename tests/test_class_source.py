"""Reading a class's assignments from source: re-exports, inherited values, generic bases, what cannot be read."""

from __future__ import annotations

import ast
import sys
import textwrap

import pytest

from harness.plugins.class_source import UNREAD, assigned_in_class, parsed_module


@pytest.fixture
def package(tmp_path, monkeypatch):
    root = tmp_path / "srcpkg"
    root.mkdir()
    files = {
        "__init__.py": "from .tasks import Child as Exported\n",
        "base.py": """
            from typing import Generic, TypeVar
            T = TypeVar("T")
            class Base(Generic[T]):
                family = "retrieval"
                role: str = "xlr"
        """,
        "tasks.py": """
            from .base import Base
            import collections
            class Child(Base[int]):
                role = "backretrieval"
            class Plain:
                pass
            class Dynamic(collections.UserDict):
                pass
            class Computed(Base[int]):
                family = "re" + "trieval"
        """,
    }
    for name, text in files.items():
        (root / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "srcpkg"
    for name in [m for m in sys.modules if m.startswith("srcpkg")]:
        del sys.modules[name]
    parsed_module.cache_clear()


def _value(found: object) -> object:
    return found.value if isinstance(found, ast.Constant) else found


def test_own_and_inherited_assignments_through_a_generic_base(package):
    assert _value(assigned_in_class(f"{package}.tasks:Child", "role")) == "backretrieval"
    assert _value(assigned_in_class(f"{package}.tasks:Child", "family")) == "retrieval"  # from Base[int]


def test_a_re_export_is_followed_to_its_class(package):
    assert _value(assigned_in_class(f"{package}:Exported", "family")) == "retrieval"


def test_nothing_assigned_is_none_and_what_the_source_cannot_tell_is_unread(package):
    assert assigned_in_class(f"{package}.tasks:Plain", "family") is None
    assert assigned_in_class(f"{package}.tasks:Dynamic", "family") is UNREAD  # a dotted base: only importing tells
    assert assigned_in_class(f"{package}.tasks:Missing", "family") is UNREAD
    assert assigned_in_class("no_such_module_anywhere:Thing", "family") is UNREAD
    computed = assigned_in_class(f"{package}.tasks:Computed", "family")
    assert isinstance(computed, ast.BinOp)  # the expression is returned; the caller decides it is not a literal
