"""``harness compare A B --task T``: the paired bootstrap of two models' difference on one task.

Both results must have the same task signature (same data, arguments, seeds, version), so that
their per-sample logs cover the same samples. The statistic of the main metric comes from the
results line's ``metric_info`` (written by the task), so any plugin's task can be compared; the
statistic recomputed from the samples must be the recorded metric (else the log is not that of the result and
nothing is compared), and the verdict follows the metric's direction (``higher_is_better``). ``paired_difference``
holds every check; the leaderboard's overview calls it too.

``--versus-task V`` compares one model's results on two tasks over the same examples (CoMMuTE's TC
against IC: same data and arguments, the tuples paired by id and direction). When every per-sample
value is a 0/1 decision and each id has one sample, McNemar's exact test (``mcnemar``) is added to
the bootstrap (``--mcnemar`` requires it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from harness.errors import HarnessError
from harness.leaderboard.mcnemar import McNemar, decisions, format_mcnemar, is_binary, mcnemar
from harness.leaderboard.merge import Board, Result
from harness.leaderboard.select import choices, selected
from harness.results.bootstrap import Bootstrap, Statistic, paired_bootstrap
from harness.results.metrics import undefined_reason
from harness.results.records import role_of
from harness.results.samples import Key, align, read_samples

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
    task_b: str = ""  # B's task when it differs from A's (--versus-task); else empty
    metric_b: str = ""  # B's main metric when it differs
    mcnemar: McNemar | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


def _model_results(results: list[Result], name: str, task: str) -> list[Result]:
    """The results of the model called ``name`` (its label, else its name) among ``results``."""
    for matches in (
        [r for r in results if r.model_label == name],
        [r for r in results if r.record.model.get("name") == name],
    ):
        keys = {r.model_key for r in matches}
        if len(keys) > 1:
            labels = sorted({r.model_label for r in matches})
            raise HarnessError(
                f"{name!r} matches several models on {task}: {', '.join(labels)}; give one of these labels"
            )
        if keys:
            return matches
    known = sorted({r.model_label for r in results})
    raise HarnessError(
        f"no results of model {name!r} on task {task!r} (models with {task}: {', '.join(known) or 'none'})"
    )


def choose_pair(board: Board, a: str, b: str, task: str, select: Mapping[str, Any]) -> tuple[Result, Result]:
    """The current results of A and B on ``task`` with one shared task signature."""
    first = {r.record.task_signature: r for r in _candidates(board, a, task, select)}
    second = {r.record.task_signature: r for r in _candidates(board, b, task, select)}
    return _one_shared(
        first,
        second,
        select,
        f"{a} and {b} have no {task} results with the same task signature ({a}: {'; '.join(sorted(first))}; "
        f"{b}: {'; '.join(sorted(second))}): a paired comparison needs the same samples",
        f"{a} and {b} share several {task} configurations",
    )


def choose_versus(board: Board, a: str, task: str, versus: str, select: Mapping[str, Any]) -> tuple[Result, Result]:
    """A's current results on ``task`` and ``versus`` with the same data, arguments and seeds."""
    first = {r.signature.configuration(): r for r in _candidates(board, a, task, select)}
    second = {r.signature.configuration(): r for r in _candidates(board, a, versus, select)}
    return _one_shared(
        first,
        second,
        select,
        f"{a}'s {task} and {versus} results differ in data, arguments or seeds ({task}: "
        f"{'; '.join(sorted(first))}; {versus}: {'; '.join(sorted(second))}): pairing needs the same examples",
        f"{a} has several configurations of both {task} and {versus}",
    )


def _one_shared(
    first: dict[str, Result], second: dict[str, Result], select: Mapping[str, Any], none: str, several: str
) -> tuple[Result, Result]:
    """The pair under the one key both sides have; ``none`` and ``several`` say what is wrong otherwise (several:
    with the ``--select`` that names each, ``choices``)."""
    shared = sorted(first.keys() & second.keys())
    if not shared:
        raise HarnessError(none)
    if len(shared) > 1:
        raise HarnessError(f"{several}; choose one: {choices([first[key] for key in shared], select)}")
    return first[shared[0]], second[shared[0]]


def _candidates(board: Board, name: str, task: str, select: Mapping[str, Any]) -> list[Result]:
    results = [r for r in board.current if task in (r.record.task, role_of(r.record))]  # a task, or the role it plays
    if not results:
        tasks = sorted({r.record.task for r in board.current})
        raise HarnessError(f"no results of task {task!r} (tasks found: {', '.join(tasks) or 'none'})")
    return _model_results([r for r in results if selected(r, select)], name, task)


