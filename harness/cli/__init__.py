"""The ``harness`` command line."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import os
import signal
import sys
import threading
import traceback
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from harness import ending
from harness.errors import HarnessError, HarnessWarning, UnknownNameError
from harness.plugins.registry import PLURALS, get_registry
from harness.run.distributed import joined_process_group
from harness.run.options import add_run_arguments, run_config

if TYPE_CHECKING:
    from harness.run.config import RunConfig

BUILTIN_COMMANDS = ("run", "list", "describe", "plugins", "leaderboard", "compare", "suite")


def _command_run(args: argparse.Namespace) -> int:
    from harness.cli.summary import print_summary
    from harness.run.distributed import shutdown
    from harness.run.runner import ShardDone, Skipped, evaluate

    config = run_config(args)
    try:
        if args.dry_run:
            return _dry_run(args.tasks, args.model, config)
        with warnings.catch_warnings():  # the summary prints them, once
            warnings.simplefilter("ignore", HarnessWarning)
            outcomes = evaluate(args.tasks, args.model, config)
    finally:
        shutdown()
    for outcome in outcomes:
        if isinstance(outcome, Skipped):
            print(f"skipped {outcome.task}: already in the results ({outcome.signature})", file=sys.stderr)
        elif isinstance(outcome, ShardDone) and args.shard:
            print(
                f"shard {outcome.shard}: {outcome.task}: this shard's model outputs are cached "
                f"({outcome.missing} belong to other shards); run again without --shard to write the results",
                file=sys.stderr,
            )
    print_summary([o for o in outcomes if not isinstance(o, (Skipped, ShardDone))], args.output)
    return 0


def _dry_run(tasks: str, model: str, config: RunConfig) -> int:
    """Print the plan of a run (``--dry-run``): nothing is computed or written."""
    from harness.run.plan import count_outputs, format_plan
    from harness.run.runner import prepare

    plan = prepare(tasks, model, config.replace(output=None, resume=False, log_samples=False))
    count_outputs(plan)
    print(format_plan(plan))
    return 0


def _command_list(args: argparse.Namespace) -> int:
    registry = get_registry()
    kind = next((k for k, plural in PLURALS.items() if args.kind in (k, plural)), None)
    if kind is None:
        raise UnknownNameError(
            "listing", args.kind, list(PLURALS.values()), listing=f"try {', '.join(PLURALS.values())}"
        )
    if args.include_path:
        from harness.run.presets import include_presets

        include_presets(registry, args.include_path)
    from harness.cli.describe import model_rows, task_rows
    from harness.cli.models import filter_models, group_zoos

    if (args.family or args.lang) and kind != "task":
        raise HarnessError("--family and --lang filter tasks: use `harness list tasks --family F --lang L`")
    if (args.kind_of or args.capability or args.offline or args.all) and kind != "model":
        raise HarnessError("--kind, --capability, --offline and --all are for `harness list models`")
    if kind == "task":
        rows = task_rows(registry, args.family, args.lang, details=args.json)
    elif kind == "model":
        rows = filter_models(
            model_rows(registry), args.kind_of or ("offline" if args.offline else None), args.capability
        )
        if not args.json and not args.all:
            rows = group_zoos(rows)
    else:
        rows = [
            {"name": n, "description": e.description, "plugin": e.plugin}
            for n, e in sorted(registry.entries[kind].items())
        ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max((len(row["name"]) for row in rows), default=0)
    for row in rows:
        mark = f"[{row['availability']}] " if "availability" in row else ""
        can = f" ({', '.join(row['capabilities'])})" if row.get("capabilities") else ""
        print(f"{row['name']:<{width}}  {mark}{row['description']}{can}")
    if kind == "model":
        print(
            "\n[offline]: weights ship in a Python package or none are needed; [hub]: downloads from the Hugging Face Hub "
            "on first use; [source]: give a Hub id or folder as --model",
            file=sys.stderr,
        )
    return 0


def _command_describe(args: argparse.Namespace) -> int:
    from harness.cli.describe import describe, format_description

    registry = get_registry()
    if args.include_path:
        from harness.run.presets import include_presets

        include_presets(registry, args.include_path)
    info = describe(registry, args.name)
    print(json.dumps(info, indent=2, default=str) if args.json else format_description(info))
    return 0


def _command_plugins(args: argparse.Namespace) -> int:
    registry = get_registry()
    rows = []
    for info in sorted(registry.plugins.values(), key=lambda p: p.name):
        row: dict[str, Any] = {"name": info.name, "package": info.package, "version": info.version}
        row.update({PLURALS[kind]: sorted(names) for kind, names in info.registered.items()})
        if info.error:
            row["error"] = info.error
        rows.append(row)
    print(json.dumps(rows, indent=2))
    return 0


def build_parser(plugin_command: tuple[str, Any] | None = None) -> argparse.ArgumentParser:
    """The argument parser; a plugin command's own arguments are added only when it is invoked."""
    parser = argparse.ArgumentParser(prog="harness", description="Cross-lingual and multimodal evaluation harness.")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    run = sub.add_parser("run", help="evaluate a model on tasks")
    add_run_arguments(run)
    run.set_defaults(handler=_command_run)
    listing = sub.add_parser("list", help="list tasks, models, datasets, commands or families")
    listing.add_argument(
        "kind", nargs="?", default="tasks", help="tasks (default), models, datasets, commands or families"
    )
    listing.add_argument(
        "--family", default=None, help="only tasks of this family (a leaderboard family or a preset's family)"
    )
    listing.add_argument(
        "--lang",
        default=None,
        help="only tasks for this language code (a preset's, or any: tasks that take it as argument)",
    )
    listing.add_argument(
        "--json", action="store_true", help="JSON rows instead of text (tasks: with requirements and metrics)"
    )
    listing.add_argument("--include-path", default=None, metavar="DIR", help="also list the YAML task presets of DIR")
    from harness.cli.models import add_model_filters  # argparse only

    add_model_filters(listing)
    listing.set_defaults(handler=_command_list)
    describing = sub.add_parser(
        "describe", help="parameters, data set columns, capabilities and needs of a task, model or dataset"
    )
    describing.add_argument("name", help="a task, model or dataset name")
    describing.add_argument("--json", action="store_true", help="JSON instead of text")
    describing.add_argument(
        "--include-path", default=None, metavar="DIR", help="also know the YAML task presets of DIR"
    )
    describing.set_defaults(handler=_command_describe)
    sub.add_parser("plugins", help="installed plugins as JSON").set_defaults(handler=_command_plugins)
    from harness.leaderboard import commands as board  # argparse only; the handlers import the rest

    leaderboard = sub.add_parser(
        "leaderboard",
        help="merge results into Markdown, CSV, JSON, static HTML pages (ranked tables, families, models, items) and plots",
        description="A rebuild into the same folder keeps the plots and pages whose inputs did not change "
        "(docs/leaderboard.md).",
    )
    board.add_leaderboard_arguments(leaderboard)
    leaderboard.set_defaults(handler=board.run_leaderboard)
    compare = sub.add_parser("compare", help="paired bootstrap of two models on a task, from their per-sample logs")
    board.add_compare_arguments(compare)
    compare.set_defaults(handler=board.run_compare)
    from harness.suite import command as suite  # argparse only, as for the leaderboard

    suite_parser = sub.add_parser(
        "suite", help="run a suite file (models x tasks x arguments) with resume and shards, then build the board"
    )
    suite.add_suite_arguments(suite_parser)
    suite_parser.set_defaults(handler=suite.run_suite_command)
    if plugin_command is not None:
        name, command = plugin_command
        command_parser = sub.add_parser(name, help=getattr(command, "__doc__", None))
        command.add_arguments(command_parser)
        command_parser.set_defaults(handler=command.run)
    else:
        for registration in get_registry().entries["command"].values():
            if registration.name not in BUILTIN_COMMANDS:
                sub.add_parser(registration.name, help=registration.description, add_help=False)
    return parser


