"""What a task receives besides its data and model: seeds, progress, and auxiliary models."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.cache import Cache
from harness.cached_model import CachedModel
from harness.capabilities import Capability
from harness.progress import Progress


@dataclass
class RunContext:
    """Run-wide settings handed to ``Task.evaluate``.

    ``aux_models`` maps a role (``"image"`` for ``--image-model``) to a model name and its
    arguments; ``load_model`` builds such a model through the same resolution, cache and
    partition as the main model, once per run (``loaded_models`` is shared across tasks).
    """

    seeds: list[int]
    batch_size: int = 32
    device: str = "cpu"
    progress: Progress = field(default_factory=lambda: Progress(enabled=False))
    cache: Cache | None = None
    aux_models: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    partition: Any = None
    loaded_models: dict[str, CachedModel] = field(default_factory=dict)

    def load_model(self, role: str, capability: Capability, task_name: str) -> CachedModel | None:
        """The auxiliary model given for ``role``, or None when the user gave none."""
        if role not in self.aux_models:
            return None
        if role not in self.loaded_models:
            from harness.registry import get_registry
            from harness.resolve import build_adapter

            name, args = self.aux_models[role]
            adapter = build_adapter(
                get_registry(), name, args, {task_name: [capability]}, device=self.device, batch_size=self.batch_size
            )
            self.loaded_models[role] = CachedModel(adapter, self.cache, self.progress, self.partition)
        return self.loaded_models[role]
