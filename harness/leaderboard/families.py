"""Which section a result belongs to: its task's family, shown as plugins register it through ``register_families``.

Membership is a property of the task: a results line carries ``family`` and ``role`` (a preset
inherits its base's), read through ``family_of`` and ``role_of``. ``register_families`` is
presentation only: a title, the roles in display order, whether an average means something, an
order among families, plot functions and extra tables. A line written before lines carried a
family is placed by its role in the registered families' role lists; a line no family claims is
shown under ``Other tasks``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError
from harness.results.records import ResultRecord, family_of, role_of

if TYPE_CHECKING:
    from harness.plugins.registry import Registry


@dataclass(frozen=True)
class Family:
    """A group of tasks shown together.

    ``tasks`` are the roles its tasks play, in display order (``xlr``, ``backretrieval``, ``corr``);
    ``average`` says whether an average across the family's roles means something (rates on one
    scale); ``order`` places the family among the others (lower first; None: by how many models it
    compares); ``ranking``: the role whose main metric ranks it (None: the first of ``tasks``); ``plots`` and ``sections`` are ``"module:attribute"`` references, imported only when
    the leaderboard is drawn.
    """

    name: str
    title: str
    tasks: tuple[str, ...] = ()
    average: bool = False
    plots: str | None = None
    sections: str | None = None
    plugin: str = ""
    order: int | None = None
    ranking: str | None = None

    @property
    def ranking_role(self) -> str | None:
        """The role whose main metric ranks the family's models: the declared one, else the first display role."""
        return self.ranking or (self.tasks[0] if self.tasks else None)

    def rank(self, role: str) -> int:
        """The role's place among the family's columns (unlisted roles after the listed ones)."""
        return self.tasks.index(role) if role in self.tasks else len(self.tasks)


OTHER = Family("other", "Other tasks")


@dataclass
class Families:
    """The registered families, with an index from role to the family that lists it."""

    families: tuple[Family, ...] = ()
    _by_role: dict[str, Family] = field(default_factory=dict, init=False, repr=False)
    _by_name: dict[str, Family] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        for family in self.families:
            self._by_name[family.name] = family
            for role in family.tasks:
                other = self._by_role.setdefault(role, family)
                if other is not family:
                    raise HarnessError(
                        f"task {role!r} is claimed by family {other.name!r} (plugin {other.plugin!r}) "
                        f"and family {family.name!r} (plugin {family.plugin!r})"
                    )

    def of(self, role: str) -> Family:
        """The family that lists a role (``OTHER`` when none does)."""
        return self._by_role.get(role, OTHER)

    def of_record(self, record: ResultRecord) -> Family:
        """The family a results line is shown in: the one its line names, else the one listing its role.

        A family a line names but no installed plugin registers is shown under its own name.
        """
        name = family_of(record)
        if name is None:
            return self.of(role_of(record))
        return self._by_name.get(name) or Family(name, name, plugin="(not installed)")

    def order(self, family: Family, role: str) -> tuple[int, int, str, str]:
        """A sort key for a column: the family's registration order, the role's place in it, the names."""
        place = self.families.index(family) if family in self.families else len(self.families)
        return place, family.rank(role), family.name, role


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
    """The families of every installed plugin (or of ``registry``), from their typed ``FamilySpec``, by name."""
    from harness.plugins.registry import get_registry
    from harness.plugins.specs import FamilySpec

    found = []
    for registration in (registry or get_registry()).entries["family"].values():
        spec = registration.spec
        assert isinstance(spec, FamilySpec)
        roles = spec.display_roles
        if isinstance(roles, str) or not all(isinstance(t, str) for t in roles):
            raise HarnessError(
                f"family {registration.name!r} from plugin {registration.plugin!r}: tasks must be a "
                f"sequence of task names, got {roles!r}"
            )
        order = spec.order if isinstance(spec.order, int) and not isinstance(spec.order, bool) else None
        found.append(
            Family(
                spec.name,
                spec.title,
                tuple(roles),
                bool(spec.average),
                spec.plots,
                spec.sections,
                spec.plugin,
                order,
                spec.ranking if isinstance(spec.ranking, str) else None,
            )
        )
    return Families(tuple(sorted(found, key=lambda f: f.name)))
