"""YAML task presets: a new task as an existing task with its data set, arguments and family fixed.

A preset file holds one preset (a mapping with ``name``) or several (``presets:``, a list,
each item overlaid on an optional ``defaults:`` mapping)::

    name: ikea_en_de_xlr                # the new task's name
    base: xlr                           # the registered task it presets
    description: IKEA en->de cross-lingual retrieval Recall@10
    family: retrieval                   # for `harness list tasks --family`
    languages: [en, de]                 # for `harness list tasks --lang`
    dataset:
      loader: ikea                      # a registered dataset loader
      source: ${HARNESS_DATA_DIR}/ikea  # a folder or Hub id; ${VAR} from the environment; omit for generated data
      split: test                       # the loader's `split` argument
      columns: {id: sku}                # schema column -> data set column (loaders with a `columns` argument)
    args: {src: en, tgt: de, k: 10}     # arguments of the base task or of the loader

A relative ``source`` is a path inside the preset file's folder (a Hub id ``owner/name`` when no
such path exists), whatever the working directory; one that leaves the folder (``../data``), also
through a symbolic link, is refused. A local file (``data/pairs.jsonl``, ``.csv``, ``.tsv``, ``.parquet``)
is read by any loader of Hub data sets (``image-text``) or by the generic ``files`` loader; its
image-path column is read against the file's folder. A preset whose ``base`` is another preset
inherits everything it does not set: ``dataset`` (loader, source, split, columns), ``args``,
``languages``, ``family`` and ``description``; ``dataset`` is required only of a preset of a task. ``name`` follows the task-name grammar (letters, digits, ``_``, ``-``). Presets load from ``--include-path DIR`` (every ``*.yaml`` / ``*.yml`` there) or from a plugin
that calls ``register_yaml(register, folder)`` in its ``register_tasks`` hook. The preset's
values become the defaults of the new task's parameters, so ``--task-args`` still overrides
them, and ``--data-dir`` overrides ``source``. A bad file is an error naming file, line and key,
and so is a base that is the preset itself or a cycle of bases, a missing source folder and an
unset ``${VAR}``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.plugins.registry import Registration, Registry
from harness.plugins.specs import nearest
from harness.run.names import task_name_problem

KEYS = {"name", "base", "description", "family", "languages", "dataset", "args"}
DATASET_KEYS = {"loader", "source", "split", "columns"}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")


class PresetError(HarnessError):
    """A bad preset file: the message names the file, the line and the key."""

    def __init__(self, file: str | os.PathLike[str], line: int | None, key: str | None, problem: str):
        where = str(file) + (f", line {line}" if line else "") + (f", key {key!r}" if key else "")
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class Preset:
    """One preset as read from its file; ``lines`` maps each key (``dataset.split`` for nested ones) to its line.

    ``folder`` is the absolute folder of ``file``: a relative ``source`` is read from there.
    """

    name: str
    base: str
    loader: str | None  # None: the base's (a preset of a preset inherits its data set)
    file: str
    description: str = ""
    family: str | None = None
    languages: tuple[str, ...] = ()
    source: str | None = None
    loader_args: dict[str, Any] = field(default_factory=dict)
    args: dict[str, Any] = field(default_factory=dict)
    lines: dict[str, int] = field(default_factory=dict)
    folder: str = ""

    def error(self, key: str | None, problem: str) -> PresetError:
        """An error about ``key`` of this preset, naming its file and line."""
        return PresetError(self.file, self.lines.get(key or "", self.lines.get("name")), key, problem)

    def resolved_source(self) -> str | None:
        """``source`` with ``${VAR}`` expanded from the environment (an unset one is an error at its line); a
        relative path is the path inside the preset's folder, or a Hub id ``owner/name`` when no such path exists."""
        if self.source is None:
            return None

        def expand(match: re.Match[str]) -> str:
            value = os.environ.get(match[1])
            if not value:
                raise self.error(
                    "dataset.source",
                    f"task {self.name!r} reads its data from {self.source}: set {match[1]} "
                    "to the folder that holds that data, or pass --data-dir",
                )
            return value

        if not _is_relative(self.source):
            return os.path.expanduser(_VARIABLE.sub(expand, self.source))
        folder = Path(self.folder or Path(self.file).absolute().parent)
        inside = folder / self.source
        if not inside.exists() and _HUB_ID.fullmatch(self.source):
            return self.source
        resolved, root = inside.resolve(), folder.resolve()
        if inside.exists() and resolved != root and root not in resolved.parents:
            raise self.error(
                "dataset.source",
                f"{self.source!r} is a symbolic link to {resolved}, outside the preset's folder: a relative source "
                "is read inside the folder of its file; give an absolute path or ${VARIABLE}/... for data elsewhere",
            )
        return str(inside)

    def source_kind(self) -> str | None:
        """``local`` (a path, relative ones inside the preset's folder), ``hub`` (a Hub id ``owner/name``: the
        network unless cached), ``environment`` (``${VAR}/...``: a path known when the variable is set); None
        without a source."""
        if self.source is None:
            return None
        if _VARIABLE.search(self.source):
            return "environment"
        if not _is_relative(self.source):
            return "local"
        inside = Path(self.folder or Path(self.file).absolute().parent) / self.source
        return "hub" if not inside.exists() and _HUB_ID.fullmatch(self.source) else "local"


