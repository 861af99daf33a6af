"""``harness compare A B --task T``: the paired bootstrap of two models' difference on one task.

Both results must have the same task signature (same data, arguments, seeds, version), so that
their per-sample logs cover the same samples. The statistic recomputed from the samples is shown
beside the recorded metric.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from harness.errors import HarnessError
from harness.leaderboard.bootstrap import Bootstrap, Statistic, paired_bootstrap
from harness.leaderboard.merge import Board, Result
from harness.leaderboard.samples import align, read_samples

# How each built-in task's main metric is computed from its per-sample log; other tasks default
# to the mean of a per-sample field named like their main metric, or take --statistic.
KNOWN_STATISTICS: dict[str, Statistic] = {
    "xlr": Statistic("mean", ("hit",)),
    "backretrieval": Statistic("mean", ("hit",)),
    "commute_tc": Statistic("mean", ("tc_ab", "tc_ba")),
    "commute_ic": Statistic("mean", ("ic_ab", "ic_ba")),
    "commute_gtc": Statistic("mean", ("gtc",)),
    "commute_gic": Statistic("mean", ("gic",)),
    "yisi2_sts": Statistic("pearson", ("yisi2", "gold")),
    "bert_sum_sts": Statistic("pearson", ("bert_sum", "gold")),
    "yisi2_filter": Statistic("auc", ("yisi2", "label")),
}
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


def compare(board: Board, a: str, b: str, task: str, *, select: Mapping[str, Any] | None = None,
            statistic: Statistic | None = None, resamples: int = 1000, seed: int = 0, confidence: float = 0.95) -> Comparison:
    """The paired bootstrap of A - B on ``task`` from the two runs' per-sample logs."""
    first, second = choose_pair(board, a, b, task, select or {})
    metric = first.record.main_metric
    statistic = statistic or KNOWN_STATISTICS.get(task) or Statistic("mean", (metric,))
    paired, samples = align(read_samples(first.entry, statistic.fields), read_samples(second.entry, statistic.fields), statistic)
    outcome = paired_bootstrap(paired, resamples, seed, confidence)
    return Comparison(task, first.record.task_signature, first.model_label, second.model_label, metric,
                      first.record.metrics.get(metric), second.record.metrics.get(metric), str(statistic),
                      len(paired.a), samples, outcome)


def mismatches(comparison: Comparison) -> list[str]:
    """Warnings when the statistic recomputed from the samples is not the recorded main metric."""
    found = []
    for label, recorded, recomputed in ((comparison.model_a, comparison.recorded_a, comparison.bootstrap.a),
                                        (comparison.model_b, comparison.recorded_b, comparison.bootstrap.b)):
        if recorded is None or abs(recorded - recomputed) > TOLERANCE:
            found.append(f"{comparison.statistic} of {label}'s samples is {recomputed:.6f}, but its recorded "
                         f"{comparison.metric} is {recorded}: the interval is about the statistic, not that metric")
    return found


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
    return "\n".join(lines)
