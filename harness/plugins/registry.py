"""The registry: every task, model, dataset and command name, with the plugin that gave it.

Plugins are discovered through the entry-point group ``harness`` and loaded one by one, so a
plugin that fails to import or to register (any exception, ``SystemExit`` included; only
``KeyboardInterrupt`` passes) costs a warning, not the whole harness.
``HARNESS_LOAD_PLUGINS`` (only these) and ``HARNESS_DISABLE_PLUGINS`` (all but these) take
comma-separated entry-point names.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from harness.errors import HarnessError, UnknownNameError
from harness.plugins import hookspecs
from harness.plugins.checks import task_class_problems
from harness.plugins.specs import SPECS, Spec, build_spec

KINDS = ("task", "model", "dataset", "command", "family")
PLURALS = {kind: "families" if kind == "family" else kind + "s" for kind in KINDS}  # as the CLI and hooks spell them
HOOKS = {kind: f"register_{PLURALS[kind]}" for kind in KINDS}
ENTRY_POINT_GROUP = "harness"


@dataclass(frozen=True)
class Registration:
    """One registered name: what it points to and who registered it."""

    kind: str
    name: str
    ref: str
    description: str
    plugin: str
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def spec(self) -> Spec:
        """The typed spec of this registration (``harness.plugins.specs``): its kind's fields, from ``info``."""
        spec_class = SPECS[self.kind]
        valid = set(spec_class.keywords())
        given = {key: value for key, value in self.info.items() if key in valid}
        return spec_class(name=self.name, ref=self.ref, description=self.description, plugin=self.plugin, **given)

    def load(self) -> Any:
        """Import and return the object behind ``ref`` ("module:attribute")."""
        module_name, _, attr = self.ref.partition(":")
        try:
            obj: Any = importlib.import_module(module_name)
            for part in attr.split(".") if attr else []:
                obj = getattr(obj, part)
        except BaseException as exc:  # a broken plugin must name itself, even one that calls sys.exit()
            if isinstance(exc, KeyboardInterrupt):
                raise
            raise HarnessError(
                f"{self.kind} {self.name!r} from plugin {self.plugin!r} could not be loaded "
                f"from {self.ref!r}: {type(exc).__name__}: {exc}"
            ) from exc
        return obj


@dataclass(frozen=True)
class PluginInfo:
    """An installed plugin: its entry-point name, distribution and what it registered."""

    name: str
    package: str | None
    version: str | None
    registered: dict[str, list[str]] = field(default_factory=lambda: {kind: [] for kind in KINDS})  # kind -> names
    error: str | None = None


