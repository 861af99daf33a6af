"""Which table a task belongs to: the families plugins register through ``register_families``.

The engine knows no family of its own: a task no family claims is shown under ``Other tasks``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError

if TYPE_CHECKING:
    from harness.plugins.registry import Registry


@dataclass(frozen=True)
class Family:
    """A group of tasks shown together.

    ``tasks`` are exact names in display order; ``average`` says whether an average across the
    family's tasks means something (rates on one scale); ``plots`` and ``sections`` are
    ``"module:attribute"`` references, imported only when the leaderboard is drawn.
    """

    name: str
    title: str
    tasks: tuple[str, ...] = ()
    average: bool = False
    plots: str | None = None
    sections: str | None = None
    plugin: str = ""


OTHER = Family("other", "Other tasks")


@dataclass
class Families:
    """The registered families in the order of their tables, with a task index."""

    families: tuple[Family, ...] = ()
    _by_task: dict[str, Family] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for family in self.families:
            for task in family.tasks:
                other = self._by_task.setdefault(task, family)
                if other is not family:
                    raise HarnessError(
                        f"task {task!r} is claimed by family {other.name!r} (plugin {other.plugin!r}) "
                        f"and family {family.name!r} (plugin {family.plugin!r})"
                    )

    def of(self, task: str) -> Family:
        """The family a task is shown in (``OTHER`` when no family claims it)."""
        return self._by_task.get(task, OTHER)

    def order(self, task: str) -> tuple[int, int, str]:
        """A sort key: family order, then the family's listed order, then the name."""
        family = self.of(task)
        if family is OTHER:
            return len(self.families), 0, task
        return self.families.index(family), family.tasks.index(task), task


def _load(ref: str | None, what: str, family: Family) -> Any:
    from harness.plugins.registry import Registration

    if ref is None:
        return None
    return Registration("family", family.name, ref, what, family.plugin).load()


def plot_functions(family: Family) -> Sequence[Callable[..., Any]]:
    """The family's plot functions (imported now)."""
    return tuple(_load(family.plots, "plots", family) or ())


def section_function(family: Family) -> Callable[..., Any] | None:
    """The family's extra-sections function, if it has one (imported now)."""
    function: object = _load(family.sections, "sections", family)
    if function is not None and not callable(function):
        raise HarnessError(f"family {family.name!r} registers sections {family.sections!r}, which is not a function")
    return function


def registered_families(registry: Registry | None = None) -> Families:
    """The families of every installed plugin (or of ``registry``), ordered by family name."""
    from harness.plugins.registry import get_registry

    found = []
    for registration in (registry or get_registry()).entries["family"].values():
        info = registration.info
        tasks = info.get("tasks", ())
        if isinstance(tasks, str) or not all(isinstance(t, str) for t in tasks):
            raise HarnessError(
                f"family {registration.name!r} from plugin {registration.plugin!r}: tasks must be a "
                f"sequence of task names, got {tasks!r}"
            )
        found.append(
            Family(
                registration.name,
                registration.description or registration.name,
                tuple(tasks),
                bool(info.get("average", False)),
                registration.ref,
                info.get("sections"),
                registration.plugin,
            )
        )
    return Families(tuple(sorted(found, key=lambda f: f.name)))
