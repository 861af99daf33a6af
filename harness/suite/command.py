"""The ``suite`` subcommand: arguments here, the work (and its imports) inside the handler."""

from __future__ import annotations

import argparse
import sys


def add_suite_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``harness suite``."""
    parser.add_argument("suite", metavar="SUITE.yaml", help="the suite file (docs/leaderboard.md, 'The suite file')")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a variable of the suite file (repeatable), e.g. --set data=/data",
    )
    parser.add_argument(
        "--shard",
        default=None,
        metavar="I/N",
        help="run only block I of N of the cells (0 <= I < N, for job arrays); the board is then not built",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list the prepare steps, the cells and the board; run nothing"
    )
    board = parser.add_mutually_exclusive_group()
    board.add_argument("--no-board", action="store_true", help="run the cells, do not build the board")
    board.add_argument("--board-only", action="store_true", help="build the board from the results; run no cell")


def run_suite_command(args: argparse.Namespace) -> int:
    """Read the suite file, then dry-run it or run it."""
    from harness.errors import HarnessError
    from harness.run.distributed import parse_shard
    from harness.suite.run import dry_run, run_suite
    from harness.suite.spec import read_suite

    overrides = {}
    for item in args.set:
        name, equals, value = item.partition("=")
        if not equals or not name.strip():
            raise HarnessError(f"--set takes NAME=VALUE, got {item!r}")
        overrides[name.strip()] = value
    if args.shard:
        parse_shard(args.shard)
    suite = read_suite(args.suite, overrides)
    if args.dry_run:
        return dry_run(suite, args.shard, sys.stdout)
    done = run_suite(suite, shard=args.shard, board=not args.no_board, board_only=args.board_only)
    if not args.board_only:
        print(f"suite: {done.cells} cells: {done.ran} run, {done.skipped} already in the results", file=sys.stderr)
    return 0
