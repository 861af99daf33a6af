"""The plan of a run: every task resolved, its data loaded and checked, before any inference.

``harness.run.runner.prepare`` builds a ``RunPlan`` (the preflight: arguments, data sets, images,
models and their capabilities, auxiliary models, the output folder); ``harness.run.runner.execute``
runs it. ``count_outputs`` answers ``--dry-run``: it walks each task over the cache without
computing anything and counts the model outputs already cached and those a run would compute.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.adapters.cache import Cache
from harness.adapters.cached_model import CachedModel
from harness.progress import Progress
from harness.results.signature import Signature
from harness.run.context import RunContext
from harness.run.data import LoadedData
from harness.run.distributed import RankPartition
from harness.run.task import Task


@dataclass(frozen=True)
class DataSource:
    """Where a task's data comes from: the registered loader that loads it (after any ``fallback``)
    and the location it is given (``--data-dir``, a preset's source, or None for its default)."""

    loader: str
    location: str | None = None


@dataclass
class TaskPlan:
    """One task ready to run: its resolved arguments, data source and data, seeds, context and signature.

    ``signature`` is the full ``Signature`` (with the model), kept structured; ``str()`` formats it.

    ``cached`` and ``to_compute`` are filled by ``count_outputs`` (``--dry-run``): the distinct
    model outputs the task asks for that the cache holds, and those a run would compute.
    """

    task: Task[Any]
    args: dict[str, Any]
    data: DataSource
    loaded: LoadedData
    seeds: list[int]
    ctx: RunContext
    signature: Signature
    done: bool = False
    load_seconds: float = 0.0
    cached: int | None = None
    to_compute: int | None = None
    shared: dict[str, int] = field(default_factory=dict)  # earlier task -> outputs it counted that this one uses too

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary: task, version, arguments, data set identity, seeds, signature, counts."""
        info: dict[str, Any] = {
            "task": self.task.name,
            "version": self.task.version,
            "args": self.args,
            "dataset": dict(self.loaded.identity),
            "seeds": self.seeds if self.task.uses_seeds else None,
            "signature": str(self.signature),
            "aux_models": self.ctx.aux_identities(self.task.name),
            "already_in_results": self.done,
        }
        if self.cached is not None:
            info["model_outputs"] = {"cached": self.cached, "to_compute": self.to_compute, "shared": self.shared}
        return info


@dataclass
class RunPlan:
    """A whole run: the task plans, the model, and the settings shared by all tasks."""

    tasks: list[TaskPlan]
    model: CachedModel
    folder: Path | None
    settings: dict[str, Any]
    partition: Any = None
    is_main: bool = True
    progress: Progress = field(default_factory=lambda: Progress(enabled=False))
    shard: str | None = None
    log_samples: bool = False
    log_form: str = "full"
    log_without: frozenset[str] = frozenset()

    def describe(self) -> dict[str, Any]:
        """A JSON-ready summary of the plan (what ``--dry-run`` prints)."""
        return {
            "model": self.model.identity.as_dict(),
            "output": str(self.folder) if self.folder else None,
            "tasks": [plan.describe() for plan in self.tasks],
        }

    def leave_together(self) -> None:
        """Under torchrun: return once every rank has finished the plan (``RankPartition.leave_together``)."""
        if isinstance(self.partition, RankPartition):
            self.partition.leave_together()


class _CountingCache:
    """Reads through to the real cache (if any), remembers which keys were asked and found, never writes."""

    def __init__(self, inner: Cache | None):
        self.inner = inner
        self.asked: set[str] = set()
        self.found: set[str] = set()

    def get_many(self, keys: Any) -> dict[str, bytes]:
        keys = list(keys)
        self.asked.update(keys)
        hits = self.inner.get_many(keys) if self.inner is not None else {}
        self.found.update(hits)
        return hits

    def put_many(self, items: Any) -> None:
        """A dry run stores nothing."""


class _NothingIsMine:
    """A partition that computes nothing: every missing output is a blank stand-in."""

    complete = False

    def agree(self, keys: list[str], what: str) -> list[str]:
        return sorted(keys)

    def mine(self, keys: list[str]) -> list[str]:
        return []

    def exchange(self, computed: dict[str, bytes], what: str) -> dict[str, bytes]:
        return computed


def count_outputs(plan: RunPlan) -> list[TaskPlan]:
    """Fill ``cached`` / ``to_compute`` of every task plan without computing any model output.

    Each task runs over blank stand-ins for the outputs the cache lacks (its metrics are thrown
    away), so the counts are exact for tasks whose requests do not depend on model outputs, and a
    lower bound for those that do (the CoMMuTE image oracle's second round). Outputs shared by
    several tasks count once, for the first task that asks for them; a later task's ``shared`` says how many
    of its outputs each earlier task counted.
    """
    counter = _CountingCache(plan.model.cache)
    partition = _NothingIsMine()
    main = CachedModel(plan.model.adapter, counter, Progress(enabled=False), partition)  # type: ignore[arg-type]
    aux_loaded: dict[str, CachedModel] = {}
    seen: dict[str, str] = {}  # output key -> the task that counted it
    for task_plan in plan.tasks:
        ctx = task_plan.ctx
        for role, model in ctx.loaded_models.items():  # the run's auxiliary models, over the counting cache
            if role not in aux_loaded:
                aux_loaded[role] = CachedModel(model.adapter, counter, Progress(enabled=False), partition)  # type: ignore[arg-type]
        dry_ctx = RunContext(
            ctx.seeds,
            ctx.batch_size,
            ctx.device,
            Progress(enabled=False),
            counter,  # type: ignore[arg-type]
            ctx.aux_models,
            partition,
            aux_loaded,
            ctx.roles,
            ctx.registry,
        )
        counter.asked, counter.found = set(), set()
        with contextlib.suppress(Exception):
            task_plan.task.evaluate(task_plan.loaded.data, main, dry_ctx)
        fresh = counter.asked - seen.keys()
        task_plan.shared = dict(Counter(seen[key] for key in counter.asked if key in seen))
        seen.update(dict.fromkeys(fresh, task_plan.task.name))
        task_plan.cached = len(fresh & counter.found)
        task_plan.to_compute = len(fresh - counter.found)
    plan.leave_together()
    return plan.tasks


def format_plan(plan: RunPlan) -> str:
    """The plan as plain text, one block per task."""
    model = plan.model.identity
    lines = [
        f"model: {model.name} (adapter {model.adapter}, source {model.source or '-'}, revision {model.revision or '-'})",
        f"output: {plan.folder if plan.folder else '(none)'}",
    ]
    for task_plan in plan.tasks:
        info = task_plan.describe()
        data = info["dataset"]
        lines += [
            f"task {info['task']} v{info['version']}"
            + ("  (already in the results: --resume skips it)" if info["already_in_results"] else ""),
            "  args: " + (", ".join(f"{k}={v}" for k, v in sorted(info["args"].items())) or "none"),
            f"  data: {data.get('loader')} from {data.get('source')} split {data.get('split')}, "
            f"{data.get('size')} examples, revision {data.get('revision')}",
            f"  seeds: {info['seeds'] if info['seeds'] is not None else 'none (deterministic)'}",
        ]
        lines += [
            f"  {role} model: {aux['name']} (revision {aux.get('revision') or '-'})"
            for role, aux in info["aux_models"].items()
        ]
        if "model_outputs" in info:
            counts = info["model_outputs"]
            shared = "".join(f"; {n} shared with {task} (counted there)" for task, n in counts["shared"].items())
            lines.append(f"  model outputs: {counts['cached']} cached, {counts['to_compute']} to compute{shared}")
        lines.append(f"  signature: {info['signature']}")
    return "\n".join(lines)
