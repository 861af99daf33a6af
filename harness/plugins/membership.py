"""Which family a registered task belongs to and which role it plays there: the one answer every command uses.

A task class declares both once (``family = "retrieval"``, ``role = "xlr"``; no role: its own
registered name); a YAML preset is its base task's member in its base's role (a preset names a
family only for a base that declares none). A task class that declares no family (a plugin written
before tasks declared one) belongs to the family whose registration lists its role, as the
leaderboard places it. Results lines carry the same two values
(``harness.results.records.family_of`` / ``role_of``), written from the same class attributes.

``task_membership`` reads the class attributes from the module's source when they are plain
strings in the class body or inherited from a readable base (``harness list --family`` then
imports no task module, so it stays fast); otherwise it imports the class.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.plugins.registry import Registry

_UNREAD = object()  # an attribute whose value the source does not tell (not a string literal, or not found)
_DEPTH = 12
_ROOTS = {("harness", "Task"), ("harness.run.task", "Task"), ("typing", "Generic")}  # declare neither family nor role


@dataclass(frozen=True)
class Membership:
    """A task's family (None: it belongs to none) and the role it plays in it."""

    family: str | None
    role: str


def task_membership(registry: Registry, name: str) -> Membership:
    """The family and role of the task registered as ``name`` (a built-in, a plugin's or a YAML preset)."""
    return _membership(registry, name, 0)


def _membership(registry: Registry, name: str, depth: int) -> Membership:
    registration = registry.get("task", name)
    preset = registration.info.get("yaml_preset")
    if preset is not None:
        if depth > _DEPTH:
            raise HarnessError(f"task {name!r}: its presets' bases go round in a circle")
        base = _membership(registry, preset.base, depth + 1)
        return Membership(base.family or preset.family, base.role)
    declared = {key: _declared(registration.ref, key) for key in ("family", "role")}
    if _UNREAD in declared.values():
        cls = registration.load()
        declared = {key: getattr(cls, key, None) for key in declared}
    family, role = declared["family"], declared["role"]
    role = role if isinstance(role, str) and role else name
    return Membership(family if isinstance(family, str) else _listed_in(registry, role), role)


def _listed_in(registry: Registry, role: str) -> str | None:
    """For a task class that declares no family (a plugin written before tasks declared one): the family whose
    registration lists its role, as the leaderboard places such a task's older results lines."""
    for registration in registry.entries["family"].values():
        if role in registration.info.get("roles", registration.info.get("tasks", ())):
            return registration.name
    return None


def family_members(registry: Registry) -> dict[str, Membership]:
    """Task name -> its membership, for every registered task."""
    return {name: task_membership(registry, name) for name in registry.names("task")}


# --- reading class attributes from source ----------------------------------------------------


@cache
def _module(name: str) -> tuple[ast.Module, str] | None:
    try:
        spec = importlib.util.find_spec(name)  # imports the parent packages only (their registrations: cheap)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        return ast.parse(Path(spec.origin).read_text(encoding="utf-8")), spec.parent or ""
    except (OSError, SyntaxError, UnicodeDecodeError):
        return None


def _imported(module: ast.Module, package: str) -> dict[str, tuple[str, str]]:
    """Local name -> (module, attribute) of the module's ``from X import Y`` statements."""
    names: dict[str, tuple[str, str]] = {}
    for node in module.body:
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                names[alias.asname or alias.name] = (base, alias.name)
    return names


def _declared(ref: str, key: str, depth: int = 0) -> Any:
    """The string the class behind ``ref`` assigns to ``key`` in its body or inherits; None when no class in its
    bases assigns it and every base is readable; ``_UNREAD`` when the source cannot tell."""
    module_name, _, attr = ref.partition(":")
    found = _module(module_name)
    if found is None or depth > _DEPTH or not attr or "." in attr:
        return _UNREAD
    module, package = found
    imports = _imported(module, package)
    node = next((n for n in module.body if isinstance(n, ast.ClassDef) and n.name == attr), None)
    if node is None:
        source = imports.get(attr)
        return _declared(f"{source[0]}:{source[1]}", key, depth + 1) if source else _UNREAD
    for statement in node.body:
        value = _assigned(statement, key)
        if value is not None:
            return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else _UNREAD
    for base in node.bases:
        if isinstance(base, ast.Subscript):  # Task[Dataset], PairTask[Scorer]
            base = base.value
        if not isinstance(base, ast.Name):
            return _UNREAD
        if imports.get(base.id) in _ROOTS:
            continue  # the base class declares neither
        where = imports.get(base.id)
        inherited = _declared(f"{where[0]}:{where[1]}" if where else f"{module_name}:{base.id}", key, depth + 1)
        if inherited is not None:
            return inherited
    return None


def _assigned(statement: ast.stmt, key: str) -> ast.expr | None:
    if isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == key for t in statement.targets):
        return statement.value
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name) and statement.target.id == key:
        return statement.value
    return None
