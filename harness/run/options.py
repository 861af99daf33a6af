"""The options of ``harness run``, for it and for a plugin command that runs tasks (both public: ``harness``).

A plugin command adds them to its parser and turns the parsed options into a ``RunConfig``::

    import harness

    class Sweep:
        def add_arguments(self, parser):
            harness.add_run_arguments(parser, tasks="my_task")

        def run(self, args):
            harness.evaluate(args.tasks, args.model, harness.run_config(args))
            return 0
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.run.config import RunConfig


def add_run_arguments(parser: argparse.ArgumentParser, tasks: str | None = None) -> None:
    """The options of ``harness run``, for it and for plugin commands that run tasks (``tasks``: a default for
    ``--tasks``, which is then optional). ``run_config`` turns the parsed options into a ``RunConfig``."""
    parser.add_argument(
        "--tasks",
        required=tasks is None,
        default=tasks,
        help="comma-separated task names (see `harness list tasks`)" + (f"; default {tasks}" if tasks else ""),
    )
    parser.add_argument(
        "--model",
        default=None,
        help="a registered model or preset, a Hub id, or a local folder (model-free tasks need none)",
    )
    parser.add_argument(
        "--model-args", default=None, help="adapter arguments, k=v,k2=v2 (adapter=NAME picks the adapter)"
    )
    parser.add_argument(
        "--task-args",
        default=None,
        help="task arguments, k=v,k2=v2 (each task takes those it declares); TASK.k=v for one task of the run",
    )
    parser.add_argument(
        "--data-dir", default=None, help="dataset folder (raw layout or save_to_disk) or Hub dataset id"
    )
    parser.add_argument("--images", default=None, help="folder of images for datasets that reference image files")
    parser.add_argument("--image-model", default=None, help="image encoder for tasks that compare images (g)")
    parser.add_argument("--image-model-args", default=None, help="arguments of --image-model, k=v,...")
    parser.add_argument("--limit", type=int, default=None, help="use only the first N examples (for quick checks)")
    parser.add_argument(
        "--resamples",
        type=int,
        default=1000,
        help="bootstrap resamples of the items for each metric's 95%% interval (0: no intervals)",
    )
    seeds = parser.add_mutually_exclusive_group()
    seeds.add_argument("--seeds", type=int, default=None, help="number of seeds (0..N-1) for seeded tasks")
    seeds.add_argument("--seed", type=int, default=None, help="one seed")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto")
    parser.add_argument("--output", default="results", help="results folder (default ./results)")
    parser.add_argument("--log-samples", action="store_true", help="write per-sample JSONL beside results.jsonl")
    parser.add_argument("--resume", action="store_true", help="skip tasks whose signature is already in the results")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the embedding/score cache")
    parser.add_argument(
        "--shard",
        default=None,
        metavar="I/N",
        help="compute and cache only slice I of N of the model outputs (cluster job arrays); "
        "a final run without --shard writes the results",
    )
    parser.add_argument(
        "--dist-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="timeout of collectives under torchrun/accelerate (default 1800, or HARNESS_DIST_TIMEOUT)",
    )
    parser.add_argument(
        "--include-path",
        default=None,
        metavar="DIR",
        help="also register the YAML task presets of DIR (see docs/plugins.md)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="check everything and print the plan (tasks, arguments, data, models, cached outputs); compute nothing",
    )


def run_config(args: argparse.Namespace) -> RunConfig:
    """The ``RunConfig`` of parsed ``add_run_arguments`` options (a plugin command that runs tasks builds it here)."""
    from harness.run.config import RunConfig

    return RunConfig(
        model_args=args.model_args,
        task_args=args.task_args,
        data_dir=args.data_dir,
        images=args.images,
        image_model=args.image_model,
        image_model_args=args.image_model_args,
        limit=args.limit,
        resamples=args.resamples,
        seeds=args.seeds,
        seed=args.seed,
        batch_size=args.batch_size,
        device=args.device,
        output=args.output,
        log_samples=args.log_samples,
        resume=args.resume,
        use_cache=not args.no_cache,
        shard=args.shard,
        dist_timeout=args.dist_timeout,
        progress=True,
        include_path=args.include_path,
    )
