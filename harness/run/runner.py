"""``harness.evaluate``: resolve tasks and model, load data, run, and write results."""

from __future__ import annotations

import copy
import math
import os
import sys
import tempfile
import time
import weakref
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.adapters.cache import caching, default_cache
from harness.adapters.cached_model import CachedModel
from harness.adapters.card import CARD_KEY, card_of
from harness.adapters.inmemory import adapter_is_cacheable, in_memory_adapter
from harness.adapters.resolve import build_adapter, check_available_offline
from harness.errors import HarnessError, UnknownNameError
from harness.params import Param, resolve_params
from harness.plugins.registry import Registry, get_registry
from harness.progress import Progress
from harness.results import provenance
from harness.results.dataframe import warn_about
from harness.results.intervals import DEFAULT_RESAMPLES, item_intervals
from harness.results.jsonl import open_for_append
from harness.results.records import RESULTS_FILE, ResultRecord, append_record, read_records
from harness.results.samples import samples_name, statistic_fields, write_samples
from harness.results.seedstats import mean_and_std
from harness.results.signature import Signature
from harness.run.config import RunConfig, run_config
from harness.run.context import RunContext, resolve_aux_models
from harness.run.data import DatasetLoader, LoadedData
from harness.run.distributed import RankPartition, ShardPartition, init_from_launcher, parse_shard
from harness.run.joint import JointOutputs
from harness.run.plan import DataSource, RunPlan, TaskPlan, count_outputs
from harness.run.presets import Preset, PresetError, include_presets
from harness.run.reference import REFERENCE_KIND, ReferenceModel, check_model_given, split_model_free
from harness.run.task import Task, TaskOutput


@dataclass
class Skipped:
    """A task that ``--resume`` skipped because its signature is already in the results."""

    task: str
    signature: str


@dataclass
class ShardDone:
    """A task run with ``--shard``: its slice of model outputs is cached, no results written."""

    task: str
    shard: str
    missing: int


def resolve_device(device: str) -> str:
    """``auto`` becomes ``cuda`` when a CUDA GPU is usable, else ``cpu``; any other device must exist here."""
    if device != "auto":
        return check_device(device)
    if not any(Path(p).exists() for p in ("/dev/nvidiactl", "/proc/driver/nvidia")):
        return "cpu"
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def check_device(device: str) -> str:
    """``cpu``, or ``cuda`` / ``cuda:N`` that this PyTorch can use (the spelling is checked by ``RunConfig``)."""
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            why = "it is a CPU-only build" if torch.version.cuda is None else "no CUDA GPU is visible"
            raise HarnessError(
                f"--device {device}: this PyTorch ({torch.__version__}) cannot use CUDA ({why}); use --device cpu"
            )
        index, count = int(device.partition(":")[2] or 0), torch.cuda.device_count()
        if index >= count:
            raise HarnessError(f"--device {device}: there are {count} CUDA device(s), numbered from 0")
    return device


def split_names(value: str | Sequence[str]) -> list[str]:
    """``"a,b"`` or ``["a", "b"]`` as a list of stripped, non-empty names."""
    names = value.split(",") if isinstance(value, str) else list(value)
    names = [n.strip() for n in names if n.strip()]
    if not names:
        raise HarnessError("no task given")
    return names


def build_tasks(
    registry: Registry, names: list[str], task_args: Mapping[str, Any], data_dir: str | None = None
) -> list[Task[Any]]:
    """Instantiate the tasks; each receives the arguments it declares (see ``resolve_tasks``)."""
    return [task for task, _ in resolve_tasks(registry, names, task_args, data_dir)]


