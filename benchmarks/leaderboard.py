"""Issue 34.7's three ratios: ``harness leaderboard`` of this tree against another tree (e.g. 11843f3), alternately
in one run, on (1) that tree's committed results from nothing, (2) the same after one new results line (a
rebuild over the board of (1)), and (3) 100,000 generated lines (``leaderboard_merge.generate``) from nothing.

    git worktree add /tmp/base 11843f3
    python benchmarks/leaderboard.py --against /tmp/base [--rounds 1]

Each command runs in a fresh process with its tree first on ``PYTHONPATH`` (``harness_tasks`` and
``harness_models`` are linked to the tree's ``tasks`` and ``models`` when it lacks them); the results are copies in
a temporary folder, and so is the cache folder (where a rebuild finds the keys of the pages it may keep). The new line of (2) is a rerun of one XLR result (its ``started`` one hour later): the
retrieval family's tables and plots change, the other families' do not. Wall and CPU seconds (the plot workers
included) of each run, and the ratio this / other of each, are printed as Markdown.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from leaderboard_merge import command, generate

ROOT = Path(__file__).resolve().parents[1]


def prepared(tree: Path) -> Path:
    """``tree``, with ``harness_tasks`` and ``harness_models`` importable from it."""
    for package, folder in (("harness_tasks", "tasks"), ("harness_models", "models")):
        if not (tree / package).exists():
            (tree / package).symlink_to(folder)
    return tree


def one_new_line(results: Path) -> None:
    """Append a rerun of the first XLR line under ``results`` (the same result, started one hour later)."""
    for path in sorted(results.rglob("results.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("task") == "xlr":
                started = datetime.fromisoformat(record["started"]) + timedelta(hours=1)
                record["started"] = started.isoformat()
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record) + "\n")
                return
    raise SystemExit(f"no xlr line under {results}")


def main() -> None:
    """Time the three cases for both trees, alternating, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="the other source tree (a git worktree of its commit)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args()
    trees = {"this tree": ROOT, "other tree": prepared(Path(args.against).resolve())}
    print(f"load average at the start: {', '.join(f'{v:.1f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs")
    print(
        "\n| case | round | this tree wall s | this tree CPU s | other wall s | other CPU s | wall ratio | CPU ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        os.environ["HARNESS_CACHE_DIR"] = str(root / "cache")  # what a rebuild keeps: this run's builds only
        generate(root / "many" / "results", args.lines)
        for round_ in range(1, args.rounds + 1):
            times: dict[str, dict[str, tuple[float, float]]] = {}
            for name, tree in trees.items():
                work = root / f"{name.split()[0]}{round_}"
                shutil.copytree(trees["other tree"] / "leaderboard" / "results", work / "results")
                found = times.setdefault(name, {})
                source = str(tree)
                found["committed results, from nothing"] = command(work / "results", work / "board", source)
                one_new_line(work / "results")
                found["after one new results line"] = command(work / "results", work / "board", source)
                found[f"{args.lines:,} lines, from nothing"] = command(root / "many" / "results", work / "many", source)
            for case in times["this tree"]:
                (ours_wall, ours_cpu), (theirs_wall, theirs_cpu) = times["this tree"][case], times["other tree"][case]
                print(
                    f"| {case} | {round_} | {ours_wall:.2f} | {ours_cpu:.2f} | {theirs_wall:.2f} | {theirs_cpu:.2f} "
                    f"| {ours_wall / theirs_wall:.3f} | {ours_cpu / theirs_cpu:.3f} |"
                )
    print(f"\nload average at the end: {', '.join(f'{v:.1f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
