"""Tasks of one run that evaluate together, so work they share is done once (issue 28.2).

A task class may offer two hooks:

- ``joint_key(self) -> Hashable | None``: tasks whose keys are equal (and not None) can share work;
- ``evaluate_together(cls, members, data, model) -> list[TaskOutput]`` (a classmethod): the outputs of
  ``members`` (``(task, ctx)`` pairs) in their order, each the output ``task.evaluate(data, model, ctx)``
  gives alone (the hook's promise; xlr and backretrieval share their source x target text pass, and corr
  takes its text and image vectors from that pass).

``JointOutputs`` groups the plans of a run whose tasks share the same ``evaluate_together``
function and ``joint_key``, read data of the same identity, use the same seeds and are not already
in the results; the first member of a group to run evaluates the whole group, the others take
their output. Any other plan is evaluated alone.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from harness.adapters.cached_model import CachedModel
from harness.run.plan import TaskPlan
from harness.run.task import TaskOutput


def _group_key(plan: TaskPlan) -> Hashable | None:
    """What a plan must share with another to evaluate with it, or None when it evaluates alone."""
    hook = getattr(type(plan.task), "evaluate_together", None)
    joint_key = getattr(plan.task, "joint_key", None)
    if hook is None or joint_key is None or plan.done:
        return None
    key = joint_key()
    if key is None:
        return None
    data = tuple(sorted((str(k), repr(v)) for k, v in plan.loaded.identity.items()))
    return (getattr(hook, "__func__", hook), key, data, tuple(plan.seeds))


def joint_groups(plans: Sequence[TaskPlan]) -> list[list[TaskPlan]]:
    """The groups of two or more plans that evaluate together, each in the run's order."""
    groups: dict[Hashable, list[TaskPlan]] = {}
    for plan in plans:
        key = _group_key(plan)
        if key is not None:
            groups.setdefault(key, []).append(plan)
    return [group for group in groups.values() if len(group) > 1]


class JointOutputs:
    """Each plan's output: from its group's one joint evaluation, else from ``task.evaluate``."""

    def __init__(self, plans: Sequence[TaskPlan], model: CachedModel):
        self.model = model
        self._group: dict[int, list[TaskPlan]] = {id(p): group for group in joint_groups(plans) for p in group}
        self._outputs: dict[int, TaskOutput] = {}

    def evaluate(self, plan: TaskPlan) -> TaskOutput:
        """The output of ``plan``'s task, evaluated with its group the first time one of the group asks."""
        group = self._group.get(id(plan))
        if group is None:
            return plan.task.evaluate(plan.loaded.data, self.model, plan.ctx)
        if id(plan) not in self._outputs:
            hook: Any = getattr(type(plan.task), "evaluate_together")  # noqa: B009 (not on Task: optional)
            outputs = hook([(p.task, p.ctx) for p in group], plan.loaded.data, self.model)
            if len(outputs) != len(group):
                raise RuntimeError(
                    f"internal error: {type(plan.task).__name__}.evaluate_together returned {len(outputs)} "
                    f"outputs for {len(group)} tasks"
                )
            self._outputs.update({id(p): output for p, output in zip(group, outputs)})
        return self._outputs.pop(id(plan))
