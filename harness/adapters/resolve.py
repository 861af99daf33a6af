"""From a command-line model name to an adapter: presets, Hub ids and local folders."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.errors import CapabilityError, HarnessError, UnknownNameError
from harness.plugins.registry import Registration, Registry


def _looks_like_source(name: str) -> bool:
    return Path(name).expanduser().exists() or ("/" in name and not name.startswith("/") and name.count("/") == 1)


def _config_model_type(source: str) -> str | None:
    config = Path(source).expanduser() / "config.json"
    if not config.is_file():
        return None
    try:
        model_type = json.loads(config.read_text()).get("model_type")
    except (OSError, ValueError):
        return None
    return model_type if isinstance(model_type, str) else None


def find_adapter(
    registry: Registry, name: str, args: dict[str, Any], needs: Iterable[Capability]
) -> tuple[Registration, dict[str, Any]]:
    """The registration serving ``name`` and the adapter arguments to build it with.

    A registered name is a preset or adapter (its ``preset`` arguments are overlaid with the
    user's). Otherwise ``name`` is a Hub id or folder, handed to the adapter as ``pretrained``:
    ``adapter=NAME`` in the model arguments chooses it, else a registered adapter whose
    ``config_model_types`` lists the folder's ``model_type``, else the one registered as
    ``default_for`` the first capability the tasks need.
    """
    args = dict(args)
    if name in registry.entries["model"] and "adapter" not in args:
        registration = registry.get("model", name)
        return registration, {**registration.info.get("preset", {}), **args}
    if "adapter" in args:
        registration = registry.get("model", args.pop("adapter"))
        return registration, {**registration.info.get("preset", {}), "pretrained": name, **args}
    if not _looks_like_source(name):
        raise UnknownNameError(
            "model", name, registry.entries["model"], listing="run `harness list models`, or give a Hub id or a folder"
        )
    models = registry.entries["model"].values()
    model_type = _config_model_type(name)
    if model_type is not None:
        for registration in models:
            if model_type in registration.info.get("config_model_types", ()):
                return registration, {"pretrained": name, **args}
    for capability in needs:
        for registration in models:
            if capability.value in registration.info.get("default_for", ()):
                return registration, {"pretrained": name, **args}
    raise HarnessError(
        f"no adapter found for model {name!r}: pass --model-args adapter=NAME (see `harness list models`)"
    )


def check_protocols(model_name: str, adapter_class: type[ModelAdapter]) -> None:
    """Fail before loading anything when the adapter lacks a method of a capability it declares (MTEB checks its
    encoder protocol the same way)."""
    adapter = f"{adapter_class.__module__}:{adapter_class.__qualname__}"
    for capability in adapter_class.capabilities:
        if not isinstance(capability, Capability):
            raise HarnessError(
                f"model {model_name!r}: adapter {adapter} declares the capability {capability!r}, which is "
                "not a harness.adapters.capabilities.Capability (write Capability.TEXT_ENCODER, not 'text_encoder')"
            )
        missing = capability.missing_methods(adapter_class)
        if missing:
            raise HarnessError(
                f"model {model_name!r}: adapter {adapter} declares {capability.value} but does not implement "
                f"{', '.join(missing)} (the {capability.protocol.__name__} protocol)"
            )


def check_capabilities(
    model_name: str, adapter_class: type[ModelAdapter], tasks: Mapping[str, Iterable[Capability]]
) -> None:
    """Fail before loading anything when the adapter breaks a protocol it declares, or cannot serve one of the tasks."""
    check_protocols(model_name, adapter_class)
    provided = adapter_class.capabilities
    for task_name, needs in tasks.items():
        for capability in needs:
            if capability not in provided:
                raise CapabilityError(
                    f"model {model_name!r} cannot serve task {task_name!r}: it is not {capability.noun}"
                )


def build_adapter(
    registry: Registry,
    name: str,
    args: Mapping[str, Any],
    needs: Mapping[str, Iterable[Capability]],
    *,
    device: str,
    batch_size: int,
) -> ModelAdapter:
    """Resolve, check capabilities, and construct the adapter (weights are loaded later, lazily)."""
    all_needs = [c for caps in needs.values() for c in caps]
    registration, adapter_args = find_adapter(registry, name, dict(args), all_needs)
    adapter_class = registration.load()
    if not (isinstance(adapter_class, type) and issubclass(adapter_class, ModelAdapter)):
        raise HarnessError(
            f"model {registration.name!r} from plugin {registration.plugin!r} is not a ModelAdapter subclass"
        )
    check_capabilities(name, adapter_class, needs)
    return adapter_class(name, adapter_args, device=device, batch_size=batch_size)


def check_available_offline(identity: ModelIdentity, option: str = "--model") -> None:
    """With ``HF_HUB_OFFLINE=1``, a Hub model that is not in the local cache fails the preflight, not the run.

    ``hub_revision`` marks such a model's revision "unresolved" (the Hub could not be asked and the
    local cache had no snapshot of it); loading it would fail after the data and the other models.
    ``option`` is the command-line option that named the model (``--image-model`` for the image role).
    """
    if "unresolved" not in (identity.revision or "") or not identity.source:
        return
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        raise HarnessError(
            f"model {identity.name!r} is not available offline: HF_HUB_OFFLINE=1 and {identity.source!r} is not in "
            f"the local Hugging Face cache ({constants.HF_HUB_CACHE}); run once with network to download it, "
            f"or give a local folder as {option}"
        )
