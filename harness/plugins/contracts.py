"""Role contracts: what every task in one role of a family promises, declared once with the family.

A family registers one ``RoleContract`` per role and the ``Pairing`` of roles whose results of one configuration
are read together::

    register("retrieval", "harness_tasks.retrieval.plots:PLOTS", "Image-pivoted retrieval",
             roles=("xlr", "backretrieval", "corr"), ranking="xlr",
             contracts=(XLR, BACKRETRIEVAL, CORR), pairings=(META,))

A task joins a role by declaring ``family`` and ``role`` on its class; each of its parameters says what it means
(``Param(..., meaning="lang.target")``). Two tasks' arguments are the same argument when they declare the same
meaning, whatever their names and help texts. Every reader (meta, calibrate, g-sweep, compare, the leaderboard's
family pages and ranked tables) asks the contract; none keeps a list of its own. A task that claims a role and
misses part of its contract (a required meaning, a metric) is warned about once, at registration.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol


@dataclass(frozen=True)
class Argument:
    """One argument a role's tasks share: its meaning key (``lang.target``), its conventional name (``tgt``, the
    name results lines written before meanings were recorded use) and what it means, in one line."""

    meaning: str
    name: str
    help: str


@dataclass(frozen=True)
class RoleContract:
    """What a task playing ``role`` must offer.

    ``arguments``: the arguments that mean the same in every task of the role (a task declares each as a
    ``Param`` with that ``meaning``); ``metrics``: the metric keys it provides, the first being the main one
    (ranked on the board); ``reference``: the paper and section that define the role's numbers;
    ``optional``: arguments a task of the role may have (``n``, ``ties``): when it has one, it means this, and a
    pairing compares it where both tasks have it. A task without them is not warned about.
    """

    role: str
    arguments: tuple[Argument, ...] = ()
    metrics: tuple[str, ...] = ()
    description: str = ""
    reference: str = ""
    optional: tuple[Argument, ...] = ()

    @property
    def main_metric(self) -> str | None:
        """The metric ranked on the board (the first provided)."""
        return self.metrics[0] if self.metrics else None

    def meanings(self) -> tuple[str, ...]:
        """The meaning keys of the shared arguments, in declaration order."""
        return tuple(argument.meaning for argument in self.arguments)


@dataclass(frozen=True)
class Pairing:
    """Roles whose results of one configuration are read together (``xlr`` with ``backretrieval`` and ``corr``).

    ``roles[0]`` is the reference the others are measured against. Two results pair when their data are the same
    (dataset id, revision, split and size, when ``same_data``) and every meaning of ``same`` that both tasks
    declare has equal values; a meaning one side does not declare is not compared.
    """

    name: str
    roles: tuple[str, ...]
    same: tuple[str, ...] = ()
    same_data: bool = True


class HasArguments(Protocol):
    """What ``values_by_meaning`` reads of a results record (``harness.results.records.ResultRecord``)."""

    task_args: dict[str, Any]
    arg_meanings: dict[str, str]


def contract_of(contracts: Mapping[str, RoleContract] | tuple[RoleContract, ...], role: str) -> RoleContract | None:
    """The contract of ``role`` among a family's contracts (None: the role declares none)."""
    found = contracts.values() if isinstance(contracts, Mapping) else contracts
    return next((contract for contract in found if contract.role == role), None)


def known_arguments(contracts: Iterable[RoleContract]) -> dict[str, Argument]:
    """Meaning -> Argument of every argument the contracts name (required and optional), first declaration first."""
    found: dict[str, Argument] = {}
    for contract in contracts:
        for argument in (*contract.arguments, *contract.optional):
            found.setdefault(argument.meaning, argument)
    return found


def names_by_meaning(record: HasArguments, known: Mapping[str, Argument] | None = None) -> dict[str, str]:
    """Meaning -> the name of the task argument that declared it in a results record (``{"lang.target": "tgt"}``).

    A line records the meaning of each argument (``arg_meanings``); a line written before it did falls back to
    the conventional names of the ``known`` arguments (``known_arguments`` of the family's contracts).
    """
    recorded = getattr(record, "arg_meanings", None) or {}
    if recorded:
        return {meaning: name for name, meaning in recorded.items() if name in record.task_args}
    return {meaning: a.name for meaning, a in (known or {}).items() if a.name in record.task_args}


def values_by_meaning(record: HasArguments, known: Mapping[str, Argument] | None = None) -> dict[str, Any]:
    """Meaning -> value of the arguments a results record's task declared with a meaning (``{"lang.target": "de"}``);
    see ``names_by_meaning``. Every reader of a role (meta, calibrate, the board) asks this, never a name."""
    return {meaning: record.task_args[name] for meaning, name in names_by_meaning(record, known).items()}


def named_args(record: HasArguments, known: Mapping[str, Argument] | None = None) -> dict[str, Any]:
    """The record's task arguments, plus the contracts' arguments under their conventional names (``tgt`` for a
    plugin's ``target_lang`` that means ``lang.target``): what ``--select tgt=de`` matches."""
    found = known or {}
    conventional = {found[m].name: v for m, v in values_by_meaning(record, found).items() if m in found}
    return {**record.task_args, **conventional}


def family_arguments(registry: Any) -> dict[str, dict[str, Argument]]:
    """Family -> meaning -> Argument of every family's contracts (``known_arguments``), from a registry."""
    return {
        name: known_arguments(registration.info.get("contracts", ()))
        for name, registration in registry.entries["family"].items()
    }


DATA_IDENTITY = ("revision", "split", "size")  # what makes two results lines' data the same (``record.dataset``)


class HasData(Protocol):
    """What ``data_identity`` reads of a results record."""

    dataset: dict[str, Any]


def data_identity(record: HasData) -> tuple[Any, ...]:
    """The record's data: its revision (a content hash; the source when none was taken), split and size."""
    data = record.dataset
    return (data.get("revision") or data.get("source"), *(data.get(key) for key in DATA_IDENTITY[1:]))


def unpaired(pairing: Pairing, a: Any, b: Any, known: Mapping[str, Argument] | None = None) -> str | None:
    """Why results records ``a`` and ``b`` do not pair under ``pairing`` (None: they do): different data, or a
    meaning of ``pairing.same`` both declare with different values (named by meaning and by each side's name)."""
    if pairing.same_data and data_identity(a) != data_identity(b):
        return f"different data ({_data(a)} vs {_data(b)})"
    names_a, names_b = names_by_meaning(a, known), names_by_meaning(b, known)
    for meaning in pairing.same:
        if meaning not in names_a or meaning not in names_b:
            continue
        value_a, value_b = a.task_args[names_a[meaning]], b.task_args[names_b[meaning]]
        if str(value_a) != str(value_b):
            names = " / ".join(dict.fromkeys((names_a[meaning], names_b[meaning])))
            return f"different {names} ({meaning}: {value_a!r} vs {value_b!r})"
    return None


def _data(record: HasData) -> str:
    revision, split, size = data_identity(record)
    return f"{record.dataset.get('loader')} {split} {revision}, {size} items"


def missing_parts(contract: RoleContract, meanings: Iterable[str | None], metrics: Iterable[str]) -> list[str]:
    """What a task with these parameter meanings and metric names lacks of ``contract``: ``argument with meaning
    'lang.target' (tgt)``, ``metric 'mrr'``; empty when it offers everything."""
    declared, provided = set(meanings), set(metrics)
    return [
        *(
            f"an argument with meaning {a.meaning!r} ({a.name})"
            for a in contract.arguments
            if a.meaning not in declared
        ),
        *(f"metric {m!r}" for m in contract.metrics if m not in provided),
    ]
