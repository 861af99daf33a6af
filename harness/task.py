"""The task API: what a task plugin subclasses, and what it returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from harness.capabilities import Capability
from harness.params import Param, resolve_params

if TYPE_CHECKING:
    from harness.context import RunContext


@dataclass
class TaskOutput:
    """What one evaluation produced.

    ``per_seed`` holds one metrics dict per seed, in the order of ``RunContext.seeds`` (a single
    dict for tasks that use no seeds). ``samples`` are per-sample records for ``--log-samples``
    (JSON-serialisable dicts). ``extra`` holds further task-specific results (JSON-serialisable).
    ``undefined`` maps a metric that cannot be defined for this model or data (its per-seed
    value is None) to the reason, which the results line, the summary and the leaderboard show.
    """

    per_seed: list[dict[str, float | None]]
    samples: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    undefined: dict[str, str] = field(default_factory=dict)


class Task:
    """Base class of every task.

    Subclasses set the class attributes and implement ``evaluate``. ``version`` must be bumped
    whenever the numbers a task produces could change. ``aux_roles`` names the auxiliary models
    the task may load with ``ctx.load_model`` (``"image"``: ``--image-model``); the identity of
    each one the user gives enters the task's signature.
    """

    version: ClassVar[int] = 1
    requires: ClassVar[tuple[Capability, ...]] = ()
    dataset: ClassVar[str] = ""
    params: ClassVar[Mapping[str, Param]] = {}
    main_metric: ClassVar[str] = ""
    uses_seeds: ClassVar[bool] = False
    default_seeds: ClassVar[int] = 1
    aux_roles: ClassVar[tuple[str, ...]] = ()

    def __init__(self, name: str, args: Mapping[str, Any] | None = None):
        self.name = name
        self.args = resolve_params(self.params, args or {}, f"task {name!r}")

    def dataset_args(self) -> dict[str, Any]:
        """The arguments handed to the dataset loader (by default: those it declares)."""
        return dict(self.args)

    def use_dataset(self, name: str) -> None:
        """Load ``name`` instead of ``dataset`` (the runner's call when the loader's fallback applies)."""
        self.dataset = name

    def evaluate(self, data: Any, model: Any, ctx: RunContext) -> TaskOutput:
        """Compute the metrics of ``model`` on ``data`` (whatever the dataset loader returned)."""
        raise NotImplementedError
