"""``harness commute-temperature``: CoMMuTE metrics as a function of the softmax temperature.

For each temperature T the CoMMuTE tasks run through ``harness.evaluate`` with
``temperature=T`` (one results line per task and T, in ``--output``); the command then writes
``temperature_sweep.md`` (a Markdown table: one row per T, one column per task's main metric)
and ``temperature_sweep.png`` (the same as curves) there, and prints the table.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from harness.errors import HarnessError
from harness_tasks.commute.tasks import CommuteTask

DEFAULT_TEMPERATURES = "0.25,0.5,0.75,1,1.25,1.5,2"
DEFAULT_TASKS = "commute_tc,commute_ic,commute_gtc,commute_gic"


def parse_temperatures(text: str) -> list[float]:
    """``"0.5,1,2"`` -> [0.5, 1.0, 2.0]; each value is checked by the tasks' ``temperature`` parameter (positive)."""
    param = CommuteTask.params["temperature"]
    values = [param.convert("temperature", part.strip(), "--temperatures") for part in text.split(",") if part.strip()]
    if not values or not all(math.isfinite(value) for value in values):
        raise HarnessError(f"--temperatures must be finite numbers separated by commas, got {text!r}")
    return values


def sweep_table(results: dict[float, dict[str, float | None]], tasks: list[str]) -> str:
    """Markdown: one row per temperature, one column per task."""
    lines = ["| T | " + " | ".join(tasks) + " |", "|---:|" + "---:|" * len(tasks)]
    for temperature, metrics in results.items():
        cells = ["n/a" if metrics.get(task) is None else f"{metrics[task]:.4f}" for task in tasks]
        lines.append(f"| {temperature:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sweep_plot(results: dict[float, dict[str, float | None]], tasks: list[str], path: Path) -> None:
    """The metrics against T, one curve per task, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    temperatures = list(results)
    figure, axes = plt.subplots(figsize=(6, 4))
    for task in tasks:
        values = [results[t].get(task) for t in temperatures]
        axes.plot(temperatures, [math.nan if v is None else v for v in values], marker="o", label=task)
    axes.set_xlabel("temperature T")
    axes.set_ylabel("score")
    axes.set_title("CoMMuTE metrics under temperature scaling")
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


class TemperatureSweep:
    """Run CoMMuTE tasks at several softmax temperatures; write a table and a plot."""

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """The options of ``harness run`` (the same definitions: seeds, resume, shard, ...), plus the temperatures."""
        from harness.run.options import add_run_arguments

        add_run_arguments(parser, tasks=DEFAULT_TASKS)
        parser.set_defaults(output="results/temperature")
        parser.add_argument(
            "--temperatures", default=DEFAULT_TEMPERATURES, help=f"comma-separated T (default {DEFAULT_TEMPERATURES})"
        )

    @staticmethod
    def run(args: argparse.Namespace) -> int:
        """Evaluate at every temperature (``--dry-run``: print each plan), then write and print the table."""
        from harness.run.options import run_config
        from harness.run.plan import count_outputs, format_plan
        from harness.run.runner import ShardDone, Skipped, evaluate, prepare, split_names

        temperatures = parse_temperatures(args.temperatures)
        tasks = split_names(args.tasks)
        config = run_config(args)
        if any(key.rpartition(".")[2] == "temperature" for key in config.task_args):
            raise HarnessError("give temperatures with --temperatures, not in --task-args")
        results: dict[float, dict[str, float | None]] = {}
        for temperature in temperatures:
            at = config.replace(task_args={**config.task_args, "temperature": temperature})
            if args.dry_run:
                plan = prepare(tasks, args.model, at.replace(output=None, resume=False, log_samples=False))
                count_outputs(plan)
                print(f"temperature {temperature:g}:\n{format_plan(plan)}")
                continue
            outcomes = evaluate(tasks, args.model, at)
            results[temperature] = {
                o.task: o.metrics[o.main_metric] for o in outcomes if not isinstance(o, (Skipped, ShardDone))
            }
        if args.dry_run:
            return 0
        if args.shard:
            print("this shard's model outputs are cached; run again without --shard for the table", file=sys.stderr)
            return 0
        folder = Path(args.output)
        table = sweep_table(results, tasks)
        (folder / "temperature_sweep.md").write_text(table + "\n", encoding="utf-8")
        sweep_plot(results, tasks, folder / "temperature_sweep.png")
        print(table)
        print(f"wrote {folder / 'temperature_sweep.md'} and {folder / 'temperature_sweep.png'}")
        return 0


COMMAND = TemperatureSweep()
