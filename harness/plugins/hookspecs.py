"""The plugin hooks of xling-harness (pluggy project name ``harness``).

Every hook receives a ``register`` callback instead of returning objects, so a plugin can
register any number of things and nothing heavy is imported until it is used:

    @hookimpl
    def register_tasks(register):
        register("my_task", "my_package.tasks:MyTask", "One line saying what it measures.")

The reference is a ``"module:attribute"`` string, imported only when the name is used. The
keywords each hook takes are the fields of its spec (``harness/plugins/specs.py``); an unknown
keyword is a warning naming the plugin, the keyword and the nearest valid one.
``docs/plugins.md`` documents each hook; tests/test_hooks.py fails when one lacks a section
there or a test.
"""

from __future__ import annotations

from typing import Protocol

import pluggy

hookspec = pluggy.HookspecMarker("harness")
hookimpl = pluggy.HookimplMarker("harness")


class Register(Protocol):
    """The callback handed to every hook."""

    def __call__(self, name: str, ref: str, description: str, **info: object) -> None: ...


@hookspec
def register_tasks(register: Register) -> None:
    """Register task classes: ``register(name, "module:TaskClass", description)``."""


@hookspec
def register_models(register: Register) -> None:
    """Register model adapters and presets: ``register(name, "module:factory", description)``.

    Optional keyword ``config_model_types=("vgamt", ...)`` lets the runner pick this adapter for
    a model directory or Hub id whose ``config.json`` has one of these ``model_type`` values.
    Optional keyword ``default_for=("text_encoder", ...)`` makes it the adapter used for a Hub
    id or folder when a task needs that capability and nothing more specific matches.
    """


@hookspec
def register_datasets(register: Register) -> None:
    """Register dataset loaders: ``register(name, "module:LoaderClass", description)``."""


@hookspec
def register_commands(register: Register) -> None:
    """Register CLI subcommands: ``register(name, "module:command_object", description)``.

    The object has ``add_arguments(parser)`` and ``run(args) -> int``.
    """


@hookspec
def register_families(register: Register) -> None:
    """Register how a leaderboard family is shown: ``register(name, "module:PLOTS", title, tasks=(...), average=False)``.

    Presentation only: which tasks belong to the family is declared by the tasks (``Task.family``,
    inherited by presets; ``harness.plugins.membership``). ``PLOTS`` is a sequence of plot functions
    ``plot(board, folder) -> list[Plot]`` (may be empty); the description is the family's title;
    ``tasks`` (or ``roles``) are the roles of its columns in display order; ``average=True`` adds an
    average column (only when the main metrics are on one scale); ``order`` places it among the
    families. Optional ``sections="module:function"``: ``function(board) -> list[Section]``, extra
    tables shown under the family (the retrieval family's meta-evaluation). The keywords are the
    fields of ``harness.plugins.specs.FamilySpec``; an unknown one is a warning.
    """
