"""The ``leaderboard`` and ``compare`` subcommands: arguments here, heavy imports inside the handlers."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import warnings


def add_leaderboard_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``harness leaderboard``."""
    parser.add_argument("results", nargs="+", help="results.jsonl files, or folders searched for results.jsonl")
    parser.add_argument("-o", "--output", default="leaderboard", help="output folder (default ./leaderboard)")
    parser.add_argument("--no-plots", action="store_true", help="write everything but the plots")


def run_leaderboard(args: argparse.Namespace) -> int:
    """Merge the results and write the leaderboard folder."""
    from harness.ending import hold
    from harness.errors import HarnessWarning
    from harness.leaderboard.build import write_leaderboard

    command = shlex.join(
        ["harness", "leaderboard", *args.results, "-o", args.output] + (["--no-plots"] if args.no_plots else [])
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", HarnessWarning)
        built = write_leaderboard(args.results, args.output, command, plots=not args.no_plots)
    for problem in built.problems:
        print(f"harness: warning: skipped {problem}", file=sys.stderr)
    for message in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, HarnessWarning)):
        print(f"harness: warning: {message}", file=sys.stderr)  # once, though the page and README both ask
    for other in (w for w in caught if not issubclass(w.category, HarnessWarning)):
        warnings.showwarning(other.message, other.category, other.filename, other.lineno)
    board = built.board
    superseded = sum(r.superseded for r in board.results)
    print(
        f"merged {len(board.results)} results ({superseded} superseded) of {len(board.labels)} models into "
        f"{len(board.columns)} columns; {len(built.problems)} bad lines skipped"
    )
    for path in built.files:
        print(f"wrote {path}")
    replaced = built.replacement(args.output)
    if replaced:
        print(replaced)
    hold(built)  # freeing the board would only cost time
    return 0


def add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``harness compare``."""
    parser.add_argument("a", metavar="A", help="model A: its leaderboard label or its name")
    parser.add_argument("b", metavar="B", nargs="?", default=None, help="model B (omitted with --versus-task)")
    parser.add_argument("--task", required=True, help="the task both were run on, with --log-samples")
    parser.add_argument(
        "--versus-task",
        default=None,
        metavar="TASK",
        help="compare A's --task result with A's result on TASK over the same examples "
        "(two tasks that score the same examples: one model's decisions on both, paired by example)",
    )
    parser.add_argument(
        "--mcnemar",
        action="store_true",
        help="require McNemar's exact test of the paired 0/1 decisions (added by default whenever they allow it)",
    )
    parser.add_argument(
        "--results", nargs="+", default=["results"], help="results files or folders (default ./results)"
    )
    parser.add_argument(
        "--select",
        default=None,
        help="keep only results whose task arguments match, k=v,...; dataset=NAME (data= for a task with a "
        "'dataset' argument) names the data set by a folder of its source or its revision, items=N its size",
    )
    parser.add_argument(
        "--statistic",
        default=None,
        help="what to compute from the samples: mean:FIELD[,FIELD...], pearson:SCORE,GOLD or auc:SCORE,LABEL "
        "(default: the task's main metric)",
    )
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resampling (default 0)")
    parser.add_argument(
        "--confidence", type=float, default=0.95, help="confidence level of the interval (default 0.95)"
    )
    parser.add_argument("--json", action="store_true", help="print the comparison as JSON")
    parser.add_argument(
        "--items",
        type=int,
        default=None,
        metavar="N",
        help="also list the N items on which A and B disagree most (from their per-sample logs)",
    )


def run_compare(args: argparse.Namespace) -> int:
    """Find both results, align their samples, bootstrap, print."""
    from harness.errors import HarnessError
    from harness.leaderboard.compare import compare, format_comparison
    from harness.leaderboard.merge import merge
    from harness.params import parse_kv
    from harness.results.bootstrap import Statistic
    from harness.results.load import load_entries

    entries, problems = load_entries(args.results)
    for problem in problems:
        print(f"harness: warning: skipped {problem}", file=sys.stderr)
    statistic = Statistic.parse(args.statistic) if args.statistic else None
    board, select = merge(entries), parse_kv(args.select, "--select")
    comparison = compare(
        board,
        args.a,
        args.b,
        args.task,
        select=select,
        statistic=statistic,
        resamples=args.resamples,
        seed=args.seed,
        confidence=args.confidence,
        versus_task=args.versus_task,
        with_mcnemar=True if args.mcnemar else None,
    )
    found: dict[str, object] = {}
    text = ""
    if args.items is not None:
        from harness.leaderboard.items import compared_items

        if args.versus_task is not None:
            raise HarnessError("--items lists where two models disagree: give two models, not --versus-task")
        items, text = compared_items(board, args.a, args.b, args.task, select, args.items)
        found["items"] = [{"item": d.item, "a": d.a, "b": d.b, "difference": d.difference} for d in items]
    if args.json:
        print(json.dumps({**comparison.to_dict(), **found}, indent=2))
    else:
        print(format_comparison(comparison) + (f"\n{text}" if text else ""))
    return 0
