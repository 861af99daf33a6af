"""Reading a sentence-transformers model folder (or Hub repository) without sentence-transformers.

Supported modules (``modules.json``): Transformer (the Hugging Face model, at the root or in a
sub-folder), Pooling (CLS, mean or max), Dense (a linear layer and an activation) and
Normalize. Anything else is refused by name rather than silently skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

ACTIVATIONS = ("Tanh", "Identity", "ReLU", "GELU", "Sigmoid")
_LEGACY_POOLING = {
    "pooling_mode_cls_token": "cls",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_POOLING_NAMES = {
    "cls": "cls",
    "cls_token": "cls",
    "mean": "mean",
    "mean_tokens": "mean",
    "max": "max",
    "max_tokens": "max",
}


@dataclass
class SentenceTransformersConfig:
    """What the text encoder needs from a sentence-transformers folder."""

    transformer_path: str = ""
    pooling: str | None = None
    dense_paths: list[str] = field(default_factory=list)
    normalize: bool = False
    max_seq_length: int | None = None
    do_lower_case: bool = False


def model_file(source: str, name: str, revision: str | None = None) -> Path | None:
    """A file of a local model folder or Hub repository, or None when it has no such file."""
    local = Path(source).expanduser()
    if local.is_dir():
        path = local / name
        return path if path.is_file() else None
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    try:
        return Path(hf_hub_download(source, name, revision=revision))
    except (EntryNotFoundError, LocalEntryNotFoundError):
        return None


def _json(source: str, name: str, revision: str | None) -> dict[str, Any] | list[Any] | None:
    path = model_file(source, name, revision)
    if path is None:
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HarnessError(f"{source}: {name} cannot be read: {exc}") from None


def _json_object(source: str, name: str, revision: str | None) -> dict[str, Any]:
    """The JSON object in ``name`` (empty when the file is absent), or a ``HarnessError`` for anything else."""
    value = _json(source, name, revision)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise HarnessError(f"{source}: {name} must hold a JSON object")
    return value


def _modules(source: str, revision: str | None) -> list[dict[str, Any]] | None:
    """The entries of ``modules.json`` (None when there is none), each a JSON object."""
    modules = _json(source, "modules.json", revision)
    if modules is None:
        return None
    if not isinstance(modules, list) or not all(isinstance(module, dict) for module in modules):
        raise HarnessError(f"{source}: modules.json must hold a list of JSON objects")
    return modules


def read_config(source: str, revision: str | None = None) -> SentenceTransformersConfig | None:
    """The sentence-transformers configuration of ``source``, or None when it is a plain model."""
    modules = _modules(source, revision)
    if modules is None:
        return None
    config = SentenceTransformersConfig()
    for module in modules:
        kind, path = str(module.get("type", "")).rsplit(".", 1)[-1], module.get("path", "")
        if kind == "Transformer":
            config.transformer_path = path
            settings = _json_object(source, _join(path, "sentence_bert_config.json"), revision)
            config.max_seq_length = settings.get("max_seq_length")
            config.do_lower_case = bool(settings.get("do_lower_case", False))
        elif kind == "Pooling":
            config.pooling = pooling_mode(source, _json_object(source, _join(path, "config.json"), revision))
        elif kind == "Dense":
            config.dense_paths.append(path)
        elif kind == "Normalize":
            config.normalize = True
        else:
            raise HarnessError(
                f"{source}: sentence-transformers module {module.get('type')!r} is not supported "
                "(supported: Transformer, Pooling, Dense, Normalize)"
            )
    return config


def pooling_mode(source: str, config: dict[str, Any]) -> str:
    """The one pooling mode of a Pooling module config (new ``pooling_mode`` or legacy flags)."""
    if "pooling_mode" in config:
        raw = config["pooling_mode"]
        modes = [raw] if isinstance(raw, str) else list(raw)
    else:
        modes = [name for key, name in _LEGACY_POOLING.items() if config.get(key)]
    if len(modes) != 1 or modes[0] not in _POOLING_NAMES:
        raise HarnessError(f"{source}: pooling {modes} is not supported (one of cls, mean or max)")
    return _POOLING_NAMES[modes[0]]


def load_dense(source: str, path: str, revision: str | None = None) -> Any:
    """A Dense module as ``torch.nn.Sequential(Linear, activation)``, weights from safetensors (or a .bin)."""
    import torch

    settings = _json(source, _join(path, "config.json"), revision)
    if not isinstance(settings, dict):
        raise HarnessError(f"{source}: Dense module {path!r} has no config.json")
    activation = str(settings.get("activation_function", "torch.nn.modules.linear.Identity")).rsplit(".", 1)[-1]
    if activation not in ACTIVATIONS:
        raise HarnessError(
            f"{source}: Dense activation {activation!r} is not supported (one of {', '.join(ACTIVATIONS)})"
        )
    weights_file = model_file(source, _join(path, "model.safetensors"), revision)
    if weights_file is not None:
        from safetensors.torch import load_file

        weights = load_file(str(weights_file))
    else:
        weights_file = model_file(source, _join(path, "pytorch_model.bin"), revision)
        if weights_file is None:
            raise HarnessError(f"{source}: Dense module {path!r} has no model.safetensors or pytorch_model.bin")
        weights = torch.load(weights_file, map_location="cpu", weights_only=True)
    linear = torch.nn.Linear(
        int(settings["in_features"]), int(settings["out_features"]), bias=bool(settings.get("bias", True))
    )
    linear.load_state_dict({key.removeprefix("linear."): value for key, value in weights.items()})
    return torch.nn.Sequential(linear, getattr(torch.nn, activation)())


def _join(path: str, name: str) -> str:
    return f"{path}/{name}" if path else name
