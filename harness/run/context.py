"""What a task receives besides its data and model: seeds, progress, and auxiliary models."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.adapters.cache import Cache
from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability
from harness.errors import HarnessError
from harness.progress import Progress

AUX_CAPABILITIES = {"image": Capability.IMAGE_ENCODER}  # role -> what the model must do (--image-model)


@dataclass
class RunContext:
    """Run-wide settings handed to ``Task.evaluate``.

    ``aux_models`` maps a role (``"image"`` for ``--image-model``) to a model name and its
    arguments; ``load_model`` builds such a model through the same resolution, cache and
    partition as the main model, once per run (``loaded_models`` is shared across tasks).
    ``roles`` are the roles the running task declared (``Task.aux_roles``): only those load.
    """

    seeds: list[int]
    batch_size: int = 32
    device: str = "cpu"
    progress: Progress = field(default_factory=lambda: Progress(enabled=False))
    cache: Cache | None = None
    aux_models: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    partition: Any = None
    loaded_models: dict[str, CachedModel] = field(default_factory=dict)
    roles: tuple[str, ...] = ()

    def load_model(self, role: str, task_name: str) -> CachedModel | None:
        """The auxiliary model given for ``role`` (built once per run), or None when the user gave none."""
        if role not in self.aux_models:
            return None
        if role not in self.roles:
            raise HarnessError(
                f"task {task_name!r} loads the auxiliary model {role!r} but does not declare it in "
                "aux_roles, so that model would be missing from its signature"
            )
        if role not in self.loaded_models:
            from harness.adapters.resolve import build_adapter
            from harness.plugins.registry import get_registry

            name, args = self.aux_models[role]
            adapter = build_adapter(
                get_registry(),
                name,
                args,
                {task_name: [AUX_CAPABILITIES[role]]},
                device=self.device,
                batch_size=self.batch_size,
            )
            self.loaded_models[role] = CachedModel(adapter, self.cache, self.progress, self.partition)
        return self.loaded_models[role]

    def aux_identities(self, task_name: str) -> dict[str, dict[str, Any]]:
        """Role -> identity of each auxiliary model the task declared and the user gave (no weights loaded)."""
        models = {role: self.load_model(role, task_name) for role in self.roles}
        return {role: model.identity.as_dict() for role, model in models.items() if model is not None}
