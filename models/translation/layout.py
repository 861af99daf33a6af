"""Folders of the multimodal models and their checkpoints.

A multimodal model folder has a ``config.json`` whose ``model_type`` names the adapter
(``vgamt``, ``gated_fusion``, ``cliptrans``) and whose other string entries name its parts:
a subfolder of the folder, an absolute path, or a Hub id. Checkpoints are read from
``.safetensors`` (preferred) or from a PyTorch pickle (``.pth``/``.pt``/``.bin``) loaded with
``weights_only=True``, either a plain state dict or the authors' ``{"model": state_dict, ...}``;
a ``module.`` prefix left by DistributedDataParallel is removed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness_models.loading import KeyMismatch, load_module


def read_layout(folder: str, model_type: str) -> dict[str, Any]:
    """The folder's ``config.json`` with relative part paths resolved against the folder."""
    root = Path(folder).expanduser()
    config_file = root / "config.json"
    if not config_file.is_file():
        raise HarnessError(f"{folder!r} is not a {model_type} folder: it has no config.json (see docs/commute.md)")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise HarnessError(f"{config_file}: not valid JSON ({exc})") from None
    if config.get("model_type") != model_type:
        raise HarnessError(f"{config_file}: model_type is {config.get('model_type')!r}, expected {model_type!r}")
    return {
        key: resolve_part(root, value) if isinstance(value, str) and key != "model_type" else value
        for key, value in config.items()
    }


def resolve_part(root: Path, value: str) -> str:
    """A subfolder or file of ``root`` if it exists there, else the value (absolute path or Hub id)."""
    candidate = root / value
    return str(candidate) if candidate.exists() else value


def load_state_dict(path: str) -> dict[str, Any]:
    """A checkpoint's tensors by name (see the module docstring for the accepted forms)."""
    file = Path(path).expanduser()
    if not file.is_file():
        raise HarnessError(f"checkpoint {path!r} not found")
    state: Any  # safetensors gives a dict of tensors; torch.load whatever the file pickled
    if file.suffix == ".safetensors":
        from safetensors.torch import load_file

        state = load_file(str(file))
    else:
        import torch

        try:
            state = torch.load(file, map_location="cpu", weights_only=True)
        except Exception as exc:  # a pickle with arbitrary objects, or not a checkpoint at all
            raise HarnessError(f"checkpoint {path!r} cannot be read safely: {type(exc).__name__}: {exc}") from None
        if isinstance(state, dict) and isinstance(state.get("model"), dict):
            state = state["model"]
    if not isinstance(state, dict) or not state:
        raise HarnessError(f"checkpoint {path!r} holds no state dict")
    return {key.removeprefix("module."): value for key, value in state.items()}


def load_into(
    module: Any, state: dict[str, Any], what: str, strict: bool = True, ignored: Iterable[str] = ()
) -> KeyMismatch:
    """Load ``state`` into ``module``; keys under an ``ignored`` prefix are dropped, the others must match
    (see ``harness_models.loading``). Returns the keys that did not match (empty when ``strict``)."""
    ignored = tuple(ignored)
    kept = {key: value for key, value in state.items() if not key.startswith(ignored)}
    return load_module(module, kept, what, strict)