def _is_relative(source: str) -> bool:
    """A source read from the preset's folder: no ``${VAR}``, ``~`` or absolute path."""
    return not (source.startswith(("$", "~")) or os.path.isabs(source))


def _leaves_folder(source: str) -> bool:
    """Whether a relative source climbs out of the folder it is read from (``../x``, ``a/../../x``)."""
    parts = Path(os.path.normpath(source)).parts
    return bool(parts) and parts[0] == ".."


# --- reading -------------------------------------------------------------------------------


class _Mapping(dict):  # type: ignore[type-arg]
    """A YAML mapping that remembers the line of each key."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.lines: dict[str, int] = {}
        self.line = 0


def _loader_class() -> type:
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc, valid-type]
        pass

    def construct_mapping(loader: Any, node: Any) -> _Mapping:
        result, lines = _Mapping(), {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if isinstance(key, (list, dict)):  # a complex key (``? [a, b]``): no preset key is one
                raise _BadKey(
                    key_node.start_mark.line + 1,
                    None,
                    f"a key must be a name, not a {'list' if isinstance(key, list) else 'mapping'}",
                )
            if key in result:
                raise _BadKey(key_node.start_mark.line + 1, str(key), "this key is given twice")
            result[key] = loader.construct_object(value_node, deep=True)
            lines[str(key)] = key_node.start_mark.line + 1
        result.lines, result.line = lines, node.start_mark.line + 1
        return result

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    return Loader


class _BadKey(Exception):
    def __init__(self, line: int, key: str | None, problem: str):
        super().__init__(line, key, problem)
        self.line, self.key, self.problem = line, key, problem


def read_presets(path: str | os.PathLike[str]) -> list[Preset]:
    """The presets of one YAML file, validated in structure (names are checked when the task is built)."""
    import yaml

    text = _read_text(path)
    try:
        document = yaml.load(text, Loader=_loader_class())
    except _BadKey as bad:
        raise PresetError(path, bad.line, bad.key, bad.problem) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise PresetError(
            path, mark.line + 1 if mark else None, None, f"not valid YAML: {exc.problem or exc}"
        ) from None
    except yaml.YAMLError as exc:
        raise PresetError(path, None, None, f"not valid YAML: {exc}") from None
    if not isinstance(document, _Mapping):
        raise PresetError(path, 1, None, "a preset file is a mapping (a preset with 'name', or 'presets:' with a list)")
    if "presets" not in document:
        return [_preset(path, document, _Mapping())]
    extra = set(document) - {"presets", "defaults"}
    if extra:
        key = sorted(extra)[0]
        raise PresetError(path, document.lines[key], key, "a file with 'presets:' takes only 'presets' and 'defaults'")
    defaults = document.get("defaults") or _Mapping()
    items = document["presets"]
    if not isinstance(defaults, _Mapping):
        raise PresetError(path, document.lines["defaults"], "defaults", "must be a mapping")
    if not isinstance(items, list) or not all(isinstance(item, _Mapping) for item in items):
        raise PresetError(path, document.lines["presets"], "presets", "must be a list of mappings")
    return [_preset(path, item, defaults) for item in items]


def _read_text(path: str | os.PathLike[str]) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PresetError(path, None, None, f"cannot be read: {exc}") from None


def _preset(path: str | os.PathLike[str], item: _Mapping, defaults: _Mapping) -> Preset:
    """One preset from its mapping overlaid on the file's defaults (a nested ``dataset`` / ``args`` merges key by key)."""
    lines = {**defaults.lines, **item.lines}
    merged: dict[str, Any] = {**defaults, **item}
    for key in ("dataset", "args"):
        if isinstance(defaults.get(key), Mapping) and isinstance(item.get(key), Mapping):
            merged[key] = _Mapping({**defaults[key], **item[key]})
            merged[key].lines = {**defaults[key].lines, **item[key].lines}
    where = str(path)

    def fail(key: str, problem: str, line: int | None = None) -> PresetError:
        return PresetError(where, line or lines.get(key, item.line), key, problem)

    unknown = sorted(set(merged) - KEYS)
    if unknown:
        raise fail(unknown[0], _unknown(unknown[0], KEYS, "a preset"), lines.get(unknown[0]))
    for key in ("name", "base"):
        if not isinstance(merged.get(key), str) or not merged[key].strip():
            raise fail(key, "is required and must be a non-empty string")
        problem = task_name_problem(merged[key].strip())
        if problem:
            raise fail(key, problem)
    if merged["name"].strip() == merged["base"].strip():
        raise fail("base", f"a preset cannot be its own base ({merged['base'].strip()!r}): name a registered task")
    dataset = merged.get("dataset", _Mapping())  # none: the base's (required of a preset of a task: when built)
    if not isinstance(dataset, _Mapping):
        raise fail("dataset", "must be a mapping with 'loader' (and 'source', 'split', 'columns' as needed)")
    dataset_lines = {f"dataset.{k}": line for k, line in dataset.lines.items()}
    bad = sorted(set(dataset) - DATASET_KEYS)
    if bad:
        raise fail(f"dataset.{bad[0]}", _unknown(bad[0], DATASET_KEYS, "dataset"), dataset_lines[f"dataset.{bad[0]}"])
    if "loader" in dataset and not isinstance(dataset["loader"], str):
        raise fail(
            "dataset.loader",
            "must be the name of a registered dataset loader",
            dataset_lines.get("dataset.loader"),
        )
    for key in ("source", "split"):
        if key in dataset and not isinstance(dataset[key], str):
            raise fail(f"dataset.{key}", "must be a string", dataset_lines[f"dataset.{key}"])
    source = dataset.get("source")
    if source is not None and _is_relative(source) and _leaves_folder(source):
        raise fail(
            "dataset.source",
            f"{source!r} leaves the preset's folder: a relative source is read inside the folder of its file; "
            "give an absolute path or ${VARIABLE}/... for data elsewhere",
            dataset_lines["dataset.source"],
        )
    loader_args: dict[str, Any] = {}
    if "split" in dataset:
        loader_args["split"] = dataset["split"]
    if "columns" in dataset:
        columns = dataset["columns"]
        if not isinstance(columns, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in columns.items()
        ):
            raise fail(
                "dataset.columns",
                "must map schema column names to data set column names (strings)",
                dataset_lines["dataset.columns"],
            )
        loader_args["columns"] = ";".join(f"{k}:{v}" for k, v in columns.items())
    args = merged.get("args") or {}
    if not isinstance(args, Mapping) or any(isinstance(v, (Mapping, list)) for v in args.values()):
        raise fail("args", "must be a mapping of argument names to single values")
    args_lines = {f"args.{k}": line for k, line in getattr(args, "lines", {}).items()}
    languages = merged.get("languages") or []
    if not isinstance(languages, list) or not all(isinstance(lang, str) for lang in languages):
        raise fail("languages", "must be a list of language codes")
    for key in ("description", "family"):
        if key in merged and not isinstance(merged[key], str):
            raise fail(key, "must be a string")
    return Preset(
        name=merged["name"].strip(),
        base=merged["base"].strip(),
        loader=dataset.get("loader"),
        file=where,
        description=merged.get("description", ""),
        family=merged.get("family"),
        languages=tuple(languages),
        source=dataset.get("source"),
        loader_args=loader_args,
        args=dict(args),
        lines={**lines, **dataset_lines, **args_lines},
        folder=str(Path(path).expanduser().absolute().parent),
    )


