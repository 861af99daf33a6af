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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError
from harness.plugins.class_source import UNREAD, assigned_in_class

if TYPE_CHECKING:
    from harness.plugins.registry import Registry

_DEPTH = 12  # presets on presets followed at most this deep
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
    if UNREAD in declared.values():
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


def _declared(ref: str, key: str) -> Any:
    """The string the class behind ``ref`` assigns to ``key`` or inherits; None when none assigns it; ``UNREAD``
    when the source does not tell (or assigns something else than a string literal)."""
    value = assigned_in_class(ref, key, _ROOTS)
    if value is None or value is UNREAD:
        return value
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else UNREAD
