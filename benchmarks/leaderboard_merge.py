"""How long ``harness leaderboard`` takes on 100,000 generated result lines.

The lines are realistic records (environment, hardware, 25 per-seed values for the retrieval
tasks): 270 models x 37 task configurations (xlr, backretrieval, corr in two directions with 25
seeds; CoMMuTE TC/IC/GTC/GIC at seven temperatures; YiSi-2 STS and filtering; one more task),
each run 10 times, so 90% of the lines end up superseded. They are split over 8 files with two
corrupt lines, as if gathered from several machines. Each stage is timed in this process
(median of ``--repeats``; wall-clock and CPU time, since a shared machine inflates
the former), then the whole command once in a fresh process.

    python benchmarks/leaderboard_merge.py [--lines 100000] [--repeats 3] [--against DIR [--rounds 2]]

``--against DIR`` also runs the command from another source tree (``DIR`` on ``PYTHONPATH`` ahead of this
one, e.g. a previous commit: ``git archive COMMIT harness tasks models plugins | tar -x -C DIR``, then
``ln -s tasks DIR/harness_tasks; ln -s models DIR/harness_models``), alternating with this tree ``--rounds``
times, and prints each run's CPU seconds and their ratio: on a shared machine, runs close in time see
the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from harness.leaderboard.build import family_pages, ranked_pages
from harness.leaderboard.export import to_csv, to_json
from harness.leaderboard.kept import Kept
from harness.leaderboard.markdown import readme
from harness.leaderboard.merge import merge
from harness.leaderboard.plots import write_plots
from harness.leaderboard.sections import family_sections
from harness.leaderboard.tables import family_tables
from harness.results.load import load_entries
from harness.results.signature import Signature

RUNS = 10
FILES = 8
ROOT = Path(__file__).resolve().parents[1]  # this source tree


def configurations() -> list[tuple[str, str, dict[str, Any], int]]:
    """(task, main metric, task arguments, seeds): the 37 columns."""
    found = []
    for tgt in ("de", "fr"):
        for task, metric in (("xlr", "recall@k"), ("backretrieval", "recall@k"), ("corr", "spearman")):
            found.append((task, metric, {"dataset": "ikea", "src": "en", "tgt": tgt, "n": 1000, "k": 10}, 25))
    for temperature in (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0):
        for task, metric in (
            ("commute_tc", "tc"),
            ("commute_ic", "ic"),
            ("commute_gtc", "gtc"),
            ("commute_gic", "gic"),
        ):
            found.append(
                (task, metric, {"lang": "fr", "ties": "wrong", "prefix_removal": False, "temperature": temperature}, 1)
            )
    found += [
        ("yisi2_sts", "pearson", {"src": "en", "tgt": "de", "alpha": 0.5}, 1),
        ("yisi2_filter", "roc_auc", {"src": "en", "tgt": "de", "alpha": 0.5}, 1),
        ("bitext_mining", "accuracy", {"src": "en", "tgt": "fr", "k": 4}, 1),
    ]
    return found


def lines(count: int, rng: random.Random) -> Iterator[str]:
    """``count`` JSON lines: models x configurations x runs, in a shuffled order."""
    configs = configurations()
    models = max(1, count // (len(configs) * RUNS))
    plan = [(m, c, r) for m in range(models) for c in range(len(configs)) for r in range(RUNS)][:count]
    rng.shuffle(plan)
    for model_index, config_index, run in plan:
        task, metric, args, seeds = configs[config_index]
        values = [rng.random() for _ in range(seeds)]
        mean = sum(values) / seeds
        std = (sum((v - mean) ** 2 for v in values) / (seeds - 1)) ** 0.5 if seeds > 1 else 0.0
        dataset = {
            "loader": "ikea",
            "source": "/data/ikea",
            "revision": "sha256:0123456789abcdef",
            "split": "test",
            "size": 1000,
        }
        model = {
            "name": f"model-{model_index:03d}",
            "adapter": "hf-text",
            "source": f"org/model-{model_index:03d}",
            "revision": "a1b2c3d4e5f6",
            "args": {"pooling": "mean"},
            "dtype": "float32",
        }
        task_sig = Signature.build(task, 1, args, dataset, list(range(seeds)) if seeds > 1 else None)
        yield json.dumps(
            {
                "task": task,
                "task_version": 1,
                "task_args": args,
                "main_metric": metric,
                "metrics": {metric: mean, "extra": mean / 2},
                "metrics_std": {metric: std, "extra": std / 2},
                "per_seed": {metric: values, "extra": [v / 2 for v in values]},
                "seeds": list(range(seeds)),
                "model": model,
                "dataset": dataset,
                "run": {"limit": None, "batch_size": 32, "device": "cpu"},
                "signature": str(task_sig.with_model(model)),
                "task_signature": str(task_sig),
                "harness": {"version": "0.1.0", "git": "0123456789abcdef0123456789abcdef01234567"},
                "environment": {"python": "3.11.7", "torch": "2.13.0+cpu", "transformers": "5.23.0", "numpy": "2.4.6"},
                "hardware": {"device": "cpu", "machine": "x86_64", "cpu": "generic"},
                "started": f"2026-{1 + run:02d}-01T00:00:00+00:00",
                "wall_seconds": 1.5,
                "samples_file": None,
                "extra": {},
                "schema_version": 1,
            }
        )


def generate(folder: Path, count: int) -> list[Path]:
    """Write the lines over ``FILES`` results files (one folder each), plus two corrupt lines."""
    rng = random.Random(0)
    paths = [folder / f"machine{index}" / "results.jsonl" for index in range(FILES)]
    with ExitStack() as stack:
        handles = []
        for path in paths:
            path.parent.mkdir(parents=True)
            handles.append(stack.enter_context(path.open("w", encoding="utf-8")))
        for number, line in enumerate(lines(count, rng)):
            handles[number % FILES].write(line + "\n")
        handles[0].write("{not json\n")
        handles[1].write('{"task": "xlr"}\n')
    return paths


def cpu_seconds() -> float:
    """CPU seconds of this process and of its ended children (the plot workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(function: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """Median wall-clock and CPU seconds (the plot workers' included) over ``repeats`` calls, and the last result."""
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), cpu_seconds()
        result = function()
        walls.append(time.perf_counter() - wall)
        cpus.append(cpu_seconds() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def command(results: Path, output: Path, tree: str | None = None) -> tuple[float, float]:
    """Wall-clock and CPU seconds of ``harness leaderboard`` in a fresh process (from ``tree`` when given)."""
    environment = dict(os.environ)
    source = tree if tree is not None else str(ROOT)
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [source, environment.get("PYTHONPATH")]))
    wall, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(  # run from the results' folder: `python -m` puts the working folder first on the path
        [sys.executable, "-m", "harness", "leaderboard", str(results), "-o", str(output)],
        check=True,
        capture_output=True,
        env=environment,
        cwd=results.parent,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - wall, after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime


def compare(results: Path, output: Path, tree: str, rounds: int) -> None:
    """This tree's and ``tree``'s command, alternating: wall-clock and CPU seconds, the ratio of the CPU seconds."""
    print(
        "| round | this tree (wall s) | this tree (CPU s) | other tree (wall s) | other tree (CPU s) | CPU ratio "
        "| load average |\n|---|---:|---:|---:|---:|---:|---:|"
    )
    for round_ in range(1, rounds + 1):
        ours = command(results, output / f"ours{round_}")
        theirs = command(results, output / f"theirs{round_}", tree)
        print(
            f"| {round_} | {ours[0]:.2f} | {ours[1]:.2f} | {theirs[0]:.2f} | {theirs[1]:.2f} | {ours[1] / theirs[1]:.2f} "
            f"| {os.getloadavg()[0]:.1f} |"
        )


def main() -> None:
    """Generate, time each stage, time the command, print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--against", help="another source tree to time the command from, alternating with this one")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(f"load average at the start (1, 5, 15 min): {', '.join(f'{v:.1f}' for v in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        generate(root / "results", args.lines)
        size = sum(p.stat().st_size for p in (root / "results").rglob("results.jsonl"))
        rows: list[tuple[str, float, float]] = []

        def stage(name: str, function: Callable[[], Any]) -> Any:
            wall, cpu, result = timed(function, args.repeats)
            rows.append((name, wall, cpu))
            return result

        entries, problems = stage("read and validate", lambda: load_entries([str(root / "results")]))
        board = stage("merge (newest wins, columns, labels)", lambda: merge(entries))
        tables = stage("family tables", lambda: family_tables(board))
        sections = stage("family sections (meta-evaluation)", lambda: family_sections(board))
        stage("leaderboard.csv", lambda: to_csv(board))
        stage("leaderboard.json (all results)", lambda: to_json(board))
        plots = stage("plots", lambda: write_plots(board, root / "plots"))
        stage("README.md", lambda: readme(board, tables, plots, "harness leaderboard results", sections))
        site, *_ = stage(
            "index.html, model and item pages (the ranked tables)", lambda: ranked_pages(board, Kept.load(None))
        )
        stage("family pages", lambda: family_pages(board, tables, plots, sections, site))
        whole = command(root / "results", root / "out")
        superseded = sum(r.superseded for r in board.results)
        print(
            f"{len(entries)} valid lines ({size / 1e6:.0f} MB in {FILES} files, {len(problems)} corrupt lines reported), "
            f"{superseded} superseded, {len(board.labels)} models, {len(board.columns)} columns, {len(plots)} plots\n"
        )
        print("| stage | wall seconds | CPU seconds |\n|---|---:|---:|")
        for name, wall, cpu in rows:
            print(f"| {name} | {wall:.2f} | {cpu:.2f} |")
        print(f"| **total of the stages** | **{sum(r[1] for r in rows):.2f}** | **{sum(r[2] for r in rows):.2f}** |")
        print(f"| `harness leaderboard` end to end, fresh process | {whole[0]:.2f} | {whole[1]:.2f} |")
        load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
        print(f"\nload average at the end of the run (1, 5, 15 min): {load} on {os.cpu_count()} CPUs\n")
        if args.against:
            compare(root / "results", root / "compare", args.against, args.rounds)


if __name__ == "__main__":
    main()
