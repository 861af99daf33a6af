"""What ``harness g-sweep`` degrades: the image features of the data its tasks read, whatever task plays each role.

The sweep runs one task per role of the family's ``META`` pairing (``xlr`` and ``backretrieval``, ``corr`` when
given): built-in tasks, a plugin's or YAML presets, each on its own data (or ``--data-dir``). At each level it runs
them through a registry whose dataset loaders return the loaded data with its ``image_features`` degraded and its
revision marked by the level, so that the tasks of one level pair (same data) and two levels never do. The clean
features, for g's agreement, are those the backretrieval-like task reads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from harness.errors import HarnessError
from harness.plugins.membership import task_membership
from harness.plugins.registry import Registry
from harness.run.data import Table
from harness_tasks.retrieval.analysis.g_common import TASKS
from harness_tasks.retrieval.contracts import CUT_OFF
from harness_tasks.retrieval.schema import image_features

FAMILY = "retrieval"


def roles_of(registry: Registry, names: Sequence[str]) -> dict[str, str]:
    """Role -> task for the tasks of a sweep: one per role, xlr and backretrieval required, corr optional."""
    found: dict[str, str] = {}
    for name in names:
        membership = task_membership(registry, name)
        if membership.family != FAMILY or membership.role not in TASKS:
            raise HarnessError(
                f"task {name!r} is a {membership.role!r} task of family {membership.family!r}; g-sweep needs an "
                f"xlr-, backretrieval- or corr-like task (family {FAMILY!r})"
            )
        if membership.role in found:
            raise HarnessError(f"tasks {found[membership.role]!r} and {name!r} both play {membership.role!r}: give one")
        found[membership.role] = name
    missing = [role for role in TASKS[:2] if role not in found]
    if missing:
        raise HarnessError(f"g-sweep needs a task playing {' and '.join(missing)} (--tasks names one per role)")
    return found


def by_meaning(registry: Registry, names: Sequence[str], meaning: str, value: Any) -> dict[str, Any]:
    """``value`` for the argument of each task that declares ``meaning``, scoped to it (``pair_xlr.cutoff``)."""
    return {
        f"{name}.{param}": value
        for name in names
        for param, spec in registry.load("task", name).params.items()
        if spec.meaning == meaning
    }


def cut_off_args(registry: Registry, names: Sequence[str], k: int) -> dict[str, Any]:
    """The sweep's ``--k`` for every task that has a Recall@k cut-off, whatever it calls it."""
    return by_meaning(registry, names, CUT_OFF.meaning, k)


def clean_features(
    registry: Registry, names: Sequence[str], task: str, task_args: Mapping[str, Any], data_dir: str | None
) -> tuple[np.ndarray, str]:
    """The image features the task ``task`` reads (undegraded) and a short name of its data."""
    from harness.run.runner import load_task_data, loader_args, resolve_data_source, resolve_tasks

    resolved = dict((t.name, (t, given)) for t, given in resolve_tasks(registry, list(names), task_args, data_dir))
    chosen, given = resolved[task]
    source = resolve_data_source(registry, chosen, data_dir)
    loaded = load_task_data(registry, source, loader_args(registry, chosen, source, given), None, None)
    where = str(source.location or source.loader)
    if "image_features" not in loaded.data.column_names:
        raise HarnessError(
            f"task {task!r} reads no image_features ({where}): g-sweep degrades the image features of its data"
        )
    return image_features(where, loaded.data), where


class DegradingRegistry(Registry):
    """The registry of a run whose dataset loaders degrade the image features they load (``degrade``)."""

    def __init__(self, base: Registry, degrade: Any, label: str):
        super().__init__()
        self.entries, self.plugins, self.warnings, self.checked = (
            base.entries,
            base.plugins,
            base.warnings,
            base.checked,
        )
        self.degrade, self.label = degrade, label

    def load(self, kind: str, name: str) -> Any:
        """As the base registry; a dataset loader's class comes wrapped (``degrading``)."""
        found = super().load(kind, name)
        return degrading(found, self.degrade, self.label) if kind == "dataset" else found


def degrading(loader: type, degrade: Any, label: str) -> type:
    """A subclass of ``loader`` whose data has ``degrade(features)`` as its image features and a revision that
    names the level (its data is then another data set's: signatures, pairing and resume tell them apart)."""

    class Degraded(loader):
        def load(self, source: str | None, args: Mapping[str, Any], images_dir: str | None = None) -> Any:
            loaded = super().load(source, args, images_dir)
            if "image_features" in loaded.data.column_names:
                features = degrade(image_features(str(source), loaded.data))
                loaded.data = with_features(loaded.data, np.asarray(features, dtype=np.float32))
            revision = f"{loaded.identity.get('revision')}|g:{label}"
            loaded.identity["revision"] = "sha256:" + hashlib.sha256(revision.encode()).hexdigest()[:16]
            loaded.identity["g_degraded"] = label
            return loaded

    Degraded.__name__ = Degraded.__qualname__ = loader.__name__
    Degraded.__doc__ = loader.__doc__
    return Degraded


def with_features(data: Any, features: np.ndarray) -> Any:
    """``data`` (a ``datasets.Dataset`` or a ``Table``) with ``features`` as its ``image_features`` column."""
    if isinstance(data, Table):
        columns = {name: data[name] for name in data.column_names}
        return Table({**columns, "image_features": features}, len(data))
    return data.remove_columns("image_features").add_column("image_features", features.tolist())
