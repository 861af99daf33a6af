"""``harness compare A B --task T``: the paired bootstrap of two models' difference on one task.

Both results must have the same task signature (same data, arguments, seeds, version), so that
their per-sample logs cover the same samples. The statistic of the main metric comes from the
results line's ``metric_info`` (written by the task), so any plugin's task can be compared; the
statistic recomputed from the samples is shown beside the recorded metric, and the verdict follows
the metric's direction (``higher_is_better``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from harness.errors import HarnessError
from harness.leaderboard.bootstrap import Bootstrap, Statistic, paired_bootstrap
from harness.leaderboard.merge import Board, Result
from harness.leaderboard.samples import align, read_samples

TOLERANCE = 1e-6


@dataclass(frozen=True)
class Comparison:
    """The outcome: who, on what, with which statistic, and the bootstrap."""

    task: str
    task_signature: str
    model_a: str
    model_b: str
    metric: str
    recorded_a: float | None
    recorded_b: float | None
    statistic: str
    higher_is_better: bool | None
    units: int
    samples: int
    bootstrap: Bootstrap

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def _model_results(results: list[Result], name: str, task: str) -> list[Result]:
    """The results of the model called ``name`` (its label, else its name) among ``results``."""
    for matches in ([r for r in results if r.model_label == name], [r for r in results if r.record.model.get("name") == name]):
        keys = {r.model_key for r in matches}
        if len(keys) > 1:
            labels = sorted({r.model_label for r in matches})
            raise HarnessError(f"{name!r} matches several models on {task}: {', '.join(labels)}; give one of these labels")
        if keys:
            return matches
    known = sorted({r.model_label for r in results})
    raise HarnessError(f"no results of model {name!r} on task {task!r} (models with {task}: {', '.join(known) or 'none'})")


def _matches(value: Any, wanted: Any) -> bool:
    """``--select`` equality: as text (case-insensitive), or as numbers (``1`` matches ``1.0``)."""
    if str(value).lower() == str(wanted).lower():
        return True
    try:
        return float(value) == float(wanted)
    except (TypeError, ValueError):
        return False


def choose_pair(board: Board, a: str, b: str, task: str, select: Mapping[str, Any]) -> tuple[Result, Result]:
    """The current results of A and B on ``task`` with one shared task signature."""
    results = [r for r in board.current if r.record.task == task]
    if not results:
        tasks = sorted({r.record.task for r in board.current})
        raise HarnessError(f"no results of task {task!r} (tasks found: {', '.join(tasks) or 'none'})")
    results = [r for r in results if all(_matches(r.record.task_args.get(k), v) for k, v in select.items())]
    first = {r.record.task_signature: r for r in _model_results(results, a, task)}
    second = {r.record.task_signature: r for r in _model_results(results, b, task)}
    shared = sorted(first.keys() & second.keys())
    if not shared:
        raise HarnessError(f"{a} and {b} have no {task} results with the same task signature ({a}: {'; '.join(sorted(first))}; "
                           f"{b}: {'; '.join(sorted(second))}): a paired comparison needs the same samples")
    if len(shared) > 1:
        raise HarnessError(f"{a} and {b} share {len(shared)} {task} configurations ({'; '.join(shared)}); "
                           "choose one with --select k=v,...")
    return first[shared[0]], second[shared[0]]


def statistic_of(result: Result, metric: str) -> Statistic:
    """How ``metric`` is recomputed from the samples: the line's ``metric_info``, else (lines written before
    it existed) the mean of a per-sample field named like the metric."""
    info = result.record.metric_info.get(metric)
    if info is None:
        return Statistic("mean", (metric,))
    if not info.get("statistic"):
        raise HarnessError(f"{result.record.task}'s {metric} is not a statistic of per-sample values (its metric_info "
                           "names none): choose what to compare with --statistic")
    return Statistic.parse(info["statistic"])


def compare(board: Board, a: str, b: str, task: str, *, select: Mapping[str, Any] | None = None,
            statistic: Statistic | None = None, resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> Comparison:
    """The paired bootstrap of A - B on ``task``'s main metric from the two runs' per-sample logs."""
    first, second = choose_pair(board, a, b, task, select or {})
    metric = first.record.main_metric
    higher = (first.record.metric_info.get(metric) or {}).get("higher_is_better", True)
    statistic = statistic or statistic_of(first, metric)
    paired, samples = align(read_samples(first.entry, statistic.fields), read_samples(second.entry, statistic.fields), statistic)
    outcome = paired_bootstrap(paired, resamples, seed, confidence)
    return Comparison(task, first.record.task_signature, first.model_label, second.model_label, metric,
                      first.record.metrics.get(metric), second.record.metrics.get(metric), str(statistic),
                      higher if isinstance(higher, bool) else None, len(paired.a), samples, outcome)


def mismatches(comparison: Comparison) -> list[str]:
    """Warnings when the statistic recomputed from the samples is not the recorded main metric."""
    found = []
    for label, recorded, recomputed in ((comparison.model_a, comparison.recorded_a, comparison.bootstrap.a),
                                        (comparison.model_b, comparison.recorded_b, comparison.bootstrap.b)):
        if recorded is None or abs(recorded - recomputed) > TOLERANCE:
            found.append(f"{comparison.statistic} of {label}'s samples is {recomputed:.6f}, but its recorded "
                         f"{comparison.metric} is {recorded}: the interval is about the statistic, not that metric")
    return found


def verdict(c: Comparison) -> str:
    """Which model is better on the metric's own direction, when the interval of A - B excludes 0."""
    boot = c.bootstrap
    if boot.low <= 0 <= boot.high:
        return f"no difference at {boot.confidence:.0%}: the interval of A - B contains 0"
    if c.higher_is_better is None:
        return f"A - B is {'positive' if boot.low > 0 else 'negative'} at {boot.confidence:.0%} ({c.metric} has no better direction)"
    a_better = (boot.low > 0) == c.higher_is_better
    return (f"{c.model_a if a_better else c.model_b} is better at {boot.confidence:.0%} "
            f"({'higher' if c.higher_is_better else 'lower'} {c.metric} is better)")


def _signed(value: float) -> str:
    return f"{value:+.4f}"


def format_comparison(c: Comparison) -> str:
    """The comparison as a few plain lines."""
    boot = c.bootstrap
    p = f"< {1 / boot.defined:.2g}" if boot.p_value == 0 else f"= {boot.p_value:.3f}"
    width = max(len(c.model_a), len(c.model_b), len("A - B"))
    lines = [
        f"paired bootstrap on {c.task} ({c.task_signature})",
        f"statistic {c.statistic} over {c.units} ids ({c.samples} samples; the samples of an id are resampled together)",
    ]
    for label, value, recorded in ((c.model_a, boot.a, c.recorded_a), (c.model_b, boot.b, c.recorded_b)):
        lines.append(f"{label:<{width}}  {value:.4f}  (recorded {c.metric}: {recorded})")
    lines.append(f"{'A - B':<{width}}  {_signed(boot.difference)}  {boot.confidence:.0%} CI [{_signed(boot.low)}, {_signed(boot.high)}]  "
                 f"p {p}  ({boot.resamples} resamples, seed {boot.seed}" +
                 (f", {boot.resamples - boot.defined} undefined" if boot.defined < boot.resamples else "") + ")")
    lines.append(verdict(c))
    return "\n".join(lines)
