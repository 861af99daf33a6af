"""What a task receives besides its data and model: seeds, progress, and auxiliary models."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from harness.adapters.cache import Cache
from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability
from harness.adapters.inmemory import adapter_is_cacheable
from harness.adapters.resolve import build_adapter, check_available_offline
from harness.errors import HarnessError
from harness.plugins.registry import Registry, get_registry
from harness.progress import Progress
from harness.run.roles import role_capabilities


def resolve_aux_models(
    registry: Registry,
    given: Mapping[str, tuple[str, dict[str, Any]]],
    declared: Iterable[tuple[str, Mapping[str, Capability]]],
    *,
    device: str,
    batch_size: int,
    cache: Cache | None,
    progress: Progress,
    partition: Any = None,
) -> dict[str, CachedModel]:
    """Role -> model for every role the user gave a model for and a task of the run declares (no weights loaded).

    ``given`` maps a role to a model name and its arguments; ``declared`` holds (task name, role ->
    capability) pairs. Each model is resolved through ``registry`` (the run's own) and must have the
    capability of every task that declares its role: a model that cannot serve one is refused here,
    before any inference. ``cache`` is used for the models whose outputs can be cached.
    """
    needs: dict[str, dict[str, list[Capability]]] = {}
    for task_name, roles in declared:
        for role, capability in roles.items():
            needs.setdefault(role, {}).setdefault(task_name, []).append(capability)
    models = {}
    for role, (name, args) in given.items():
        if role not in needs:
            continue  # no task of this run uses it (--image-model with xlr alone)
        adapter = build_adapter(registry, name, args, needs[role], device=device, batch_size=batch_size)
        models[role] = CachedModel(adapter, cache if adapter_is_cacheable(adapter) else None, progress, partition)
        check_available_offline(models[role].identity, "--image-model" if role == "image" else f"the {role} model")
    return models


@dataclass
class RunContext:
    """Run-wide settings handed to ``Task.evaluate``.

    ``aux_models`` maps a role (``"image"`` for ``--image-model``) to a model name and its
    arguments. A run resolves them before any inference (``resolve_aux_models``, with the run's
    registry) into ``loaded_models``, shared across tasks; a context built by hand resolves a role
    on first use, through ``registry`` (default: the installed plugins). ``roles`` are the roles the
    running task declared (``Task.aux_roles``: role -> capability, or role names): only those load.
    """

    seeds: list[int]
    batch_size: int = 32
    device: str = "cpu"
    progress: Progress = field(default_factory=lambda: Progress(enabled=False))
    cache: Cache | None = None
    aux_models: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    partition: Any = None
    loaded_models: dict[str, CachedModel] = field(default_factory=dict)
    roles: Mapping[str, Capability] | tuple[str, ...] = ()
    registry: Registry | None = None

    def load_model(self, role: str, task_name: str) -> CachedModel | None:
        """The auxiliary model given for ``role`` (built once per run), or None when the user gave none."""
        if role not in self.aux_models and role not in self.loaded_models:
            return None
        capabilities = role_capabilities(self.roles, f"task {task_name!r}")
        if role not in capabilities:
            raise HarnessError(
                f"task {task_name!r} loads the auxiliary model {role!r} but does not declare it in "
                "aux_roles, so that model would be missing from its signature"
            )
        if role not in self.loaded_models:
            self.loaded_models.update(
                resolve_aux_models(
                    self.registry or get_registry(),
                    {role: self.aux_models[role]},
                    [(task_name, {role: capabilities[role]})],
                    device=self.device,
                    batch_size=self.batch_size,
                    cache=self.cache,
                    progress=self.progress,
                    partition=self.partition,
                )
            )
        return self.loaded_models[role]

    def aux_identities(self, task_name: str) -> dict[str, dict[str, Any]]:
        """Role -> identity of each auxiliary model the task declared and the user gave (no weights loaded)."""
        models = {role: self.load_model(role, task_name) for role in role_capabilities(self.roles, task_name)}
        return {role: model.identity.as_dict() for role, model in models.items() if model is not None}
