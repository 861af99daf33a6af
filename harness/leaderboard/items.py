"""The items behind a value, from its per-sample log (full or compact), and the items on which two models
disagree most (``harness compare A B --task T --items N``, and the model pages).

An item is an ``id``: its samples (one per seed) are averaged field by field. What a log holds depends on
the task and on whether it was kept compact: a compact log keeps only the fields its metric reads (for
XLR ``hit`` and ``rr``, the rank of an item's own target being about ``1 / rr``; no texts), a full
CoMMuTE log the tuple with each translation's perplexity under each image and which were right, a
YiSi-2 log the pair's score and label. Texts are shown where the log has them, and said to be absent
where it does not.
"""

from __future__ import annotations

import gzip
import math
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from harness.errors import HarnessError
from harness.leaderboard.merge import Board, Result
from harness.results.bootstrap import Statistic
from harness.results.jsonl import BadLine, json_lines
from harness.results.samples import COMPACT_SUFFIX, Key, samples_path

SKIPPED = ("signature", "seed", "lines", "id")
RANK = "rank ≈ 1/rr"


def _rows(result: Result) -> Iterator[dict[str, Any]]:
    """The log's sample rows (its header skipped), plain or gzip-compressed."""
    path = samples_path(result.entry)
    opener = gzip.open if path.suffix == COMPACT_SUFFIX else open
    try:
        with opener(path, "rb") as handle:
            for item in json_lines(handle, str(path)):
                if isinstance(item, BadLine):
                    raise HarnessError(f"{path}: cannot read its samples (line {item.line}: {item.reason})")
                if isinstance(item[1], dict) and "id" in item[1]:
                    yield item[1]
    except (OSError, EOFError, zlib.error) as exc:
        raise HarnessError(f"{path}: cannot read its samples ({exc})") from None