def resolve_tasks(
    registry: Registry, names: list[str], task_args: Mapping[str, Any], data_dir: str | None = None
) -> list[tuple[Task[Any], dict[str, Any]]]:
    """Instantiate the tasks, each with the arguments given for it: (task, its arguments and its loader's).

    A key ``TASK.key`` is given to that task alone; an unscoped key to every task that declares it.
    Every argument must be declared by a task or by its dataset loader (a loader's own arguments,
    such as the size of a generated dataset, reach it through ``--task-args`` too; without
    ``data_dir``, so do those of a loader's fallback dataset). An unscoped key that two tasks
    declare with different definitions (``k``: xlr's Recall@k cut-off, bitext_mining's margin
    neighbourhood) is an error that shows the scoped form.
    """
    classes = {name: registry.load("task", name) for name in names}
    for name, cls in classes.items():
        if not (isinstance(cls, type) and issubclass(cls, Task)):
            raise HarnessError(f"task {name!r} is not a Task subclass ({registry.get('task', name).ref})")
    unscoped, scoped = _split_scopes(task_args, list(classes))
    tasks = []
    for name, cls in classes.items():
        given = {k: v for k, v in {**unscoped, **scoped[name]}.items() if k in cls.params}
        tasks.append(cls(name, given))
    declared = {task.name: declared_params(registry, task, data_dir) for task in tasks}
    for key in unscoped:
        if not any(key in params for params in declared.values()):
            everything = {param for params in declared.values() for param in params}
            raise UnknownNameError(
                "task argument",
                key,
                everything,
                listing=f"the tasks {', '.join(names)} take: {', '.join(sorted(everything)) or 'none'}",
            )
        _check_one_meaning(key, unscoped[key], declared)
    for name, given in scoped.items():
        for key in given:
            if key not in declared[name]:
                raise UnknownNameError(
                    f"argument for task {name!r}",
                    key,
                    declared[name],
                    listing=f"it and its dataset take: {', '.join(sorted(declared[name])) or 'none'}",
                )
    return [
        (task, {**{k: v for k, v in unscoped.items() if k in declared[task.name]}, **scoped[task.name]})
        for task in tasks
    ]