def _check_defined(result: Result, metric: str) -> None:
    """A metric the model leaves undefined (IC of a text-only scorer) has nothing to compare: say why."""
    record = result.record
    reason = undefined_reason(record, metric)
    if reason is not None or record.metrics.get(metric, 0.0) is None:
        raise HarnessError(
            f"{result.model_label}'s {metric} on {record.task} is undefined"
            f"{': ' + reason if reason else ''}; there are no decisions to compare"
        )


def statistic_of(result: Result, metric: str) -> Statistic:
    """How ``metric`` is recomputed from the samples: the line's ``metric_info``, else (lines written before
    it existed) the mean of a per-sample field named like the metric."""
    info = result.record.metric_info.get(metric)
    if info is None:
        return Statistic("mean", (metric,))
    if not info.get("statistic"):
        raise HarnessError(
            f"{result.record.task}'s {metric} is not a statistic of per-sample values (its metric_info "
            "names none): choose what to compare with --statistic"
        )
    return Statistic.parse(info["statistic"])


@dataclass(frozen=True)
class PairedDifference:
    """The paired bootstrap of A - B, the statistic of each side, and the samples it was computed from."""

    bootstrap: Bootstrap
    statistics: tuple[Statistic, Statistic]
    units: int
    samples: int
    values_a: dict[Key, tuple[float, ...]]
    values_b: dict[Key, tuple[float, ...]]


