"""xling-harness: plugin-based evaluation of cross-lingual text encoders and multimodal MT.

The public API is imported lazily so that ``import harness`` stays light (no torch)::

    import harness
    records = harness.evaluate("xlr", my_encoder, output=None)   # any object with encode(texts)
    harness.to_dataframe(records)
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> the module that defines it
_EXPORTS = {
    "evaluate": "harness.run.runner",
    "prepare": "harness.run.runner",
    "to_dataframe": "harness.results.dataframe",
    "read_records": "harness.results.records",
    "ResultRecord": "harness.results.records",
    "RunConfig": "harness.run.config",
    "Task": "harness.run.task",
    "TaskOutput": "harness.run.task",
    "RunContext": "harness.run.context",
    "ModelAdapter": "harness.adapters.model",
    "ModelIdentity": "harness.adapters.model",
    "Capability": "harness.adapters.capabilities",
    "ScoreRequest": "harness.adapters.capabilities",
    "TokenEmbeddings": "harness.adapters.capabilities",
    "DatasetLoader": "harness.run.data",
    "LoadedData": "harness.run.data",
    # a loader's helpers for the common cases (aligned text files, their hash, a Hub / disk / local-file data set)
    "read_aligned": "harness.run.data",
    "check_nonempty": "harness.run.data",
    "files_revision": "harness.run.data",
    "load_hf_dataset": "harness.run.data",
    "Param": "harness.params",
    "HarnessError": "harness.errors",
    "DataError": "harness.errors",
    "HarnessWarning": "harness.errors",
    "hookimpl": "harness.plugins.hookspecs",
    # the registry a plugin reads (task_membership(get_registry(), name)) and what a model adapter uses
    "get_registry": "harness.plugins.registry",
    "Registry": "harness.plugins.registry",
    "Codec": "harness.adapters.capabilities",
    "text_content": "harness.adapters.capabilities",
    # the run options of a plugin command that runs tasks (as ``harness run`` takes them)
    "add_run_arguments": "harness.run.options",
    "run_config": "harness.run.options",
    # what a plugin declares: metrics, membership (family_of / role_of read it back from results lines)
    "Metric": "harness.run.task",
    "recall_chance": "harness.run.task",
    "Statistic": "harness.results.statistic",
    "Signature": "harness.results.signature",
    "role_of": "harness.results.records",
    "family_of": "harness.results.records",
    "CachedModel": "harness.adapters.cached_model",
    "register_yaml": "harness.run.presets",
    "task_membership": "harness.plugins.membership",
    "Membership": "harness.plugins.membership",
    # the typed registrations (docs/plugins.md lists each kind's keywords)
    "TaskSpec": "harness.plugins.specs",
    "ModelSpec": "harness.plugins.specs",
    "DatasetSpec": "harness.plugins.specs",
    "FamilySpec": "harness.plugins.specs",
    "CommandSpec": "harness.plugins.specs",
    # role contracts: what a task in a family's role must offer (declared with the family)
    "RoleContract": "harness.plugins.contracts",
    "Argument": "harness.plugins.contracts",
    "Pairing": "harness.plugins.contracts",
    "values_by_meaning": "harness.plugins.contracts",
    "known_arguments": "harness.plugins.contracts",
    # a family's leaderboard presentation: extra tables and plots
    "Board": "harness.leaderboard.merge",
    "Column": "harness.leaderboard.merge",
    "Section": "harness.leaderboard.sections",
    "Plot": "harness.leaderboard.figures",
    "figure": "harness.leaderboard.figures",
    "save": "harness.leaderboard.figures",
    "colours": "harness.leaderboard.figures",
    "markers": "harness.leaderboard.figures",
    "legend_outside": "harness.leaderboard.figures",
    "error_of": "harness.leaderboard.figures",
    "chance_line": "harness.leaderboard.figures",
    "file_names": "harness.leaderboard.figures",
    "grouped_bars": "harness.leaderboard.figures",
    "bar_figure": "harness.leaderboard.figures",
    "table_bar_plots": "harness.leaderboard.figures",
    "best_models": "harness.leaderboard.figures",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'harness' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    """The public API (and the module's own dunder attributes), without the helpers used here."""
    return sorted({*__all__, *(name for name in globals() if name.startswith("__"))})