def _flat(row: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested fields as ``outer inner`` keys (CoMMuTE's ``ppl`` per translation and image)."""
    found: dict[str, Any] = {}
    for name, value in row.items():
        if name in SKIPPED and not prefix:
            continue
        if isinstance(value, dict):
            found.update(_flat(value, f"{prefix}{name} "))
        else:
            found[f"{prefix}{name}"] = value
    return found


@dataclass(frozen=True)
class Items:
    """The items of one result: the fields in order, one row per id (numbers averaged over its ``seeds``)."""

    fields: tuple[str, ...]
    rows: tuple[tuple[str, tuple[Any, ...]], ...]
    seeds: int
    compact: bool


def read_items(result: Result) -> Items:
    """The items behind a result (raises ``HarnessError`` when its log is missing or unreadable)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    seeds: set[Any] = set()
    for row in _rows(result):
        seeds.add(row.get("seed"))
        grouped.setdefault(str(row["id"]), []).append(_flat(row))
    fields: list[str] = []
    for samples in grouped.values():
        for sample in samples:
            fields += [name for name in sample if name not in fields]
    if "rr" in fields and "rank" not in fields:
        fields.insert(fields.index("rr") + 1, RANK)
    rows = []
    for item, samples in grouped.items():
        values = []
        for name in fields:
            if name == RANK:
                rr = _mean([s.get("rr") for s in samples])
                values.append(round(1 / rr, 1) if isinstance(rr, float) and rr > 0 else None)  # 1/(1/49) = 49.00..1
            else:
                values.append(_mean([s.get(name) for s in samples]))
        rows.append((item, tuple(values)))
    compact = samples_path(result.entry).suffix == COMPACT_SUFFIX
    return Items(tuple(fields), tuple(rows), len(seeds), compact)


def _mean(values: list[Any]) -> Any:
    """The mean of numbers (one value: itself); text and other values: the first."""
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if numbers and len(numbers) == len(values):
        return numbers[0] if len(numbers) == 1 else sum(numbers) / len(numbers)
    return values[0] if values else None


def item_values(values: Mapping[Key, tuple[float, ...]], statistic: Statistic) -> dict[str, float]:
    """One number per item for comparing two models: a ``mean`` statistic's fields averaged over the item's
    samples; a correlation's or AUC's score (its first field) standardised over the items (scales differ)."""
    grouped: dict[str, list[float]] = {}
    for (_, item), numbers in values.items():
        chosen = numbers if statistic.kind == "mean" else numbers[:1]
        grouped.setdefault(item, []).extend(chosen)
    found = {item: sum(v) / len(v) for item, v in grouped.items()}
    if statistic.kind == "mean" or len(found) < 2:
        return found
    centre = sum(found.values()) / len(found)
    spread = math.sqrt(sum((v - centre) ** 2 for v in found.values()) / len(found)) or 1.0
    return {item: (v - centre) / spread for item, v in found.items()}


@dataclass(frozen=True)
class Disagreement:
    """An item on which two models differ: each one's number (``item_values``) and the difference A - B."""

    item: str
    a: float
    b: float

    @property
    def difference(self) -> float:
        """A - B."""
        return self.a - self.b


def disagreements(
    a: Mapping[str, float],
    b: Mapping[str, float],
    count: int,
    finer: tuple[Mapping[str, float], Mapping[str, float]] | None = None,
) -> list[Disagreement]:
    """The ``count`` shared items with the largest |A - B|, largest first; ties broken by the largest difference
    in ``finer`` values (another logged field, e.g. the reciprocal rank under a 0/1 hit), then by item id."""
    shared = sorted(a.keys() & b.keys())
    found = [Disagreement(item, a[item], b[item]) for item in shared]

    def finer_gap(item: str) -> float:
        return abs(finer[0].get(item, 0.0) - finer[1].get(item, 0.0)) if finer else 0.0

    found.sort(key=lambda d: (-abs(d.difference), -finer_gap(d.item), d.item))
    return [d for d in found[:count] if d.difference != 0]


def finer_values(result: Result, statistic: Statistic) -> dict[str, float] | None:
    """Per item, the mean of the logged fields the line's other statistics read (None when there are none)."""
    from harness.results.samples import read_samples, statistic_fields

    others = tuple(f for f in statistic_fields(result.record) if f not in statistic.fields)
    if not others:
        return None
    return item_values(read_samples(result.entry, others), Statistic("mean", others))


def format_disagreements(found: list[Disagreement], label_a: str, label_b: str, statistic: Statistic) -> str:
    """``harness compare --items``: the items as plain lines."""
    what = (
        "mean of " + ",".join(statistic.fields) if statistic.kind == "mean" else f"standardised {statistic.fields[0]}"
    )
    if not found:
        return f"the two models agree on every shared item ({what})"
    width = max(len(d.item) for d in [*found, Disagreement("item", 0, 0)])
    lines = [f"items where {label_a} and {label_b} disagree most ({what} per item):"]
    lines.append(f"{'item':<{width}}  {'A':>8}  {'B':>8}  {'A - B':>8}")
    lines += [f"{d.item:<{width}}  {d.a:8.4f}  {d.b:8.4f}  {d.difference:+8.4f}" for d in found]
    return "\n".join(lines)


def compared_items(
    board: Board, a: str, b: str, task: str, select: Mapping[str, Any], count: int
) -> tuple[list[Disagreement], str]:
    """``harness compare A B --task T --items N``: the N items where A and B differ most, and the same as plain
    lines."""
    from harness.leaderboard.compare import choose_pair, statistic_of
    from harness.results.samples import read_samples

    if count < 1:
        raise HarnessError(f"--items must be at least 1, got {count}")
    first, second = choose_pair(board, a, b, task, select)
    statistic = statistic_of(first, first.record.main_metric)
    values = [item_values(read_samples(r.entry, statistic.fields), statistic) for r in (first, second)]
    finer = [finer_values(r, statistic) for r in (first, second)]
    pair = (finer[0], finer[1]) if finer[0] is not None and finer[1] is not None else None
    found = disagreements(values[0], values[1], count, pair)
    return found, format_disagreements(found, first.model_label, second.model_label, statistic)
