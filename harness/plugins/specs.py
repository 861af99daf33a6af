"""What one registration holds, typed: one small frozen spec per kind, built by the ``register`` callback.

A hook calls ``register(name, "module:attribute", description, **keywords)``; the keywords a kind
takes are the fields of its spec below (beyond ``name``, ``ref``, ``description`` and ``plugin``).
An unknown keyword is a plugin warning naming the plugin, the keyword and the nearest valid one
(``register_families(..., task=(...))``: "did you mean 'tasks'?") and is ignored; a keyword of the
wrong type makes the plugin fail to register, with its name in the warning.

Membership of a task in a family, and the role it plays there, are not registration keywords:
the task class declares them (``Task.family``, ``Task.role``) and ``harness.plugins.membership``
answers them. ``register_families`` is presentation only (title, role order, average, order,
plots, sections).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from harness.plugins.contracts import Pairing, RoleContract

_COMMON = ("name", "ref", "description", "plugin")


@dataclass(frozen=True)
class Spec:
    """The fields every registration has: its name, ``"module:attribute"`` reference, description and plugin."""

    kind: ClassVar[str] = ""
    name: str
    ref: str
    description: str = ""
    plugin: str = ""

    @classmethod
    def keywords(cls) -> tuple[str, ...]:
        """The keywords ``register`` takes for this kind, beyond name, reference and description."""
        return tuple(f.name for f in fields(cls) if f.name not in _COMMON)

    def info(self) -> dict[str, Any]:
        """The keywords given (those not at their default), as ``Registration.info`` holds them."""
        return {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in _COMMON and getattr(self, f.name) != _default(f)
        }


def _default(f: Any) -> Any:
    return f.default_factory() if callable(f.default_factory) else f.default


@dataclass(frozen=True)
class TaskSpec(Spec):
    """A task class. ``languages`` feeds ``harness list --lang``; ``family`` and ``yaml_preset`` come from a YAML
    preset (``register_yaml``), whose family must agree with its base task's."""

    kind: ClassVar[str] = "task"
    languages: tuple[str, ...] = ()
    family: str | None = None
    yaml_preset: Any = None


@dataclass(frozen=True)
class ModelSpec(Spec):
    """A model adapter or preset. ``preset``: adapter arguments fixed by this name; ``config_model_types``: the
    ``config.json`` model types it serves; ``default_for``: capabilities it serves when nothing more specific does."""

    kind: ClassVar[str] = "model"
    preset: Mapping[str, Any] = field(default_factory=dict)
    config_model_types: tuple[str, ...] = ()
    default_for: tuple[str, ...] = ()


@dataclass(frozen=True)
class DatasetSpec(Spec):
    """A dataset loader class."""

    kind: ClassVar[str] = "dataset"


@dataclass(frozen=True)
class CommandSpec(Spec):
    """A CLI subcommand: an object with ``add_arguments(parser)`` and ``run(args) -> int``."""

    kind: ClassVar[str] = "command"


@dataclass(frozen=True)
class FamilySpec(Spec):
    """How a family is shown on the leaderboard (its members declare ``family`` on their task class).

    The reference names its plot functions (``PLOTS``); the description is its title. ``tasks`` (also spelt
    ``roles``): the roles its columns are shown in, in this order; ``average``: an average column means something
    (the main metrics share one scale); ``order``: its place among the families (lower first);
    ``sections``: ``"module:function"`` returning extra tables; ``contracts``: one ``RoleContract`` per role (what
    a task in that role must offer, ``harness.plugins.contracts``); ``pairings``: roles read together;
    ``ranking``: the role whose main metric ranks the family's models (default: the first display role).
    """

    kind: ClassVar[str] = "family"
    tasks: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    average: bool = False
    order: int | None = None
    sections: str | None = None
    contracts: tuple[RoleContract, ...] = ()
    pairings: tuple[Pairing, ...] = ()
    ranking: str | None = None

    @property
    def title(self) -> str:
        """The family's title on the leaderboard."""
        return self.description or self.name

    @property
    def plots(self) -> str:
        """The ``"module:attribute"`` of its plot functions."""
        return self.ref

    @property
    def display_roles(self) -> tuple[str, ...]:
        """The roles in display order (``roles``, else ``tasks``)."""
        return self.roles or self.tasks


SPECS: dict[str, type[Spec]] = {s.kind: s for s in (TaskSpec, ModelSpec, DatasetSpec, CommandSpec, FamilySpec)}

_SEQUENCES = {"languages", "config_model_types", "default_for", "tasks", "roles"}


def nearest(key: str, valid: tuple[str, ...]) -> str:
    """``"did you mean 'tasks'?"``, or the valid keywords when none is close."""
    close = difflib.get_close_matches(key, valid, n=1, cutoff=0.5)
    if close:
        return f"did you mean {close[0]!r}?"
    return f"it takes {', '.join(repr(v) for v in valid)}" if valid else "it takes no keywords"


def build_spec(
    kind: str, name: str, ref: str, description: str, plugin: str, keywords: Mapping[str, Any]
) -> tuple[Spec, list[str]]:
    """The spec of one registration and the problems with its keywords (unknown ones, left out).

    A keyword of the wrong type is a ``TypeError`` naming it (the plugin fails to register).
    """
    spec_class = SPECS[kind]
    valid = spec_class.keywords()
    problems, given = [], {}
    for key, value in keywords.items():
        if key not in valid:
            problems.append(
                f"plugin {plugin!r}: register_{_plural(kind)}({name!r}, ...) got an unknown keyword {key!r} "
                f"({nearest(key, valid)}); it is ignored"
            )
            continue
        given[key] = _checked(kind, name, key, value)
    return spec_class(name=name, ref=ref, description=description, plugin=plugin, **given), problems


def _plural(kind: str) -> str:
    return "families" if kind == "family" else kind + "s"


def _checked(kind: str, name: str, key: str, value: Any) -> Any:
    """``value`` in the type its field has (sequences as tuples); a TypeError naming the keyword otherwise."""
    where = f"{kind} {name!r}: keyword {key!r}"
    if key in _SEQUENCES:
        if value is None:
            return ()
        if isinstance(value, str) or not all(isinstance(v, str) for v in value):
            raise TypeError(f"{where} must be a sequence of strings, got {value!r}")
        return tuple(value)
    if key == "average" and not isinstance(value, bool):
        raise TypeError(f"{where} must be True or False, got {value!r}")
    if key == "order" and value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"{where} must be a whole number, got {value!r}")
    if key == "sections" and value is not None and (not isinstance(value, str) or ":" not in value):
        raise TypeError(f"{where} must be 'module:function', got {value!r}")
    if key in ("contracts", "pairings"):
        kind_of = RoleContract if key == "contracts" else Pairing
        if isinstance(value, kind_of) or not all(isinstance(v, kind_of) for v in value):
            raise TypeError(f"{where} must be a sequence of {kind_of.__name__}, got {value!r}")
        return tuple(value)
    if key in ("family", "ranking") and value is not None and not isinstance(value, str):
        raise TypeError(f"{where} must be a string, got {value!r}")
    if key == "preset" and not isinstance(value, Mapping):
        raise TypeError(f"{where} must be a mapping of adapter arguments, got {value!r}")
    return value