def source_preset(cls: Any) -> Preset | None:
    """The preset whose ``dataset.source`` a preset's task class reads (its own, else its nearest base preset's)."""
    for klass in getattr(cls, "__mro__", ()):
        preset = vars(klass).get("preset")
        if isinstance(preset, Preset) and preset.source is not None:
            return preset
    return None


def _unknown(key: str, valid: set[str], owner: str) -> str:
    """``unknown key: did you mean 'dataset'? (a preset takes: ...)``."""
    return f"unknown key: {nearest(key, tuple(sorted(valid)))} ({owner} takes: {', '.join(sorted(valid))})"


def preset_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The ``*.yaml`` and ``*.yml`` files of a folder (and its sub-folders), by name."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise HarnessError(f"--include-path {str(folder)!r} does not exist or is not a folder")
    return sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


# --- registering -----------------------------------------------------------------------------


def register_yaml(register: Callable[..., None], folder: str | os.PathLike[str]) -> None:
    """Register every preset of ``folder`` through a ``register_tasks`` hook's callback (for plugins)."""
    presets = [preset for path in preset_files(folder) for preset in read_presets(path)]
    by_name = {preset.name: preset for preset in presets}
    for preset in presets:
        inherited = _inherited(preset, by_name)
        register(
            preset.name,
            "harness.run.presets:preset_class",
            inherited.description or f"{preset.base} on {inherited.loader or 'its base task data'}",
            yaml_preset=preset,
            family=inherited.family,
            languages=inherited.languages,
        )