def _split_scopes(task_args: Mapping[str, Any], names: list[str]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """(unscoped arguments, task -> its scoped ones) of ``--task-args``; a scope must be a task of the run."""
    unscoped: dict[str, Any] = {}
    scoped: dict[str, dict[str, Any]] = {name: {} for name in names}
    for key, value in task_args.items():
        scope, dot, name = key.rpartition(".")
        if not dot:
            unscoped[key] = value
        elif not scope or not name:
            raise HarnessError(f"malformed --task-args key {key!r}: expected key=value or TASK.key=value")
        elif scope not in scoped:
            raise UnknownNameError(
                "task in --task-args",
                scope,
                names,
                listing=f"{key}: a scoped argument names a task of this run ({', '.join(names)})",
            )
        else:
            scoped[scope][name] = value
    return unscoped, scoped


def declared_params(registry: Registry, task: Task[Any], data_dir: str | None) -> dict[str, Param]:
    """Every argument the task takes: its own, its loader's, and (without ``data_dir``) its loader's fallback's."""
    loader = registry.load("dataset", task.dataset)
    found: dict[str, Param] = {}
    if data_dir is None and loader.fallback in registry.names("dataset"):
        found.update(registry.load("dataset", loader.fallback).params)
    return {**found, **loader.params, **task.params}


def _check_one_meaning(key: str, value: Any, declared: Mapping[str, Mapping[str, Param]]) -> None:
    """An unscoped argument that tasks declare as different arguments (``Param.same_argument``: by declared meaning,
    else by definition) is an error showing the scoped form."""
    meanings: list[tuple[Param, list[str]]] = []
    for task, params in declared.items():
        if key in params:
            spec = params[key]
            group = next((tasks for first, tasks in meanings if first.same_argument(spec)), None)
            if group is None:
                meanings.append((spec, [task]))
            else:
                group.append(task)
    if len(meanings) < 2:
        return
    readings = "; ".join(f"{', '.join(tasks)}: {_reading(spec)}" for spec, tasks in meanings)
    users = [task for _, tasks in meanings for task in tasks]
    raise HarnessError(
        f"task argument {key!r} means different things to the tasks of this run ({readings}); "
        f"scope it to the task it is for: --task-args {','.join(f'{task}.{key}={value}' for task in users)}"
    )


def _reading(spec: Param) -> str:
    return f"{spec.help!r}" + (f" (meaning {spec.meaning!r})" if spec.meaning else "")


def resolve_data_source(registry: Registry, task: Task[Any], data_dir: str | None) -> DataSource:
    """Where the task's data comes from: ``--data-dir``, else the task's own source (a YAML preset's
    ``dataset.source``), else its loader's default; without either location, the loader's built-in
    ``fallback`` dataset when it has one (``ikea`` -> ``xling-shapes``). The task is not changed."""
    location = data_dir if data_dir is not None else task_data_source(task)
    fallback = registry.load("dataset", task.dataset).fallback
    if location is not None or not fallback:
        return DataSource(task.dataset, location)
    if fallback not in registry.names("dataset"):
        raise HarnessError(
            f"dataset {task.dataset!r} needs --data-dir (its built-in default, {fallback!r}, is not available: "
            "the plugin that registers it is not loaded)"
        )
    return DataSource(fallback, None)


def loader_args(
    registry: Registry, task: Task[Any], source: DataSource, task_args: Mapping[str, Any]
) -> dict[str, Any]:
    """The arguments the source's loader declares: the task's values, else the user's, else the loader's defaults."""
    spec = registry.load("dataset", source.loader).params
    given = {
        **{k: v for k, v in task_args.items() if k in spec},
        **{k: v for k, v in task.dataset_args().items() if k in spec},
    }
    return resolve_params(spec, given, f"dataset {source.loader!r}")


def load_task_data(
    registry: Registry, source: DataSource, args: Mapping[str, Any], images: str | None, limit: int | None
) -> LoadedData:
    """Load the data through the source's registered loader, then apply ``--limit``."""
    loader: DatasetLoader = registry.load("dataset", source.loader)(source.loader)
    loaded = loader.load(source.location, args, images_dir=images)
    if limit is not None and len(loaded.data) > limit:
        data = loaded.data
        loaded.data = data.select(range(limit)) if hasattr(data, "select") else data[:limit]
    loaded.identity = {"loader": source.loader, **loaded.identity, "size": len(loaded.data)}
    return loaded


def data_key(source: DataSource, args: Mapping[str, Any], images: str | None, limit: int | None) -> tuple[Any, ...]:
    """What makes two tasks' data the same: the loader, its source and arguments, the images folder and ``--limit``
    (the tasks of a run whose keys are equal share one ``LoadedData``, read once)."""
    return (source.loader, source.location, tuple(sorted((k, repr(v)) for k, v in args.items())), images, limit)


def choose_seeds(task: Task[Any], seeds: int | None, seed: int | None, size: int | None = None) -> list[int]:
    """``--seed S`` gives [S]; ``--seeds N`` gives 0..N-1; otherwise the task's default count.

    When the task says that seeds cannot differ on ``size`` items (``Task.seeds_differ``), only
    the first seed is kept: the other seeds would repeat its numbers.
    """
    if not task.uses_seeds:
        return [seed] if seed is not None else [0]
    if seed is not None:
        return [seed]
    count = task.default_seeds if seeds is None else seeds
    if size is not None and not task.seeds_differ(size):
        return [0]
    return list(range(count))


def aggregate(
    per_seed: list[dict[str, float | None]],
) -> tuple[dict[str, float | None], dict[str, float | None], dict[str, list[float | None]]]:
    """Mean and sample standard deviation (ddof=1; 0 for one seed) of each metric over seeds.

    A metric undefined for a seed (None or NaN) is recorded as None there and left out of the
    mean; a metric undefined for every seed has mean None.
    """
    names = list(dict.fromkeys(name for values in per_seed for name in values))
    means: dict[str, float | None] = {}
    stds: dict[str, float | None] = {}
    series: dict[str, list[float | None]] = {}
    for name in names:
        raw = [values.get(name) for values in per_seed]
        series[name] = [None if v is None or not math.isfinite(float(v)) else float(v) for v in raw]
        means[name], stds[name] = mean_and_std(series[name])
    return means, stds, series


def finished_signatures(path: Path, shown: int = 5) -> set[str]:
    """The signatures of the valid lines of a results file, for ``--resume``; each unreadable line is a warning."""
    if not os.path.lexists(path):
        return set()
    records, problems = read_records(path)
    for problem in problems[:shown]:
        print(f"harness: warning: {problem}; --resume cannot count that line, so its task runs again", file=sys.stderr)
    if len(problems) > shown:
        print(f"harness: warning: {path}: {len(problems) - shown} more unreadable line(s)", file=sys.stderr)
    return {record.signature for record in records}


def check_output_folder(output: str | os.PathLike[str]) -> Path:
    """Create the output folder and make sure results can be appended there, before any work."""
    folder = Path(output)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(folder / RESULTS_FILE):
            os.close(open_for_append(folder / RESULTS_FILE))  # a FIFO there is refused, never waited on
        else:  # the results file is created with its first line: a failed run leaves no empty one
            tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise HarnessError(f"output folder {str(folder)!r} is not writable: {exc.strerror or exc}") from None
    return folder


def evaluate(
    tasks: str | Sequence[str], model: Any, config: RunConfig | None = None, *, dry_run: bool = False, **options: Any
) -> list[Any]:
    """Run tasks on one model and append one results line per task to ``<output>/results.jsonl``.

    ``model`` is a registered name, a Hub id or folder, a ``ModelAdapter`` instance, or any object
    with ``encode(texts)`` returning one vector per text (used as a text encoder, uncached).
    ``config`` holds the run's settings (``RunConfig``); keyword ``options`` are a shorthand for
    its fields (``evaluate("xlr", m, seeds=3)`` equals ``evaluate("xlr", m, RunConfig(seeds=3))``)
    and override those of ``config``. Every precondition of every task is checked first (``prepare``); then each task's line is
    written as soon as that task finishes, so an error in a later task loses nothing already
    computed. With ``output=None`` nothing is written. Returns the records (``Skipped`` for
    resumed tasks, ``ShardDone`` for tasks whose shard could not see every model output); with
    ``dry_run=True`` nothing is computed and the ``TaskPlan`` of each task is returned, with its
    counts of cached model outputs and of those a run would compute.

    Under ``torchrun`` / ``accelerate launch`` every rank computes its share of the missing
    model outputs and rank 0 alone writes results. With ``shard="i/N"`` only slice i of the
    missing outputs is computed and cached (see ``harness.run.distributed``).
    """
    config = run_config(config, options)
    registry = run_registry(config)
    with_model, model_free = split_model_free({name: registry.load("task", name) for name in split_names(tasks)})
    if with_model and model_free:  # the model-free tasks run once, under the stand-in model ``reference``
        resolved = resolve_tasks(registry, [*with_model, *model_free], config.task_args, config.data_dir)
        given = {task.name: {f"{task.name}.{k}": v for k, v in args.items()} for task, args in resolved}

        def part(names: list[str]) -> RunConfig:  # each task's own arguments, checked once for the whole run
            return config.replace(task_args={k: v for name in names for k, v in given[name].items()})

        return [
            *evaluate(with_model, model, part(with_model), dry_run=dry_run),
            *evaluate(model_free, None, part(model_free), dry_run=dry_run),
        ]
    with caching(config.use_cache):  # --no-cache: no cache file is opened, not even for the weight-hash memo
        plan = prepare(tasks, model, config)
        if dry_run:
            return count_outputs(plan)
        outcomes = execute(plan)
    warn_about(outcomes)  # what the command line prints, as Python warnings (HarnessWarning)
    return outcomes


def prepare(tasks: str | Sequence[str], model: Any, config: RunConfig | None = None, **options: Any) -> RunPlan:
    """The preflight: check every precondition of every task before any inference; the run's plan.

    Resolves the tasks and their arguments, the model and its capabilities, the auxiliary
    models, the output folder, and loads and validates every task's data (images included).
    ``config`` and ``options`` are as for ``evaluate``.
    """
    config = run_config(config, options)
    with caching(config.use_cache):
        return _prepare(split_names(tasks), model, config)


def run_registry(config: RunConfig) -> Registry:
    """The run's registry (``config.registry``, else the process-wide one) with the presets of ``--include-path``."""
    registry = config.registry or get_registry()
    if config.include_path is not None:
        registry = include_presets(registry, config.include_path)
    return registry


def _prepare(names: list[str], model: Any, config: RunConfig) -> RunPlan:
    registry = run_registry(config)
    progress = config.progress if isinstance(config.progress, Progress) else Progress(enabled=bool(config.progress))
    resolved = resolve_tasks(registry, names, config.task_args, config.data_dir)
    task_objects = [task for task, _ in resolved]
    with_model, model_free = split_model_free({task.name: task for task in task_objects})
    if with_model and model_free:
        raise HarnessError(
            f"tasks {', '.join(model_free)} need no model and {', '.join(with_model)} do: prepare them separately "
            "(harness.evaluate and harness run run them one after the other)"
        )
    check_model_given(with_model, model)
    reference = not with_model
    if reference:
        model = ReferenceModel()  # a model given for model-free tasks is not used
    partition: RankPartition | ShardPartition | None = parse_shard(config.shard) if config.shard else None
    device = resolve_device(config.device)
    launched = init_from_launcher(device, config.dist_timeout)
    if launched is not None:
        if partition is not None:
            raise HarnessError(
                "--shard is for runs without a launcher; under torchrun each rank already takes its share"
            )
        partition, device = launched
    is_main = not isinstance(partition, RankPartition) or partition.rank == 0
    if not is_main:
        progress = Progress(enabled=False)
    output = config.output
    folder = None if output is None else check_output_folder(output) if is_main else Path(output)
    needs = {t.name: t.requires for t in task_objects}
    batch_size = config.batch_size
    if isinstance(model, str):
        adapter = build_adapter(registry, model, dict(config.model_args), needs, device=device, batch_size=batch_size)
    else:
        adapter = in_memory_adapter(model, needs, device=device, batch_size=batch_size)
    cache = default_cache() if config.use_cache and adapter_is_cacheable(adapter) else None
    cached_model = CachedModel(adapter, cache, progress, partition)
    check_available_offline(cached_model.identity)
    aux = config.models_by_role()
    aux_loaded = resolve_aux_models(  # with the run's registry, before any data is loaded; shared by the tasks
        registry,
        aux,
        [(task.name, task.aux_capabilities()) for task in task_objects],
        device=device,
        batch_size=batch_size,
        cache=default_cache() if config.use_cache else None,
        progress=progress,
        partition=partition,
    )
    # a model-free task's line names no real model: one already written for its configuration is never recomputed
    resume = config.resume or reference
    done = finished_signatures(folder / RESULTS_FILE) if resume and folder is not None and is_main else set()
    if isinstance(partition, RankPartition):
        done = partition.from_main(done, "agreeing on finished tasks")
    world_size = partition.world_size if isinstance(partition, RankPartition) else 1
    plans = []
    # tasks that read the same data share one LoadedData (and so do runs given one data_cache)
    read: MutableMapping[tuple[Any, ...], LoadedData] = {} if config.data_cache is None else config.data_cache
    for task, given_args in resolved:
        clock = time.perf_counter()
        source = resolve_data_source(registry, task, config.data_dir)
        data_args = loader_args(registry, task, source, given_args)
        key = data_key(source, data_args, config.images, config.limit)
        if key not in read:
            try:
                read[key] = load_task_data(registry, source, data_args, config.images, config.limit)
            except HarnessError as exc:
                raise _at_preset_source(task, source, config.data_dir, exc) from None
        loaded = read[key]
        check_task_ready(task, config.images or loaded.identity.get("images"))  # a set may carry its own images
        check_task_size(task, loaded, config.limit)
        seed_list = choose_seeds(task, config.seeds, config.seed, len(loaded.data))
        all_args = {
            **data_args,
            **task.recorded_args(source.loader),
        }  # the loader's own arguments count: they change the data
        ctx = RunContext(
            seed_list,
            batch_size,
            device,
            progress,
            cache,
            aux,
            partition,
            aux_loaded,
            task.aux_capabilities(),
            registry,
        )
        aux_identities = ctx.aux_identities(task.name)
        signature = Signature.build(
            task.name,
            task.version,
            all_args,
            loaded.identity,
            seed_list if task.uses_seeds else None,
            aux_identities,
            config.limit,
        ).with_model(cached_model.identity.as_dict())
        _SERVED_BY[task] = served_by(
            registry, task, source, [cached_model.identity.as_dict(), *aux_identities.values()]
        )
        plans.append(
            TaskPlan(
                task,
                all_args,
                source,
                loaded,
                seed_list,
                ctx,
                signature,
                str(signature) in done,
                time.perf_counter() - clock,
            )
        )
    if isinstance(partition, RankPartition):  # ranks that read different files would wait for keys never computed
        partition.same_data(
            [
                f"task {p.task.name}: {p.signature.data_loader}@{p.signature.data_revision}, {p.signature.items} items"
                for p in plans
            ]
        )
    settings = {
        "limit": config.limit,
        "resamples": config.resamples,
        "batch_size": batch_size,
        "device": device,
        "data_dir": config.data_dir,
        "images": config.images,
        "image_model": config.image_model,
        "use_cache": cache is not None,
        "world_size": world_size,
    }
    return RunPlan(
        plans,
        cached_model,
        folder,
        settings,
        partition,
        is_main,
        progress,
        config.shard,
        config.log_samples,
        config.log_form,
        frozenset(config.log_without),
    )


def task_data_source(task: Task[Any]) -> str | None:
    """The task's own data source (a YAML preset's ``dataset.source``), or None."""
    source = getattr(task, "data_source", None)
    return source() if callable(source) else source


def _at_preset_source(task: Task[Any], source: DataSource, data_dir: str | None, exc: HarnessError) -> HarnessError:
    """A preset's data source that does not exist: the error names the preset's file and line."""
    preset = getattr(task, "preset", None)
    if (
        not isinstance(preset, Preset)
        or data_dir is not None
        or source.location is None
        or isinstance(exc, PresetError)
    ):
        return exc
    return exc if Path(source.location).expanduser().exists() else preset.error("dataset.source", str(exc))


def check_task_ready(task: Task[Any], images: str | None) -> None:
    """Task preconditions beyond its data: a task that compares images (``needs_images``) needs ``--images``."""
    if getattr(task, "needs_images", False) and images is None:
        raise HarnessError(
            f"task {task.name!r} compares images: pass --images DIR (files named as in the dataset, "
            "e.g. CoMMuTE's img.order)"
        )


def check_task_size(task: Task[Any], loaded: LoadedData, limit: int | None) -> None:
    """A task refuses data with fewer items than it can evaluate (``Task.check_size``), before any inference."""
    problem = task.check_size(len(loaded.data))
    if problem is None:
        return
    where = f"{loaded.identity.get('loader')} from {loaded.identity.get('source') or 'its default source'}"
    cut = f", cut by --limit {limit}" if limit is not None else ""
    raise HarnessError(f"{problem} ({where}{cut})")


def execute(plan: RunPlan) -> list[ResultRecord | Skipped | ShardDone]:
    """Run a prepared plan, writing each task's results line as soon as the task finishes."""
    cached_model, folder = plan.model, plan.folder
    outcomes: list[ResultRecord | Skipped | ShardDone] = []
    # tasks that share work (xlr + backretrieval: one text pass) evaluate together; not under --shard, whose
    # stand-in values are counted per task
    joint = JointOutputs(plan.tasks if plan.shard is None else [], cached_model)
    described: dict[str, Any] = {}  # the model's identity and card, read once for every line of the run
    for task_plan in plan.tasks:
        task, ctx = task_plan.task, task_plan.ctx
        if task_plan.done:
            outcomes.append(Skipped(task.name, str(task_plan.signature)))
            continue
        started = datetime.now(timezone.utc)
        clock = time.perf_counter()
        for m in [cached_model, *ctx.loaded_models.values()]:
            m.placeholders = 0
        try:
            result = joint.evaluate(task_plan)
        except Exception:
            if not _blanks(cached_model, ctx):
                raise
            result = None  # a shard's stand-in values may break a task: expected, nothing to report
        blanks = _blanks(cached_model, ctx)
        if blanks or result is None:
            outcomes.append(ShardDone(task.name, plan.shard or "", blanks))
            continue
        if not plan.is_main:
            continue
        if len(result.per_seed) != len(task_plan.seeds):
            raise HarnessError(
                f"task {task.name!r} returned {len(result.per_seed)} metric sets for {len(task_plan.seeds)} seeds"
            )
        signature = str(task_plan.signature)
        logged = plan.log_samples and folder is not None and (task.role or task.name) not in plan.log_without
        samples_file = samples_name(task.name, signature, plan.log_form) if logged else None
        described = described or {
            **cached_model.identity.as_dict(),
            **({"kind": REFERENCE_KIND} if isinstance(cached_model.adapter, ReferenceModel) else {}),
            CARD_KEY: card_of(cached_model.adapter, cached_model.identity),  # the card: no identity
        }
        record = _record(
            task,
            task_plan.args,
            described,
            task_plan.loaded,
            task_plan.seeds,
            result,
            str(task_plan.signature.task_part()),
            signature,
            samples_file,
            dict(plan.settings),
            started,
            time.perf_counter() - clock + task_plan.load_seconds,
        )
        if folder is not None:
            if samples_file is not None:
                write_samples(folder / samples_file, signature, result.samples, statistic_fields(record))
            append_record(folder, record)
        outcomes.append(record)
    plan.leave_together()
    return outcomes


def _blanks(model: CachedModel, ctx: RunContext) -> int:
    """The stand-in values the model and the auxiliary models (those loaded so far) gave for outputs of other shards."""
    return sum(m.placeholders for m in [model, *ctx.loaded_models.values()])


_SERVED_BY: weakref.WeakKeyDictionary[Task[Any], dict[str, str]] = (
    weakref.WeakKeyDictionary()
)  # task -> its results' ``plugins``


def served_by(
    registry: Registry, task: Task[Any], source: DataSource, models: Sequence[Mapping[str, Any]]
) -> dict[str, str]:
    """Distribution -> version of every plugin package serving a task: the task's, its dataset loader's, its models' adapters'."""
    found = registry.distributions(
        [("task", task.name), ("dataset", source.loader)], [m.get("adapter", "") for m in models]
    )
    for model in models:  # an adapter no registration points to directly (a subclass): its own distribution
        if model.get("distribution") and model.get("distribution_version"):
            found.setdefault(model["distribution"], model["distribution_version"])
    return found


def _record(
    task: Task[Any],
    args: dict[str, Any],
    model: dict[str, Any],
    loaded: LoadedData,
    seeds: list[int],
    result: TaskOutput,
    task_sig: str,
    signature: str,
    samples_file: str | None,
    run: dict[str, Any],
    started: datetime,
    wall: float,
) -> ResultRecord:
    means, stds, series = aggregate(result.per_seed)
    if task.main_metric not in means:
        raise HarnessError(f"task {task.name!r} did not report its main metric {task.main_metric!r}")
    info = task.metric_info(result)
    intervals, interval_warnings = item_intervals(
        task.name, result.samples, info, means, run.get("resamples", DEFAULT_RESAMPLES)
    )
    return ResultRecord(
        task=task.name,
        task_version=task.version,
        task_args=dict(args),
        main_metric=task.main_metric,
        metrics=means,
        metrics_std=stds,
        per_seed=series,
        seeds=seeds,
        model=copy.deepcopy(model),  # each line its own (the identity and card are read once per run)
        dataset=dict(loaded.identity),
        run=run,
        signature=signature,
        task_signature=task_sig,
        harness={"version": provenance.harness_version(), "git": provenance.harness_git()},
        environment=provenance.library_versions(),
        hardware=provenance.hardware(run["device"]),
        started=started.isoformat(timespec="seconds"),
        wall_seconds=round(wall, 3),
        samples_file=samples_file,
        extra=result.extra,
        undefined=dict(result.undefined),
        plugins=_SERVED_BY.get(task, {}),
        family=task.family,
        role=task.role or task.name,
        arg_meanings={name: param.meaning for name, param in task.params.items() if param.meaning and name in args},
        metric_info=info,
        intervals=intervals,
        warnings=run_warnings(task, result, loaded, seeds, run.get("limit")) + interval_warnings,
    )


def run_warnings(
    task: Task[Any], result: TaskOutput, loaded: LoadedData, seeds: list[int], limit: int | None
) -> list[str]:
    """What could lead a reader of the line to a wrong conclusion: the task's own checks, ``--limit``, a single forced seed."""
    found = [f"{task.name}: {text}" for text in task.check(result)]
    size = len(loaded.data)
    if limit is not None:
        found.append(
            f"{task.name}: --limit {limit}: {size} items evaluated (not comparable with a run on the full data; "
            f"'limit:{limit}' is in the signature)"
        )
    if task.uses_seeds and len(seeds) == 1 and not task.seeds_differ(size):
        found.append(
            f"{task.name}: every seed would evaluate the same {size} items, so it ran once (seed {seeds[0]}); "
            "the spread over seeds is undefined; the interval over items is shown instead."
        )
    return found
