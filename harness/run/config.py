"""``RunConfig``: every setting of a run besides its tasks and model, validated in one place."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness.errors import HarnessError
from harness.params import parse_kv
from harness.results.intervals import DEFAULT_RESAMPLES

if TYPE_CHECKING:
    from harness.plugins.registry import Registry
    from harness.progress import Progress

LOG_FORMS = ("full", "compact")
_DEVICE = re.compile(r"auto|cpu|cuda(:\d+)?")


@dataclass(frozen=True)
class RunConfig:
    """The settings of ``harness.evaluate`` / ``harness.prepare`` (the CLI's options of ``harness run``).

    ``model_args``, ``task_args`` and ``image_model_args`` take ``"k=v,k2=v2"`` or a mapping and
    are kept as dicts. A task argument may be scoped to one task of the run: ``"xlr.k=5"``, or
    ``{"xlr": {"k": 5}}`` in a mapping (kept as ``{"xlr.k": 5}``). ``aux_models`` gives the model of
    each auxiliary role the tasks declare (role -> name, or (name, arguments)); ``image_model`` is
    the ``"image"`` role's (``--image-model``). Construction checks every value that does not
    depend on the tasks or the machine (batch size, seeds, seed, limit, resamples, the device's spelling, shard, output);
    whether a CUDA device is usable is checked when the run is prepared. ``output=None`` writes
    nothing. ``registry`` defaults to the installed plugins. ``progress`` shows what the run computes, on stderr, as
    the command line does (bars on a terminal, a line at least every 10 s in a log or a notebook); ``False`` turns
    it off, a ``Progress`` sends it elsewhere. ``log_samples`` writes each task's per-sample log beside the results: ``log_form="full"`` every field
    (``samples_<task>_<hash>.jsonl``), ``"compact"`` only ``id``, ``seed`` and the fields the line's statistics
    read, gzip-compressed (``.jsonl.gz``, what the committed leaderboard keeps); tasks whose role is in
    ``log_without`` write none. Runs given one ``data_cache`` mapping read each data set once between them
    (``harness suite``).
    """

    model_args: Mapping[str, Any] = field(default_factory=dict)
    task_args: Mapping[str, Any] = field(default_factory=dict)
    data_dir: str | None = None
    images: str | None = None
    image_model: str | None = None
    image_model_args: Mapping[str, Any] = field(default_factory=dict)
    aux_models: Mapping[str, Any] = field(default_factory=dict)
    limit: int | None = None
    seeds: int | None = None
    seed: int | None = None
    batch_size: int = 32
    device: str = "auto"
    output: str | os.PathLike[str] | None = "results"
    log_samples: bool = False
    log_form: str = "full"
    log_without: Sequence[str] = ()
    resume: bool = False
    use_cache: bool = True
    shard: str | None = None
    dist_timeout: float | None = None
    resamples: int = DEFAULT_RESAMPLES
    include_path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None
    progress: Progress | bool = field(default=True, compare=False)
    registry: Registry | None = field(default=None, compare=False)
    data_cache: MutableMapping[tuple[Any, ...], Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name, what in (
            ("model_args", "--model-args"),
            ("task_args", "--task-args"),
            ("image_model_args", "--image-model-args"),
        ):
            object.__setattr__(self, name, parse_kv(getattr(self, name), what))
        object.__setattr__(self, "task_args", _flatten_scopes(self.task_args))
        object.__setattr__(self, "aux_models", self._checked_aux_models())
        _at_least("--batch-size", self.batch_size, 1)
        _at_least("--seeds", self.seeds, 1)
        _at_least("--seed", self.seed, 0, "0 or more")
        _at_least("--limit", self.limit, 1)
        _at_least("--resamples", self.resamples, 0)
        if not _DEVICE.fullmatch(self.device):
            raise HarnessError(f"--device takes cpu, cuda, cuda:N or auto, got {self.device!r}")
        if self.log_form not in LOG_FORMS:
            raise HarnessError(f"log_form takes {' or '.join(LOG_FORMS)}, got {self.log_form!r}")
        object.__setattr__(self, "log_without", tuple(self.log_without))
        if self.output is None and (self.resume or self.log_samples):
            raise HarnessError("--resume and --log-samples need an output folder (output=None writes nothing)")
        if self.shard:
            from harness.run.distributed import parse_shard

            parse_shard(self.shard)

    def _checked_aux_models(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """``aux_models`` as role -> (name, arguments), each checked."""
        found: dict[str, tuple[str, dict[str, Any]]] = {}
        for role, value in dict(self.aux_models).items():
            name, args = (value, {}) if isinstance(value, str) else value if _is_pair(value) else (None, None)
            if not isinstance(role, str) or not isinstance(name, str) or not name or not _is_args(args):
                raise HarnessError(f"aux_models: role {role!r} takes a model name or (name, arguments), got {value!r}")
            found[role] = (name, parse_kv(args, f"arguments of the {role} model"))
        if self.image_model and "image" in found:
            raise HarnessError("the image role is given twice: by image_model and by aux_models['image']")
        return found

    def models_by_role(self) -> dict[str, tuple[str, dict[str, Any]]]:
        """Role -> (model name, arguments) of every auxiliary model given (``image_model`` is the image role's)."""
        image = {"image": (self.image_model, dict(self.image_model_args))} if self.image_model else {}
        return {**self.aux_models, **image}

    def replace(self, **changes: Any) -> RunConfig:
        """A copy with ``changes`` applied, validated again."""
        return dataclasses.replace(self, **changes)


def _at_least(option: str, value: int | None, lowest: int, bound: str = "") -> None:
    """``value`` (None: unset) is a whole number of at least ``lowest``, or a ``HarnessError`` naming the option."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise HarnessError(f"{option} takes a whole number, got {value!r}")
    if value < lowest:
        raise HarnessError(f"{option} must be {bound or f'at least {lowest}'}, got {value}")


def _is_pair(value: Any) -> bool:
    return isinstance(value, tuple) and len(value) == 2


def _is_args(value: Any) -> bool:
    return value is None or isinstance(value, (str, Mapping))


def _flatten_scopes(args: Mapping[str, Any]) -> dict[str, Any]:
    """``{"xlr": {"k": 5}}`` as ``{"xlr.k": 5}``; other entries unchanged."""
    flat: dict[str, Any] = {}
    for key, value in args.items():
        items = [(f"{key}.{k}", v) for k, v in value.items()] if isinstance(value, Mapping) else [(key, value)]
        for name, item in items:
            if name in flat:
                raise HarnessError(f"malformed --task-args: {name!r} is given twice")
            flat[name] = item
    return flat


def run_config(config: RunConfig | None, options: Mapping[str, Any]) -> RunConfig:
    """The config of a call: ``config`` (default ``RunConfig()``) with the keyword ``options`` applied.

    The keyword arguments of ``harness.evaluate`` are a convenience over ``RunConfig``: an
    unknown one is a ``TypeError``, as for any function.
    """
    known = {f.name for f in dataclasses.fields(RunConfig)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r} (RunConfig takes: {', '.join(sorted(known))})")
    base = config if config is not None else RunConfig()
    return base.replace(**options) if options else base