def _inherited(preset: Preset, by_name: Mapping[str, Preset]) -> Preset:
    """``preset`` with the description, family, languages and loader it does not set taken from its base, when
    the base is a preset of the same folder (for ``harness list``; the task class inherits from any base)."""
    seen = {preset.name}
    found = preset
    base = by_name.get(preset.base)
    while base is not None and base.name not in seen:
        seen.add(base.name)
        found = replace(
            found,
            description=found.description or base.description,
            family=found.family or base.family,
            languages=found.languages or base.languages,
            loader=found.loader or base.loader,
        )
        base = by_name.get(base.base)
    return found


def include_presets(registry: Registry, paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> Registry:
    """Add the presets of ``--include-path`` folders to ``registry`` (a preset already added from the same file is kept)."""
    folders = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    for folder in folders:
        register_yaml(partial(_register_included, registry, f"include-path:{folder}"), folder)
    return registry


def _register_included(registry: Registry, plugin: str, name: str, ref: str, description: str, **info: Any) -> None:
    """Register one ``--include-path`` preset unless the same preset is already registered."""
    existing = registry.entries["task"].get(name)
    preset: Preset = info["yaml_preset"]
    if existing is not None:
        other = existing.info.get("yaml_preset")
        if isinstance(other, Preset) and replace(other, file=preset.file) == preset:
            return  # the same preset, perhaps reached through another spelling of its folder
        origin = f"{other.file}, line {other.lines.get('name')}" if isinstance(other, Preset) else existing.ref
        raise preset.error(
            "name",
            f"task {name!r} is registered by both plugin {existing.plugin!r} ({origin}) and plugin {plugin!r} "
            "(this file): rename one",
        )
    registry.add(Registration("task", name, ref, description, plugin, info))


# --- building the task class -----------------------------------------------------------------


_BUILDING: list[Preset] = []  # the presets whose classes are being built, outermost first (a base's base, ...)


def preset_class(registry: Registry, registration: Registration) -> type:
    """The task class of a preset: its base task with the preset's values as parameter defaults.

    The class exposes what the preset sets: ``preset`` (as read), ``preset_values`` (argument ->
    value, converted; the loader's ``dataset`` among them for tasks that choose their loader) and
    ``data_source`` (the resolved ``dataset.source``). A preset among its own bases is an error
    naming the file and line of every preset in the cycle.
    """
    preset: Preset = registration.info["yaml_preset"]
    if any(building.name == preset.name for building in _BUILDING):
        start = next(i for i, building in enumerate(_BUILDING) if building.name == preset.name)
        cycle = [*_BUILDING[start:], preset]
        chain = " -> ".join(f"{p.name} ({p.file}, line {p.lines.get('base')})" for p in cycle)
        raise cycle[0].error("base", f"the bases form a cycle: {chain}")
    _BUILDING.append(preset)
    try:
        return _build_class(registry, preset)
    finally:
        _BUILDING.pop()


def _build_class(registry: Registry, preset: Preset) -> type:
    from harness.run.task import Task  # numpy: not for `harness list`, which reads presets

    try:
        base = registry.load("task", preset.base)
    except PresetError:
        raise  # a base preset's own error (a cycle) names its file and line already
    except HarnessError as exc:
        raise preset.error("base", str(exc)) from None
    if not (isinstance(base, type) and issubclass(base, Task)):
        raise preset.error("base", f"{preset.base!r} is not a Task subclass")
    base_preset = getattr(base, "preset", None)
    loader_name = preset.loader or (base.dataset if isinstance(base.dataset, str) else "")
    if not loader_name:
        raise preset.error(
            "dataset", "is required: a mapping with 'loader' (and 'source', 'split', 'columns' as needed)"
        )
    try:
        loader = registry.load("dataset", loader_name)
    except HarnessError as exc:
        raise preset.error("dataset.loader", str(exc)) from None
    params = dict(base.params)
    values: dict[str, Any] = {}
    for key, value in {**preset.loader_args, **preset.args}.items():
        line_key = f"args.{key}" if key in preset.args else f"dataset.{key}"
        spec = base.params.get(key) or loader.params.get(key)
        if spec is None:
            known = ", ".join(sorted({*base.params, *loader.params}))
            raise preset.error(
                line_key, f"neither task {preset.base!r} nor loader {loader_name!r} takes it (they take: {known})"
            )
        try:
            values[key] = spec.convert(key, value, f"preset {preset.name!r}")
        except HarnessError as exc:
            raise preset.error(line_key, str(exc)) from None
        params[key] = replace(spec, default=values[key])
    if "dataset" in base.params:  # tasks that choose their loader through an argument (the retrieval tasks)
        params["dataset"] = replace(base.params["dataset"], default=loader_name)
        values["dataset"] = loader_name
    for key, spec in loader.params.items():
        params.setdefault(key, spec)  # the loader's other arguments (split, lang) are the preset's too
    if preset.family and base.family and preset.family != base.family:
        raise preset.error("family", f"{preset.base!r} is of family {base.family!r}; a preset keeps its base's")
    attributes: dict[str, Any] = {
        "family": base.family or preset.family,  # membership and role are the base's (harness.plugins.membership)
        "role": base.role or preset.base,
        "__doc__": preset.description or base.__doc__,
        "__module__": __name__,
        "params": params,
        "preset": preset,
        "preset_values": {**getattr(base, "preset_values", {}), **values},
        "dataset": loader_name,
    }
    if preset.source is not None or base_preset is None:  # else the base preset's source, read from its folder
        attributes["data_source"] = staticmethod(preset.resolved_source)
    return type(f"Preset_{preset.name}", (base,), attributes)
