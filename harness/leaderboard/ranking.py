"""Per family, one ranked table: a row per model (twins merged into one row), its mean of the family's main
metric over the data sets and directions the ranked models share, with an interval and the count of
directions, then one cell per data set and direction.

- The main metric is that of the family's ranking role (``FamilySpec.ranking``, default its first display
  role); each of the role's columns (a data set and direction under one task signature) is a cell.
- The ranked directions are the set of directions the most models were run on; a model that lacks one of
  them is shown apart, marked "k of n directions", never averaged against the others (one run on more is
  ranked on the ranked directions, its other cells shown). A model whose values there are all fixed
  by construction (or undefined) is shown apart too.
- A control (its card's ``control`` says why: random, degraded or image-blanked on purpose) is never ranked
  and never named best: it is shown greyed in its own group.
- Twins: two models whose outputs are identical on every shared item (the per-item logs equal, every number
  equal) are one row naming both, so the next row is a different model.
- Shared ranks, as WMT's clusters: the best model of the remaining ones is tested against each other one;
  those whose gap to it is not significant share its rank (Holm-corrected over the group's tests at 5 %).
  The test is the paired bootstrap over items where both runs logged their samples (one direction: its
  p-value; several: the per-direction differences averaged, their bootstrap intervals combined as
  independent normal errors); otherwise whether the two models' intervals of the mean overlap, said so.
- The interval of a mean over several directions combines the per-direction intervals over items as
  independent normal errors (each side's distances added in quadrature, divided by the count).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import astuple, dataclass
from statistics import NormalDist
from typing import Any, cast

import numpy as np

from harness.errors import HarnessError
from harness.leaderboard.families import Family
from harness.leaderboard.kept import Kept
from harness.leaderboard.merge import Board, Column, Result, telling_apart
from harness.leaderboard.models import controls
from harness.leaderboard.tables import Cell, cell_of, dataset_of, pair_of
from harness.results.bootstrap import Bootstrap, Units
from harness.results.metrics import MetricInfo, info_of
from harness.results.records import ResultRecord
from harness.results.samples import Key
from harness.results.signature import Signature

ALPHA = 0.05
RESAMPLES = 1000
CONFIDENCE = 0.95
_Z = NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)

RANKED, APART, CONTROL = "ranked", "apart", "control"
PAIRED = "paired bootstrap over items, Holm-corrected"
OVERLAP = (
    "whether the intervals of the means overlap (no per-item logs for a paired test; no interval: not shown to differ)"
)
MIXED = f"{PAIRED} where both runs logged their items; elsewhere {OVERLAP}"
NOTHING = "one model: nothing to compare"


@dataclass(frozen=True)
class Direction:
    """One cell column of a ranked table: a column of the ranking role, with its data set and direction.

    ``group``: the data set, with the signature parts that tell its columns apart when one data set and
    direction has several (``xling-shapes-commute (prefix_removal:True)``); ``title``: the group and direction.
    """

    column: Column
    dataset: str
    pair: str | None
    group: str

    @property
    def title(self) -> str:
        """``<group> <direction>``."""
        return f"{self.group} {self.pair}" if self.pair else self.group

    @property
    def short(self) -> str:
        """The direction alone (the group is said above it), else the group."""
        return self.pair or self.group


@dataclass(frozen=True)
class RankedRow:
    """A model (with its twins) in a ranked table.

    ``group``: ``ranked``, ``apart`` (fewer directions, or fixed values: ``note`` says which) or ``control``
    (``note``: why); ``rank``: shared by the models its cluster holds (None outside ``ranked``); ``mean`` and
    ``interval`` over ``count`` directions; ``cells`` and ``results`` align with the table's directions.
    """

    labels: tuple[str, ...]
    keys: tuple[str, ...]
    group: str
    rank: int | None
    shared: bool
    mean: float | None
    interval: tuple[float, float] | None
    count: int
    cells: tuple[Cell | None, ...]
    results: tuple[Result | None, ...]
    note: str = ""

    @property
    def label(self) -> str:
        """The model's label; twins named together: ``a = b``."""
        return " = ".join(self.labels)


