"""The suite's grid: cells split into shards, and the configurations a cell writes (to match results lines)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from harness.plugins.registry import Registry
from harness.results.records import ResultRecord
from harness.results.signature import identifying_args
from harness.run.distributed import parse_shard
from harness.suite.spec import Cell, Group, Suite


class Configuration(NamedTuple):
    """What a results line was run with: task, model name and adapter arguments, task arguments (as JSON)."""

    task: str
    model: str
    model_args: str
    task_args: str


def shard_cells(cells: Sequence[Cell], shard: str | None) -> list[tuple[int, Cell]]:
    """The (index, cell) pairs of shard ``"i/N"`` (0 <= i < N): contiguous blocks of the cells in file order, so
    that a shard holds few models (each loaded once); ``None``: every cell."""
    indexed = list(enumerate(cells))
    if not shard:
        return indexed
    part = parse_shard(shard)
    return [(index, cell) for index, cell in indexed if index * part.count // len(cells) == part.index]


def results_folder(suite: Suite, group: Group) -> Path:
    """Where a group's results and logs go: ``<results>/<folder>``."""
    return suite.results / group.folder


def as_json(value: Any) -> str:
    """``value`` as canonical JSON (sorted keys): equal arguments give equal text."""
    return json.dumps(value, sort_keys=True, default=str)


def record_configuration(record: ResultRecord) -> Configuration:
    """The configuration of a results line."""
    return Configuration(
        record.task, str(record.model.get("name")), as_json(identifying_args(record.model)), as_json(record.task_args)
    )


def cell_configurations(
    registry: Registry, cell: Cell, model: str, model_args: Mapping[str, Any]
) -> list[Configuration]:
    """The configuration of each line the cell writes: ``model`` and its recorded (identity) arguments, and the
    task arguments the runner records (defaults filled in)."""
    from harness.run.runner import loader_args, resolve_data_source, resolve_tasks

    found = []
    for task, given in resolve_tasks(registry, list(cell.group.tasks), cell.task_args, cell.group.data_dir):
        source = resolve_data_source(registry, task, cell.group.data_dir)
        recorded = {**loader_args(registry, task, source, given), **task.recorded_args(source.loader)}
        found.append(Configuration(task.name, model, as_json(model_args), as_json(recorded)))
    return found
