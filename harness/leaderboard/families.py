"""Which README table a task belongs to, and the order of tables and tasks.

Derived from task names: a small mapping that the task registry could provide later.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """A group of tasks shown in one table.

    ``tasks`` are exact names in display order, ``prefixes`` catch the rest; ``average`` says
    whether an average across the family's tasks means something (rates on one scale).
    """

    name: str
    title: str
    tasks: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    average: bool = False

    def matches(self, task: str) -> bool:
        """Whether ``task`` belongs to this family."""
        return task in self.tasks or task.startswith(self.prefixes)


FAMILIES: tuple[Family, ...] = (
    Family("retrieval", "Image-pivoted retrieval", ("xlr", "backretrieval", "corr")),
    Family("commute", "CoMMuTE", ("commute_tc", "commute_ic", "commute_gtc", "commute_gic", "commute_consistency",
                                  "commute_oracle"), ("commute_",), average=True),
    Family("yisi", "YiSi-2", ("yisi2_sts", "bert_sum_sts", "yisi2_filter"), ("yisi2_", "bert_sum_")),
)
OTHER = Family("other", "Other tasks")


@functools.cache
def family_of(task: str) -> Family:
    """The family a task is shown in (``OTHER`` when no family claims it)."""
    return next((family for family in FAMILIES if family.matches(task)), OTHER)


@functools.cache
def task_order(task: str) -> tuple[int, int, str]:
    """A sort key: family order, then the family's listed order, then the name."""
    family = family_of(task)
    family_index = FAMILIES.index(family) if family in FAMILIES else len(FAMILIES)
    position = family.tasks.index(task) if task in family.tasks else len(family.tasks)
    return family_index, position, task