@dataclass(frozen=True)
class Ranking:
    """A family's ranked table: its main metric, its directions (``ranked_over``: the indices of those
    the mean is taken over), its rows (ranked by rank, then apart, then controls) and how ranks were decided."""

    family: Family
    role: str
    metric: str
    info: MetricInfo
    directions: tuple[Direction, ...]
    ranked_over: tuple[int, ...]
    rows: tuple[RankedRow, ...]
    method: str

    @property
    def higher_is_better(self) -> bool:
        """The main metric's direction."""
        return self.info.rank_sign > 0


def holm(p_values: Sequence[float], alpha: float = ALPHA) -> list[bool]:
    """Holm's step-down procedure: per p-value (in the given order), whether its null hypothesis is rejected."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected = [False] * len(p_values)
    for step, index in enumerate(order):
        if p_values[index] > alpha / (len(p_values) - step):
            break
        rejected[index] = True
    return rejected


def combined_p(tests: Sequence[Bootstrap]) -> float:
    """The two-sided p-value of the mean of several directions' paired differences: one direction's own bootstrap
    p-value; several: their percentile intervals read as independent normal errors."""
    if len(tests) == 1:
        return tests[0].p_value
    difference = sum(t.difference for t in tests) / len(tests)
    error = math.sqrt(sum(((t.high - t.low) / (2 * _Z)) ** 2 for t in tests)) / len(tests)
    if error == 0:
        return 1.0 if difference == 0 else 0.0
    return 2 * (1 - NormalDist().cdf(abs(difference) / error))


def mean_interval(cells: Sequence[Cell]) -> tuple[float, float] | None:
    """The interval of the mean of ``cells``' values: the distances from each value down to its interval's low end
    (and up to its high end) added in quadrature, divided by the count, below (above) the mean; one cell's own
    interval; None when a cell has no interval."""
    found = [(c.value, c.interval) for c in cells if c.value is not None and c.interval is not None]
    if not cells or len(found) != len(cells):
        return None
    mean = sum(value for value, _ in found) / len(found)
    below = math.sqrt(sum((value - low) ** 2 for value, (low, _) in found)) / len(found)
    above = math.sqrt(sum((high - value) ** 2 for value, (_, high) in found)) / len(found)
    return mean - below, mean + above


Tester = Callable[[Result, Result], Bootstrap | None]


def clusters(rows: Sequence[RankedRow], sign: float, test: Tester, over: Sequence[int]) -> tuple[list[RankedRow], str]:
    """The ranked rows with their shared ranks (best first), and how the gaps were tested (``PAIRED``,
    ``OVERLAP``, ``MIXED``; ``NOTHING`` for fewer than two rows).

    Each round takes the best remaining row; the rows whose gap to it is not significant (Holm over the
    round's paired tests; interval overlap where a pair has no logs) share its rank.
    """
    remaining = sorted(rows, key=lambda r: (-sign * (r.mean or 0.0), r.label))
    done: list[RankedRow] = []
    kinds: set[str] = set()
    while remaining:
        best, others = remaining[0], remaining[1:]
        p_values: dict[int, float] = {}
        apart: set[int] = set()
        for index, other in enumerate(others):
            tests = [test(a, b) for i in over if (a := best.results[i]) and (b := other.results[i])]
            if tests and all(t is not None for t in tests):
                p_values[index] = combined_p([t for t in tests if t is not None])
                kinds.add(PAIRED)
            else:
                kinds.add(OVERLAP)
                if not _overlap(best.interval, other.interval):
                    apart.add(index)
        rejected = holm(list(p_values.values()))
        apart |= {index for index, no in zip(p_values, rejected) if no}
        same = [best] + [o for i, o in enumerate(others) if i not in apart]
        rank = len(done) + 1
        done += [_with_rank(row, rank, len(same) > 1) for row in same]
        remaining = [o for i, o in enumerate(others) if i in apart]
    return done, (MIXED if len(kinds) > 1 else kinds.pop() if kinds else NOTHING)


def _overlap(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """Whether two intervals overlap (an unknown interval: nothing is shown to differ)."""
    return a is None or b is None or (a[0] <= b[1] and b[0] <= a[1])


def _with_rank(row: RankedRow, rank: int, shared: bool) -> RankedRow:
    return RankedRow(
        row.labels, row.keys, RANKED, rank, shared, row.mean, row.interval, row.count, row.cells, row.results
    )


class Samples:
    """Per-item values read once per result, and the paired bootstrap of two results' main metric.

    ``paired_difference`` (the one paired test of ``harness compare``) draws its resampled units from
    ``default_rng(0)`` whatever the pair, so each result's statistic over the resamples is computed once and a
    pair's differences are those of two cached vectors: the same numbers as ``harness compare`` gives, at the
    cost of one bootstrap per result instead of per pair. Each log is checked once by ``paired_difference``.

    ``kept``: the tests and twin checks of an earlier build of the board, keyed by the two results' content and
    logs (``harness.leaderboard.kept``); what is found there is not worked out again.
    """

    def __init__(self, kept: Kept | None = None) -> None:
        self.read: dict[int, dict[Key, tuple[float, ...]] | None] = {}
        self.drawn: dict[int, tuple[Units, np.ndarray] | None] = {}
        self.kept = kept

    def values(self, result: Result) -> dict[Key, tuple[float, ...]] | None:
        """The result's per-item values of its main statistic, read once and checked by ``paired_difference`` (the
        log is the result's, its statistic reproduces the recorded metric); None: not logged, or not its log."""
        from harness.leaderboard.compare import paired_difference

        key = id(result)
        if key not in self.read:
            try:
                found = paired_difference(result, result, resamples=1) if result.record.samples_file else None
                self.read[key] = None if found is None else found.values_a
            except (HarnessError, OSError, ValueError):
                self.read[key] = None
        return self.read[key]

    def _drawn(self, result: Result) -> tuple[Units, np.ndarray] | None:
        from harness.leaderboard.compare import statistic_of
        from harness.results.bootstrap import resampled
        from harness.results.samples import to_units

        if id(result) not in self.drawn:
            values = self.values(result)
            found = None
            if values is not None and len({k[1] for k in values}) >= 2:
                units = to_units(values, statistic_of(result, result.record.main_metric))
                found = units, resampled(units.statistic, len(units), units.width, RESAMPLES, 0)
            self.drawn[id(result)] = found
        return self.drawn[id(result)]

    def test(self, first: Result, second: Result) -> Bootstrap | None:
        """The paired bootstrap of first - second over their items (as ``paired_bootstrap``); None without logs of
        the same items under the same statistic."""

        def work() -> list[Any] | None:
            found = self._test(first, second)
            return None if found is None else list(astuple(found))

        fact = self._fact("paired test", first, second, work)
        return None if fact is None else Bootstrap(*fact)

    def identical(self, first: Result, second: Result) -> bool | None:
        """Whether two results' per-item values are the same (None: not both logged)."""

        def work() -> bool | None:
            a, b = self.values(first), self.values(second)
            return None if a is None or b is None else a == b

        return cast("bool | None", self._fact("identical", first, second, work))

    def _fact(self, kind: str, first: Result, second: Result, work: Callable[[], Any]) -> Any:
        """``work()`` (a JSON value), or what an earlier build of the board found for the same pair."""
        if self.kept is None:
            return work()
        key = self.kept.key(kind, first, second)
        known, fact = self.kept.fact(key)
        if not known:
            fact = work()
            self.kept.remember(key, fact)
        return fact

    def _test(self, first: Result, second: Result) -> Bootstrap | None:
        from harness.leaderboard.compare import statistic_of

        try:
            if statistic_of(first, first.record.main_metric) != statistic_of(second, second.record.main_metric):
                return None
            a, b = self.values(first), self.values(second)
            if a is None or b is None or a.keys() != b.keys():
                return None
            drawn_a, drawn_b = self._drawn(first), self._drawn(second)
        except (HarnessError, ValueError):
            return None
        if drawn_a is None or drawn_b is None or not np.array_equal(drawn_a[0].reference, drawn_b[0].reference):
            return None
        return _bootstrap(drawn_a, drawn_b)


def _bootstrap(first: tuple[Units, np.ndarray], second: tuple[Units, np.ndarray]) -> Bootstrap | None:
    """``paired_bootstrap``'s outcome from the two results' resampled statistics."""
    everything = np.arange(len(first[0]))[None, :]
    observed_a, observed_b = float(first[0].statistic(everything)[0]), float(second[0].statistic(everything)[0])
    delta = first[1] - second[1]
    delta = delta[np.isfinite(delta)]
    if not delta.size or not math.isfinite(observed_a - observed_b):
        return None
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(delta, [tail, 1 - tail])
    p_value = min(1.0, 2 * min(float(np.mean(delta <= 0)), float(np.mean(delta >= 0))))
    return Bootstrap(
        observed_a, observed_b, observed_a - observed_b, float(low), float(high), p_value, CONFIDENCE,
        RESAMPLES, int(delta.size), 0,
    )  # fmt: skip


def _role_columns(board: Board, family: Family, columns: Sequence[Column]) -> tuple[str, list[Column]] | None:
    """The ranking role and its columns; the next display role with ranked columns when it has none."""
    roles = [family.ranking_role] + [r for r in family.tasks if r != family.ranking_role]
    for role in (r for r in roles if r is not None):
        found = [c for c in columns if c.role == role and info_of(board.example(c), c.metric).rank_sign != 0]
        if found:
            return role, found
    return None


def _directions(board: Board, columns: Sequence[Column]) -> list[Direction]:
    """The columns with their data set and direction, grouped by data set (with the signature parts that differ
    where one data set and direction has several columns, and a ``limit``), sorted by group and direction."""
    found = []
    for column in columns:
        example = board.example(column)
        found.append((column, dataset_of(example), pair_of(example)))
    keys = [(dataset, pair) for _, dataset, pair in found]
    parts: dict[Signature, list[str]] = {}
    for key in set(keys):
        parts.update(telling_apart(c.signature for c, d, p in found if (d, p) == key and keys.count(key) > 1))
    directions = []
    for column, dataset, pair in found:
        differing = _subset(column.signature, parts.get(column.signature, []))
        group = f"{dataset} ({', '.join(differing)})" if differing else dataset
        directions.append(Direction(column, dataset, pair, group))
    return sorted(directions, key=lambda d: (d.dataset, d.group, d.pair or ""))


def _subset(signature: Signature, differing: list[str]) -> list[str]:
    """The parts a column's heading shows: ``differing``, and ``limit:N`` of a run on the first N items even when
    no other column differs from it (a subset never reads as the whole data set; its ``items:`` then says
    nothing more), so that the limited columns of one data set share a heading."""
    limit = [f"{name}:{value}" for name, value in signature.args if name == "limit"]
    if not limit:
        return differing
    return limit + [part for part in differing if part not in limit and not part.startswith("items:")]


def _twins(rows: list[RankedRow], samples: Samples) -> list[RankedRow]:
    """Rows merged where two models' outputs are identical on every shared direction (items where logged); only
    rows with the same numbers in every cell are compared (grouped by them first)."""
    merged: list[RankedRow] = []
    candidates: dict[tuple[object, ...], list[int]] = {}
    for row in rows:
        numbers = (row.group, *((c.value, c.interval, c.std) if c else None for c in row.cells))
        same = candidates.setdefault(numbers, [])
        twin = next((index for index in same if _same(merged[index], row, samples)), None)
        if twin is None:
            same.append(len(merged))
            merged.append(row)
            continue
        first = merged[twin]
        merged[twin] = RankedRow(
            first.labels + row.labels, first.keys + row.keys, first.group, None, False, first.mean, first.interval,
            first.count, first.cells, first.results, first.note,
        )  # fmt: skip
    return merged


def _same(a: RankedRow, b: RankedRow, samples: Samples) -> bool:
    shared = [i for i, (x, y) in enumerate(zip(a.results, b.results)) if x is not None and y is not None]
    if not shared or [i for i, r in enumerate(a.results) if r] != [i for i, r in enumerate(b.results) if r]:
        return False
    for i in shared:
        x, y = a.cells[i], b.cells[i]
        if x is None or y is None or x.value is None or (x.value, x.interval, x.std) != (y.value, y.interval, y.std):
            return False
    first, second = a.results, b.results
    return all(samples.identical(first[i], second[i]) is not False for i in shared)  # type: ignore[arg-type]


def _ranked_directions(runs: dict[str, tuple[Result | None, ...]], controls: set[str]) -> tuple[int, ...]:
    """The directions the mean is taken over: the set of directions that the most models (controls aside) were run
    on exactly; among equally common sets the larger, then the first."""
    sets: dict[tuple[int, ...], int] = {}
    for key, results in runs.items():
        if key not in controls or len(controls) == len(runs):
            own = tuple(i for i, result in enumerate(results) if result is not None)
            sets[own] = sets.get(own, 0) + 1
    return max(sets, key=lambda own: (sets[own], len(own), [-i for i in own]))


def _one_per_direction(board: Board, directions: Sequence[Direction], over: Sequence[int]) -> tuple[int, ...]:
    """Of the ranked directions, one column per data set and direction: where one has several (another setting of
    a task argument, CoMMuTE's ``prefix_removal``), the one with the most arguments at the task's defaults (then the
    first), so that no item counts twice in a mean."""
    kept: dict[tuple[str, str | None], int] = {}
    for index in over:
        direction = directions[index]
        key = (direction.dataset, direction.pair)
        if key not in kept or at_defaults(board.example(direction.column)) > at_defaults(
            board.example(directions[kept[key]].column)
        ):
            kept[key] = index
    return tuple(sorted(kept.values()))


def at_defaults(record: ResultRecord) -> int:
    """How many of a record's task arguments are at its task's defaults, one it does not record counting as at its
    default (0 when the task is not installed): of several settings of one data set and direction, the family
    ranks (and plots) the one with the most."""
    from harness.plugins.registry import get_registry

    try:
        params = get_registry().get("task", record.task).load().params
    except HarnessError:
        return 0
    return sum(1 for name, param in params.items() if record.task_args.get(name, param.default) == param.default)


def rank_family(
    board: Board, family: Family, columns: Sequence[Column], samples: Samples, test: Tester | None = None
) -> Ranking | None:
    """The family's ranked table (None when no role of it has a column with a direction); ``test``: the paired
    test of two results (default ``samples.test``)."""
    found = _role_columns(board, family, columns)
    if found is None:
        return None
    role, role_columns = found
    directions = _directions(board, role_columns)
    info = info_of(board.example(directions[0].column), directions[0].column.metric)
    tester = test or samples.test
    apart_of = controls(board)
    runs: dict[str, tuple[Result | None, ...]] = {}
    for key in board.labels:
        results = tuple(board.cells.get((key, d.column)) for d in directions)
        if any(results):
            runs[key] = results
    over = _one_per_direction(board, directions, _ranked_directions(runs, set(apart_of)))
    rows = []
    for key, results in runs.items():
        cells = tuple(cell_of(r.record, r.record.main_metric) if r else None for r in results)
        shared = [c for i in over if (c := cells[i]) is not None]
        fixed = all(r is None or r.fixed for r in (results[i] for i in over))
        defined = [c for c in shared if c.value is not None]
        full = len(defined) == len(over) and not fixed
        counted = defined if full else [c for c in cells if c is not None and c.value is not None]
        values = [c.value for c in counted if c.value is not None]
        mean = sum(values) / len(values) if values else None
        group, note = RANKED, ""
        if key in apart_of:
            group, note = CONTROL, apart_of[key]
        elif fixed and shared:
            group, note = APART, "values fixed by construction or undefined: not ranked"
        elif not full:
            group, note = APART, f"run on {len(shared)} of the {len(over)} ranked directions: not ranked"
        rows.append(
            RankedRow(
                (board.labels[key],), (key,), group, None, False, mean,
                mean_interval(counted), len(counted), cells, results, note,
            )
        )  # fmt: skip
    rows = _twins(rows, samples)
    ranked, method = clusters([r for r in rows if r.group == RANKED], info.rank_sign, tester, over)
    rest = sorted(
        (r for r in rows if r.group != RANKED),
        key=lambda r: (r.group == CONTROL, r.mean is None, -info.rank_sign * (r.mean or 0.0), r.label),
    )
    return Ranking(
        family, role, directions[0].column.metric, info, tuple(directions), over, tuple(ranked + rest),
        method,
    )  # fmt: skip


def rankings(board: Board, samples: Samples | None = None) -> list[Ranking]:
    """One ranked table per family present, in the board's family order (``samples``: the logs read so far)."""
    found = []
    for family, columns in board.families():
        ranking = rank_family(board, family, columns, samples or Samples())
        if ranking is not None:
            found.append(ranking)
    return found
