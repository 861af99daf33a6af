"""One adapter per distinct model of a suite, built once and shared by every cell that uses it.

Two entries of a suite name the same model when they resolve to the same adapter with the same arguments
(``e5-small-hf`` and ``{name: e5-small-hf, args: {layer: 9}}`` when 9 is the default), on the same device with
the same batch size: their cells then run on one adapter instance, whose weights load once (adapters load
lazily, on first use). The runner takes the instance as ``harness.evaluate`` takes any ``ModelAdapter``; its
identity, and so every signature, is the one a ``harness run --model NAME`` would record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter
from harness.adapters.resolve import build_adapter
from harness.plugins.registry import Registry
from harness.results.signature import identifying_args
from harness.run.runner import resolve_device
from harness.suite.grid import as_json
from harness.suite.spec import Cell

ModelKey = tuple[str, str, str, str, int]


def needs_of(registry: Registry, tasks: Sequence[str]) -> dict[str, tuple[Capability, ...]]:
    """Task name -> the capabilities it requires (what ``harness run`` resolves a model name against)."""
    return {name: tuple(registry.load("task", name).requires) for name in tasks}


def cell_device(cell: Cell) -> str:
    """The device a cell runs on (its group's ``device`` option, else ``auto``), resolved as the runner does."""
    return resolve_device(str(cell.group.options.get("device", "auto")))


def cell_batch_size(cell: Cell) -> int:
    """The batch size a cell runs with (its group's ``batch_size`` option, else the runner's default, 32)."""
    return int(cell.group.options.get("batch_size", 32))


class ModelPool:
    """The adapters of a suite's cells: one per distinct model, built when first asked (weights load on use)."""

    def __init__(self, registry: Registry):
        self.registry = registry
        self._adapters: dict[ModelKey, ModelAdapter] = {}
        self._recorded: dict[ModelKey, dict[str, Any]] = {}

    def key(self, cell: Cell) -> ModelKey:
        """What makes two cells' models the same: adapter class, name, resolved arguments, device, batch size."""
        return _key(self.adapter(cell))

    def adapter(self, cell: Cell) -> ModelAdapter:
        """The cell's adapter, shared with every earlier cell whose model resolves to the same one."""
        built = build_adapter(
            self.registry,
            cell.model.name,
            dict(cell.model.args),
            needs_of(self.registry, cell.group.tasks),
            device=cell_device(cell),
            batch_size=cell_batch_size(cell),
        )
        return self._adapters.setdefault(_key(built), built)

    def recorded_args(self, cell: Cell) -> dict[str, Any]:
        """The adapter arguments a results line of the cell is known by (its identity's, with a dtype an argument
        chose: ``identifying_args``), read once per model."""
        adapter = self.adapter(cell)
        key = _key(adapter)
        if key not in self._recorded:
            self._recorded[key] = identifying_args(adapter.identity().as_dict())
        return self._recorded[key]

    def release(self, key: ModelKey) -> None:
        """Forget a model no cell needs any more (its weights are freed with the last reference)."""
        self._adapters.pop(key, None)


def _key(adapter: ModelAdapter) -> ModelKey:
    return (adapter.adapter_name, adapter.name, as_json(adapter.args), adapter.device, adapter.batch_size)


def by_model(pool: ModelPool, cells: Sequence[tuple[int, Cell]]) -> list[tuple[ModelKey, list[tuple[int, Cell]]]]:
    """The cells grouped by model, models in the order of their first cell, cells in file order within a model."""
    groups: dict[ModelKey, list[tuple[int, Cell]]] = {}
    for index, cell in cells:
        groups.setdefault(pool.key(cell), []).append((index, cell))
    return list(groups.items())