def paired_difference(
    first: Result,
    second: Result,
    statistic: Statistic | None = None,
    *,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedDifference:
    """The paired bootstrap of ``first`` - ``second`` from their per-sample logs, after every check that the logs
    are those of the two results; ``harness compare`` and the leaderboard's overview both call it.

    Each side's statistic is its main metric's (``statistic_of``) unless ``statistic`` is given. The checks: the two
    statistics are of one kind; each log belongs to its result (a compact log's header, a sample's signature); the
    logs cover the same samples with the same references; and each side's recorded statistic, recomputed from its
    log, is the main metric its results line recorded (a log swapped or damaged without its header gives another
    value). Any failure is a ``HarnessError`` saying why the two are not compared.
    """
    if statistic is None:
        statistic_a, statistic_b = (statistic_of(r, r.record.main_metric) for r in (first, second))
    else:
        statistic_a = statistic_b = statistic
    if statistic_a.kind != statistic_b.kind:
        raise HarnessError(
            f"{first.record.task}'s {statistic_a} and {second.record.task}'s {statistic_b} are different "
            "kinds of statistic: choose one with --statistic"
        )
    values_a, values_b = read_samples(first.entry, statistic_a.fields), read_samples(second.entry, statistic_b.fields)
    paired, samples = align(values_a, values_b, statistic_a)
    outcome = paired_bootstrap(paired, resamples, seed, confidence)
    found = [p for p in (_reproduces(first, statistic_a, outcome.a), _reproduces(second, statistic_b, outcome.b)) if p]
    if found:
        raise HarnessError("; ".join(found) + ": the per-sample log is not that of the result")
    return PairedDifference(outcome, (statistic_a, statistic_b), len(paired.a), samples, values_a, values_b)


def _reproduces(result: Result, used: Statistic, value: float) -> str | None:
    """Why ``value`` (``used`` over the result's samples) contradicts the main metric its line records; None when
    it agrees, or when ``used`` is not the statistic the line records for that metric (nothing to check against)."""
    metric = result.record.main_metric
    try:
        if used != statistic_of(result, metric):
            return None
    except HarnessError:  # the line names no statistic
        return None
    wanted = result.record.metrics.get(metric)
    if isinstance(wanted, (int, float)) and abs(wanted - value) <= TOLERANCE:
        return None
    return (
        f"{used} of {result.model_label}'s samples ({result.record.samples_file}) is {value:.6f}, "
        f"but its {result.record.task} line records {metric} = {wanted}"
    )


def compare(
    board: Board,
    a: str,
    b: str | None,
    task: str,
    *,
    select: Mapping[str, Any] | None = None,
    statistic: Statistic | None = None,
    resamples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    versus_task: str | None = None,
    with_mcnemar: bool | None = None,
) -> Comparison:
    """The paired bootstrap of A - B on ``task``'s main metric from the two runs' per-sample logs.

    With ``versus_task``, B is A's result on that task (``b`` may be None or A). ``with_mcnemar``:
    None adds McNemar's test when the decisions allow it, True requires it, False leaves it out.
    """
    if versus_task is not None:
        if b is not None and b != a:
            raise HarnessError("--versus-task compares one model's two tasks: give one model (A), not two")
        first, second = choose_versus(board, a, task, versus_task, select or {})
    elif b is None:
        raise HarnessError("give two models (A B), or one model with --versus-task TASK")
    else:
        first, second = choose_pair(board, a, b, task, select or {})
    metric, metric_b = first.record.main_metric, second.record.main_metric
    for result, name in ((first, metric), (second, metric_b)):
        _check_defined(result, name)
    higher = (first.record.metric_info.get(metric) or {}).get("higher_is_better", True)
    paired = paired_difference(first, second, statistic, resamples=resamples, seed=seed, confidence=confidence)
    statistic_a, statistic_b = paired.statistics
    label_a, label_b = first.model_label, second.model_label
    if versus_task is not None:
        label_a, label_b = f"{label_a} {task}", f"{label_b} {versus_task}"
    shown = str(statistic_a) if statistic_a == statistic_b else f"{statistic_a} vs {statistic_b}"
    return Comparison(
        task,
        first.record.task_signature,
        label_a,
        label_b,
        metric,
        first.record.metrics.get(metric),
        second.record.metrics.get(metric_b),
        shown,
        higher if isinstance(higher, bool) else None,
        paired.units,
        paired.samples,
        paired.bootstrap,
        versus_task or "",
        metric_b if metric_b != metric else "",
        _mcnemar(paired.values_a, paired.values_b, statistic_a, statistic_b, with_mcnemar),
    )


def _mcnemar(
    values_a: dict[Key, tuple[float, ...]],
    values_b: dict[Key, tuple[float, ...]],
    statistic_a: Statistic,
    statistic_b: Statistic,
    wanted: bool | None,
) -> McNemar | None:
    """McNemar's test of the paired decisions when they are 0/1, one sample per id, as many per sample on both sides."""
    if wanted is False:
        return None
    problems = []
    if statistic_a.kind != "mean":
        problems.append(f"it needs right/wrong decisions, and {statistic_a} is not a mean of them")
    elif len(statistic_a.fields) != len(statistic_b.fields):
        problems.append(f"{statistic_a} and {statistic_b} hold different numbers of decisions per sample")
    elif len({key[1] for key in values_a}) != len(values_a):
        problems.append("each id has several samples (seeds), which are not independent examples")
    elif not (is_binary(values_a) and is_binary(values_b)):
        problems.append("the per-sample values are not all 0/1 decisions (fractional tie shares, rates or scores)")
    if problems:
        if wanted:
            raise HarnessError(f"McNemar's test does not apply: {problems[0]}; use the bootstrap")
        return None
    return mcnemar(*decisions(values_a, values_b))


def verdict(c: Comparison) -> str:
    """Which model is better on the metric's own direction, when the interval of A - B excludes 0."""
    boot = c.bootstrap
    if boot.low <= 0 <= boot.high:
        return f"no difference at {boot.confidence:.0%}: the interval of A - B contains 0"
    if c.higher_is_better is None:
        return f"A - B is {'positive' if boot.low > 0 else 'negative'} at {boot.confidence:.0%} ({c.metric} has no better direction)"
    a_better = (boot.low > 0) == c.higher_is_better
    return (
        f"{c.model_a if a_better else c.model_b} is better at {boot.confidence:.0%} "
        f"({'higher' if c.higher_is_better else 'lower'} {c.metric} is better)"
    )


def _signed(value: float) -> str:
    return f"{value:+.4f}"


def format_comparison(c: Comparison) -> str:
    """The comparison as a few plain lines."""
    boot = c.bootstrap
    p = f"< {1 / boot.defined:.2g}" if boot.p_value == 0 else f"= {boot.p_value:.3f}"
    width = max(len(c.model_a), len(c.model_b), len("A - B"))
    lines = [
        f"paired bootstrap on {c.task}{' vs ' + c.task_b if c.task_b else ''} ({c.task_signature})",
        f"statistic {c.statistic} over {c.units} ids ({c.samples} samples; the samples of an id are resampled together)",
    ]
    for label, value, recorded, metric in (
        (c.model_a, boot.a, c.recorded_a, c.metric),
        (c.model_b, boot.b, c.recorded_b, c.metric_b or c.metric),
    ):
        lines.append(f"{label:<{width}}  {value:.4f}  (recorded {metric}: {recorded})")
    lines.append(
        f"{'A - B':<{width}}  {_signed(boot.difference)}  {boot.confidence:.0%} CI [{_signed(boot.low)}, {_signed(boot.high)}]  "
        f"p {p}  ({boot.resamples} resamples, seed {boot.seed}"
        + (f", {boot.resamples - boot.defined} undefined" if boot.defined < boot.resamples else "")
        + ")"
    )
    if c.mcnemar is not None:
        lines += format_mcnemar(c.mcnemar, c.model_a, c.model_b)
    lines.append(verdict(c))
    return "\n".join(lines)