def _version() -> str:
    from harness.results.provenance import harness_version

    return f"xling-harness {harness_version()}"


def _plugin_command(argv: Sequence[str]) -> tuple[str, Any] | None:
    positional = [a for a in argv if not a.startswith("-")]
    if not positional or positional[0] in BUILTIN_COMMANDS:
        return None
    registry = get_registry()
    if positional[0] not in registry.entries["command"]:
        return None
    return positional[0], registry.load("command", positional[0])


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is so that it unwinds (and cleans up) as Ctrl-C does."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated


def _install_sigterm() -> Any:
    """Make SIGTERM unwind like Ctrl-C; returns the previous handler (None when not the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _on_sigterm)


def _exit_now_if_abandoned(code: int) -> None:
    """End the process at once when a signal left a worker computing (``harness.interrupt``): a normal exit would
    wait for the thread pools it started. Everything finished is already written; streams are flushed first."""
    from harness.interrupt import end_abandoned_work

    if end_abandoned_work():
        _end_now(code)


def _end_now(code: int, exit_handlers: bool = False) -> None:
    """End the process with ``code`` without interpreter shutdown, the standard streams flushed first (and, with
    ``exit_handlers``, the ``atexit`` handlers run before)."""
    if exit_handlers:
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _silence_stdout() -> None:
    """After a closed pipe (``harness plugins | head -1``): later writes and the exit flush go nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no real file descriptor (a test's captured stdout)
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``harness`` command; returns the exit code."""
    from_command_line = argv is None  # the process is ours (the ``harness`` script, ``python -m harness``)
    with ending.owning(from_command_line):
        code = _main(list(sys.argv[1:] if argv is None else argv), from_command_line)
        if from_command_line and joined_process_group():  # a torchrun rank: its results are written
            _end_now(code)
        if ending.holding():  # a command's large result: not freed, the process ends (``harness.ending``)
            _end_now(code, exit_handlers=True)
    return code


def _main(argv: list[str], from_command_line: bool) -> int:
    """``main``'s work: the command's exit code, its errors said in one line."""
    debug = "--debug" in argv
    previous = _install_sigterm()
    try:
        parser = build_parser(_plugin_command(argv))
        args = parser.parse_args(argv)
        if not getattr(args, "handler", None):
            parser.print_help()
            return 2
        code = int(args.handler(args) or 0)
        sys.stdout.flush()  # a closed pipe is met here, not in the interpreter's exit flush
        return code
    except BrokenPipeError:  # the reader of our output has gone (head, less): end quietly, as Unix tools do
        _silence_stdout()
        return 0
    except HarnessError as exc:
        if debug:
            traceback.print_exc()
        print(f"harness: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        what = "interrupted by SIGTERM" if isinstance(exc, Terminated) else "interrupted"
        print(f"harness: {what}; finished results and cache entries are kept", file=sys.stderr)
        code = 143 if isinstance(exc, Terminated) else 130
        if from_command_line:
            _exit_now_if_abandoned(code)
        return code
    except Exception as exc:  # an unexpected failure: one line unless --debug
        if debug:
            traceback.print_exc()
        print(
            f"harness: internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
