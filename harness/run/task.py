"""The task API: what a task plugin subclasses, and what it returns."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from harness.adapters.capabilities import Capability
from harness.errors import HarnessError
from harness.params import Param, resolve_params
from harness.results.statistic import Statistic
from harness.run.roles import role_capabilities

if TYPE_CHECKING:
    from harness.adapters.cached_model import CachedModel
    from harness.run.context import RunContext


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


Chance = Callable[[Mapping[str, Any]], "float | None"]


@dataclass(frozen=True)
class Metric:
    """How to show, rank and resample one metric (the idea of lm-evaluation-harness's ``metric_list``).

    ``display`` and ``description`` may hold ``{name}`` fields, filled from the task's arguments
    and the output's ``extra`` (``"R@{k}"``). ``higher_is_better`` is None for values that are not
    scores (counts, tie rates). ``chance`` is the value of a model that knows nothing: a number,
    a function of those same values (Recall@k: k / n_used), or None where undefined.
    ``statistic`` (``mean:hit``, ``pearson:yisi2,gold``; see ``harness.results.statistic``) recomputes
    the metric from the task's per-sample records: the bootstrap over items resamples it.
    """

    name: str
    display: str = ""
    higher_is_better: bool | None = True
    chance: float | Chance | None = None
    statistic: str | None = None
    description: str = ""

    def __post_init__(self) -> None:
        if self.statistic is not None:
            Statistic.parse(self.statistic)  # fails at import on a malformed declaration

    def info(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """The ``metric_info`` entry of a results line (see ``docs/results.md``)."""
        chance = self.chance(values) if callable(self.chance) else self.chance
        return {
            "display": _fill(self.display or self.name, values, self.name),
            "higher_is_better": self.higher_is_better,
            "chance": None if chance is None else float(chance),
            "statistic": self.statistic,
            "description": _fill(self.description, values, self.name),
        }


def _fill(template: str, values: Mapping[str, Any], metric: str) -> str:
    try:
        return template.format(**values)
    except (KeyError, IndexError, ValueError) as exc:
        raise HarnessError(
            f"metric {metric!r}: cannot fill {template!r} from the task's arguments and extra ({exc})"
        ) from None


def recall_chance(values: Mapping[str, Any]) -> float | None:
    """Recall@k of a random ranking of ``n_used`` candidates: min(k / n_used, 1)."""
    k, n = values.get("k"), values.get("n_used")
    return min(k / n, 1.0) if isinstance(k, int) and isinstance(n, int) and n > 0 else None


DataT = TypeVar("DataT")


class Task(Generic[DataT]):
    """Base class of every task, generic over the data its dataset loader returns.

    Subclasses name that type (``class Xlr(Task[datasets.Dataset])``), set the class attributes and
    implement ``evaluate``. ``version`` must be bumped
    whenever the numbers a task produces could change. ``aux_roles`` maps each auxiliary model
    the task may load with ``ctx.load_model`` to the capability it must have
    (``{"image": Capability.IMAGE_ENCODER}``; the ``"image"`` role is ``--image-model``); the run
    resolves the models the user gives for them before any inference, and the identity of each
    enters the task's signature. ``metrics`` declares how each metric is shown, ranked and
    resampled (``Metric``); the runner writes it into every results line. ``min_items`` is the
    fewest items the task can evaluate (``check_size`` refuses fewer before any inference).
    ``needs_model = False``: the task uses no model (a reference, an oracle); it runs once per configuration
    without ``--model`` and its lines name the stand-in model ``reference`` (``harness.run.reference``).
    """

    version: ClassVar[int] = 1
    requires: ClassVar[tuple[Capability, ...]] = ()
    dataset: str = ""  # the registered loader; a task whose arguments choose it sets it per instance
    params: ClassVar[Mapping[str, Param]] = {}
    main_metric: ClassVar[str] = ""
    uses_seeds: ClassVar[bool] = False
    default_seeds: ClassVar[int] = 1
    aux_roles: ClassVar[Mapping[str, Capability] | tuple[str, ...]] = ()
    min_items: ClassVar[int] = 1
    metrics: ClassVar[tuple[Metric, ...]] = ()
    family: ClassVar[str | None] = None  # the family it belongs to (a preset inherits its base's)
    role: ClassVar[str | None] = None  # the role it plays there ("xlr"); None: its own registered name
    needs_model: ClassVar[bool] = True  # False: a model-free task (runs once, as the reference row)

    def __init__(self, name: str, args: Mapping[str, Any] | None = None):
        self.name = name
        self.args = resolve_params(self.params, args or {}, f"task {name!r}")

    def dataset_args(self) -> dict[str, Any]:
        """The arguments handed to the dataset loader (by default: those it declares)."""
        return dict(self.args)

    def recorded_args(self, loader: str) -> dict[str, Any]:
        """The arguments recorded (signature, results line) for a run whose data ``loader`` loaded.

        A ``dataset`` argument that chose the task's loader records the loader that actually
        loaded: a run on the ``xling-shapes`` fallback of ``dataset=ikea`` signs as
        ``dataset=xling-shapes`` does. The task itself is never changed.
        """
        if "dataset" in self.params and self.args.get("dataset") == self.dataset != loader:
            return {**self.args, "dataset": loader}
        return dict(self.args)

    def evaluate(self, data: DataT, model: CachedModel, ctx: RunContext) -> TaskOutput:
        """Compute the metrics of ``model`` on ``data`` (what the task's dataset loader returned)."""
        raise NotImplementedError

    def metric_info(self, output: TaskOutput) -> dict[str, dict[str, Any]]:
        """Each declared metric's ``metric_info`` entry, filled from the arguments and ``output.extra``."""
        values = {**self.args, **output.extra}
        return {metric.name: metric.info(values) for metric in self.metrics}

    @classmethod
    def aux_capabilities(cls) -> dict[str, Capability]:
        """Role -> the capability its auxiliary model must have (from ``aux_roles``)."""
        return role_capabilities(cls.aux_roles, f"task class {cls.__name__}")

    def check_size(self, size: int) -> str | None:
        """Why ``size`` items are too few for this task (None: enough); the plan asks before any inference."""
        if size < self.min_items:
            return f"task {self.name!r} needs at least {self.min_items} item(s), the data has {size}"
        return None

    def seeds_differ(self, size: int) -> bool:
        """Whether different seeds can give different numbers on ``size`` items (False: the runner evaluates once)."""
        return True

    def check(self, output: TaskOutput) -> list[str]:
        """Warnings about this output that could lead a reader to a wrong conclusion (k >= n, ...)."""
        return []