class Registry:
    """All registrations, by kind and name, plus the plugins and the problems met loading them."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[str, Registration]] = {kind: {} for kind in KINDS}
        self.plugins: dict[str, PluginInfo] = {}
        self.warnings: list[str] = []
        self.checked: set[str] = set()  # task classes already checked (``harness.plugins.checks``): warned once

    def names(self, kind: str) -> list[str]:
        """Sorted names of one kind."""
        return sorted(self.entries[kind])

    def get(self, kind: str, name: str) -> Registration:
        """The registration of ``name``, or an error that suggests the closest names."""
        try:
            return self.entries[kind][name]
        except KeyError:
            raise UnknownNameError(kind, name, self.entries[kind]) from None

    def load(self, kind: str, name: str) -> Any:
        """Import and return the object registered as ``name`` (a YAML preset's task class is built here)."""
        registration = self.get(kind, name)
        if kind == "task" and "yaml_preset" in registration.info:
            build_preset = registration.load()  # a preset's reference names the function that builds its class
            return build_preset(self, registration)
        loaded = registration.load()
        if kind == "task" and name not in self.checked:
            self.checked.add(name)
            for problem in task_class_problems(self, name, loaded):
                self.warnings.append(problem)
                print(f"harness: warning: {problem}", file=sys.stderr)
        return loaded

    def distributions(self, names: Iterable[tuple[str, str]] = (), refs: Iterable[str] = ()) -> dict[str, str]:
        """Distribution -> version of the plugins that registered these (kind, name) pairs or ``module:attr`` references.

        A model adapter is found by its reference (``ModelIdentity.adapter``), whatever name
        (preset, Hub id) it was reached by. Plugins that are not installed packages are left out.
        """
        wanted = set(refs)
        plugins = {self.entries[kind][name].plugin for kind, name in names if name in self.entries[kind]}
        plugins |= {r.plugin for table in self.entries.values() for r in table.values() if r.ref in wanted}
        infos = [self.plugins[p] for p in sorted(plugins) if p in self.plugins]
        return {info.package: info.version or "unknown" for info in infos if info.package is not None}

    def add(self, registration: Registration) -> None:
        """Add one registration; a name registered twice is an error naming both plugins."""
        table = self.entries[registration.kind]
        previous = table.get(registration.name)
        if previous is not None:
            raise HarnessError(
                f"{registration.kind} {registration.name!r} is registered by both plugin "
                f"{previous.plugin!r} ({previous.ref}) and plugin {registration.plugin!r} "
                f"({registration.ref}); disable one with HARNESS_DISABLE_PLUGINS="
                f"{registration.plugin}"
            )
        table[registration.name] = registration


def _plugin_filter() -> Callable[[str], bool]:
    def names(var: str) -> set[str] | None:
        value = os.environ.get(var, "").strip()
        return {n.strip() for n in value.split(",") if n.strip()} if value else None

    only, disabled = names("HARNESS_LOAD_PLUGINS"), names("HARNESS_DISABLE_PLUGINS") or set()
    return lambda name: (only is None or name in only) and name not in disabled


def _check_ref(kind: str, name: Any, ref: Any, description: Any) -> None:
    if not isinstance(name, str) or not name:
        raise TypeError(f"{kind} name must be a non-empty string, got {name!r}")
    if not isinstance(ref, str) or ":" not in ref:
        raise TypeError(f"{kind} {name!r}: reference must be 'module:attribute', got {ref!r}")
    if not isinstance(description, str):
        raise TypeError(f"{kind} {name!r}: description must be a string")


def build_registry(entry_points: Iterable[metadata.EntryPoint] | None = None) -> Registry:
    """Load the plugins (all installed ones by default) and collect their registrations."""
    registry = Registry()
    manager = pluggy.PluginManager("harness")
    manager.add_hookspecs(hookspecs)
    wanted = _plugin_filter()
    if entry_points is None:
        entry_points = metadata.entry_points(group=ENTRY_POINT_GROUP)
    for ep in sorted(entry_points, key=lambda e: e.name):
        if not wanted(ep.name):
            continue
        dist = getattr(ep, "dist", None)
        package, version = (dist.name, dist.version) if dist is not None else (None, None)
        try:
            manager.register(ep.load(), name=ep.name)
            manager.check_pending()  # a hook implementation with no matching hook
        except BaseException as exc:  # SystemExit from a plugin's import is a broken plugin too
            if isinstance(exc, KeyboardInterrupt):
                raise
            _plugin_failed(registry, ep.name, package, version, "failed to load", exc)
            if manager.has_plugin(ep.name):
                manager.unregister(name=ep.name)
            continue
        registry.plugins[ep.name] = PluginInfo(ep.name, package, version)
    for kind, hook_name in HOOKS.items():
        for impl in getattr(manager.hook, hook_name).get_hookimpls():
            _collect(registry, manager, kind, impl)
    return registry


def _collect(registry: Registry, manager: pluggy.PluginManager, kind: str, impl: Any) -> None:
    plugin = impl.plugin_name
    if plugin not in registry.plugins:
        return
    found: list[Registration] = []

    def register(name: str, ref: str, description: str = "", **info: Any) -> None:
        _check_ref(kind, name, ref, description)
        spec, problems = build_spec(kind, name, ref, description, plugin, info)
        for problem in problems:
            registry.warnings.append(problem)
            print(f"harness: warning: {problem}", file=sys.stderr)
        found.append(Registration(kind, name, ref, description, plugin, spec.info()))

    try:
        impl.function(register=register)
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt):
            raise
        info = registry.plugins.pop(plugin)
        for other_kind, names in info.registered.items():
            for name in names:
                registry.entries[other_kind].pop(name, None)
        manager.unregister(name=plugin)
        _plugin_failed(registry, plugin, info.package, info.version, f"failed in {impl.function.__name__}", exc)
        return
    for registration in found:
        registry.add(registration)
        registry.plugins[plugin].registered[kind].append(registration.name)


def _plugin_failed(
    registry: Registry, name: str, package: str | None, version: str | None, what: str, exc: BaseException
) -> None:
    source = f" ({package} {version})" if package else ""
    message = f"plugin {name!r}{source} {what}: {type(exc).__name__}: {exc}"
    registry.warnings.append(message)
    registry.plugins[name] = PluginInfo(name, package, version, error=message)
    print(f"harness: warning: {message}", file=sys.stderr)


_REGISTRY: Registry | None = None


def get_registry() -> Registry:
    """The process-wide registry, built on first use."""
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = build_registry()
    return _REGISTRY


def reset_registry() -> None:
    """Forget the process-wide registry (after installing or disabling plugins)."""
    global _REGISTRY
    _REGISTRY = None
