"""``harness xling-shapes``: write the benchmark for any size and seed as a ``save_to_disk`` folder.

The retrieval tasks generate the default (1000 items, seed 0) themselves; another size or seed
is evaluated from such a folder with ``--task-args dataset=image-text --data-dir FOLDER``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.errors import HarnessError
from harness_tasks.default_benchmark.benchmark import dataset, revision
from harness_tasks.default_benchmark.loader import DEFAULT_SIZE


class ExportCommand:
    """Generate the benchmark and save it with ``datasets.Dataset.save_to_disk``."""

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """The command's arguments."""
        parser.add_argument("output", help="folder to write (must not exist yet)")
        parser.add_argument("--size", type=int, default=DEFAULT_SIZE, help=f"number of items (default {DEFAULT_SIZE})")
        parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")

    def run(self, args: argparse.Namespace) -> int:
        """Generate, save, and print how to evaluate the folder."""
        folder = Path(args.output)
        if folder.exists():
            raise HarnessError(f"{str(folder)!r} already exists: give a new folder")
        dataset(args.size, args.seed).save_to_disk(str(folder))
        print(f"wrote {args.size} items (seed {args.seed}, revision {revision(args.size, args.seed)}) to {folder}")
        print(f"evaluate: harness run --tasks xlr,backretrieval,corr --model NAME --data-dir {folder} "
              "--task-args dataset=image-text,src=en,tgt=de")
        return 0


COMMAND = ExportCommand()
