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

from collections.abc import Mapping
from dataclasses import dataclass


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
    (ranked on the board); ``reference``: the paper and section that define the role's numbers.
    """

    role: str
    arguments: tuple[Argument, ...] = ()
    metrics: tuple[str, ...] = ()
    description: str = ""
    reference: str = ""

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


def contract_of(contracts: Mapping[str, RoleContract] | tuple[RoleContract, ...], role: str) -> RoleContract | None:
    """The contract of ``role`` among a family's contracts (None: the role declares none)."""
    found = contracts.values() if isinstance(contracts, Mapping) else contracts
    return next((contract for contract in found if contract.role == role), None)
