"""Benchmark (issue 39 item 4): ``harness suite`` against the real-runs script it replaced, on one reduced grid.

    .venv/bin/python benchmarks/suite.py [--base 11843f3] [--rounds 1] [--seeds 5] [--data ../shared/data] [--work DIR]
        [--full]

The script side is ``benchmarks/offline_models_real_runs.py`` of ``--base`` (``git archive`` of the commit under
``--work``, imported through ``PYTHONPATH`` as ``benchmarks/quick_start.py`` does) with its grid cut to the one
below and its ``harness meta`` steps left out: one ``harness run`` process per model, task group and direction.
The suite side is this tree's ``harness suite`` on a suite file of the same grid: one process, each model loaded
once. Both start from an empty cache (``HARNESS_CACHE_DIR`` of their own, emptied before each run) with the models
already converted (each side's ``HARNESS_MODELS_DIR``, filled first by an untimed ``harness run --limit 40`` per
model; a timed run that still converts one is flagged), the sides alternating, round after round. Wall and CPU
time (user + system of the process and its children, ``os.wait4``) and peak RSS are measured; the metrics of both
sides' results lines are compared configuration by configuration. ``--full`` runs the base script's whole grid
against ``leaderboard/suite.yaml``, which has grown since 11843f3 (xling-shapes, the CoMMuTE analyses): not the
same cells, so only the reduced grid gives a like-for-like ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from quick_start import unpack_base

REPO = Path(__file__).resolve().parent.parent
PYTHON = REPO / ".venv" / "bin" / "python"
HARNESS = REPO / ".venv" / "bin" / "harness"
IKEA_MODELS = [("e5-small", None), ("e5-small-trunc48", None), ("minilm", None), ("e5-small-hf", "pooling=cls")]
IKEA_DIRECTIONS = [("en", "de"), ("de", "en")]
COMMUTE_LANGS = ("fr",)
YISI_TARGETS = ("de",)
CONVERTING = ("converting", "dequantising", "exporting")

# the base tree's script with the grid above and no `harness meta`, run by this venv's Python (its `harness` then
# imports the base tree through PYTHONPATH)
SCRIPT_DRIVER = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("real_runs", sys.argv[1])
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)
grid = json.loads(sys.argv[2])
if grid:
    script.IKEA_MODELS = [tuple(m) for m in grid["ikea"]]
    script.IKEA_DIRECTIONS = [tuple(d) for d in grid["directions"]]
    script.COMMUTE_LANGS, script.YISI_TARGETS = tuple(grid["commute"]), tuple(grid["yisi"])
run = script.run
script.run = lambda command, log: None if command[1] == "meta" else run(command, log)
sys.argv = ["offline_models_real_runs.py", *sys.argv[3:]]
raise SystemExit(script.main())
"""


def suite_file(path: Path, data: Path, work: Path, results: Path, seeds: int) -> Path:
    """The suite of the reduced grid, as leaderboard/suite.yaml writes its groups."""
    models = [m if a is None else {"name": m, "args": dict([a.split("=")])} for m, a in IKEA_MODELS]
    text = {
        "suite": 1,
        "variables": {"data": str(data), "work": str(work)},
        "results": str(results),
        "prepare": [
            {
                "creates": "${work}/commute-stand-in-images",
                "command": [
                    "commute-stand-in-images",
                    "--data-dir",
                    "${data}/commute",
                    "--output",
                    "${work}/commute-stand-in-images",
                ],
            }
        ],
        "groups": [
            {
                "name": "ikea",
                "tasks": ["xlr", "backretrieval", "corr"],
                "models": models,
                "data_dir": "${data}/ikea",
                "task_args": [{"src": s, "tgt": t} for s, t in IKEA_DIRECTIONS],
                "options": {"seeds": seeds},
                "logs": "compact",
                "logs_without": ["corr"],
            },
            {
                "name": "commute",
                "tasks": ["commute_tc", "commute_gtc", "commute_ic", "commute_gic"],
                "models": ["gemma-270m"],
                "data_dir": "${data}/commute",
                "task_args": {"lang": list(COMMUTE_LANGS)},
                "options": {"images": "${work}/commute-stand-in-images"},
                "logs": "full",
            },
            {
                "name": "yisi",
                "tasks": ["yisi2_filter", "bert_sum_filter"],
                "models": [{"name": "e5-small-hf", "args": {"layer": 9}}],
                "data_dir": "${data}/multi30k",
                "task_args": {"src": ["en"], "tgt": list(YISI_TARGETS)},
                "logs": "compact",
            },
        ],
    }
    path.write_text(json.dumps(text, indent=1), encoding="utf-8")  # JSON is YAML
    return path


def warm_commands(data: Path, out: Path) -> list[list[str]]:
    """``harness run`` on a few items with every model of the grid: converts what a side's models folder lacks."""
    runs = [(["xlr"], m, a, "ikea", "src=en,tgt=de") for m, a in IKEA_MODELS]
    runs += [(["commute_tc"], "gemma-270m", None, "commute", "lang=fr")]
    runs += [(["yisi2_filter"], "e5-small-hf", "layer=9", "multi30k", "src=en,tgt=de")]
    return [
        [str(HARNESS), "run", "--tasks", ",".join(tasks), "--model", model, "--data-dir", str(data / folder)]
        + ["--task-args", task_args, "--limit", "40", "--output", str(out), "--no-cache"]
        + (["--model-args", args] if args else [])
        for tasks, model, args, folder, task_args in runs
    ]


def measure(command: list[str], env: dict[str, str], log: Path) -> dict[str, float]:
    """Run ``command`` (output to ``log``); wall, CPU (process and children), peak RSS, the load before."""
    load = os.getloadavg()[0]
    start = time.perf_counter()
    with log.open("w", encoding="utf-8") as handle:
        child = subprocess.Popen(command, env=env, stdout=handle, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(command)}; see {log}")
    converted = any(word in line for line in log.read_text(encoding="utf-8").splitlines() for word in CONVERTING)
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "rss": usage.ru_maxrss / 1024,
        "load": load,
        "converted": float(converted),
    }


def metrics(folder: Path) -> dict[tuple[str, ...], dict]:
    """Every results line under ``folder`` by (task, model, model arguments, task arguments): its metrics."""
    found = {}
    for path in folder.rglob("results.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            key = (
                record["task"],
                record["model"]["name"],
                json.dumps(record["model"].get("args"), sort_keys=True),
                json.dumps(record["task_args"], sort_keys=True),
            )
            found[key] = record["metrics"]
    return found


def script_command(args: argparse.Namespace, tree: Path, data: Path, out: Path) -> list[str]:
    """The base tree's script on the grid (all of it with ``--full``), without meta, writing into ``out``."""
    grid = {} if args.full else {"ikea": IKEA_MODELS, "directions": IKEA_DIRECTIONS}
    grid.update({} if args.full else {"commute": list(COMMUTE_LANGS), "yisi": list(YISI_TARGETS)})
    script = tree / "benchmarks" / "offline_models_real_runs.py"
    options = ["--data", str(data), "--output", str(out), "--seeds", str(args.seeds), "--leaderboard", ""]
    return [str(PYTHON), "-c", SCRIPT_DRIVER, str(script), json.dumps(grid), *options]


def suite_command(args: argparse.Namespace, data: Path, out: Path) -> list[str]:
    """``harness suite`` on the grid (``--full``: a copy of leaderboard/suite.yaml whose results go to ``out``)."""
    path = out.parent / "suite.yaml"
    if args.full:
        text = (REPO / "leaderboard" / "suite.yaml").read_text(encoding="utf-8")
        path.write_text(text.replace("results: results", f"results: {out}").replace("board: .", ""), encoding="utf-8")
    else:
        suite_file(path, data, out / "prepared", out, args.seeds)
    return [
        str(HARNESS),
        "suite",
        str(path),
        "--no-board",
        "--set",
        f"data={data}",
        "--set",
        f"work={out / 'prepared'}",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--base", default="11843f3", help="the commit whose benchmarks/offline_models_real_runs.py runs"
    )
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=5, help="IKEA seeds (the committed board: 25)")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--work", default=str(REPO.parent / "suite-benchmark"))
    parser.add_argument("--full", action="store_true", help="the whole grid of leaderboard/suite.yaml")
    args = parser.parse_args()
    work, data = Path(args.work).resolve(), Path(args.data).resolve()
    work.mkdir(parents=True, exist_ok=True)
    links = unpack_base(args.base, work)
    envs = [{**os.environ, "HARNESS_MODELS_DIR": str(work / f"models-{side}")} for side in (0, 1)]
    envs[0]["PYTHONPATH"] = str(links)
    envs[1].pop("PYTHONPATH", None)
    for index, env in enumerate(envs):  # untimed: each side converts its models once, into its own folder
        for number, command in enumerate(warm_commands(data, work / "warm")):
            measure(command, env, work / f"warm-{index}-{number}.txt")
    names = (f"script ({args.base})", "harness suite")
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    results: dict[str, dict[tuple[str, ...], dict]] = {}
    for round_ in range(args.rounds):
        for index, name in enumerate(names):
            side = work / f"side-{index}"
            shutil.rmtree(side, ignore_errors=True)
            (side / "cache").mkdir(parents=True)
            out = side / "out"
            env = {**envs[index], "HARNESS_CACHE_DIR": str(side / "cache")}
            if index == 0:
                command = script_command(args, work / "base-tree", data, out)
            else:
                command = suite_command(args, data, out)
            runs[name].append(measure(command, env, side / f"log-{round_}.txt"))
            results[name] = metrics(out)
            print(f"round {round_ + 1}, {name}: {runs[name][-1]}", file=sys.stderr, flush=True)
    print(report(runs, results))
    return 0


def report(runs: dict[str, list[dict[str, float]]], results: dict[str, dict[tuple[str, ...], dict]]) -> str:
    """A Markdown table (medians over rounds), the ratio suite/script, and whether the metrics agree."""
    lines = [
        "| side | rounds | wall, median (range) | CPU, median | peak RSS | load before | converted a model |",
        "|---|---:|---:|---:|---:|---|---|",
    ]
    medians = []
    for name, group in runs.items():
        walls = [r["wall"] for r in group]
        medians.append((statistics.median(walls), statistics.median(r["cpu"] for r in group)))
        loads = ", ".join(f"{r['load']:.1f}" for r in group)
        lines.append(
            f"| {name} | {len(group)} | {medians[-1][0]:.1f} s ({min(walls):.1f}-{max(walls):.1f}) "
            f"| {medians[-1][1]:.1f} s | {max(r['rss'] for r in group):.0f} MiB | {loads} "
            f"| {'yes' if any(r['converted'] for r in group) else 'no'} |"
        )
    (script_wall, script_cpu), (suite_wall, suite_cpu) = medians
    first, second = results.values()
    differing = sorted(key for key in first.keys() | second.keys() if first.get(key) != second.get(key))
    lines += [
        "",
        f"suite / script: wall {suite_wall / script_wall:.2f}x, CPU {suite_cpu / script_cpu:.2f}x",
        f"results lines: script {len(first)}, suite {len(second)}; metrics differ or are missing on {len(differing)}"
        + "".join(f"\n- {' | '.join(key)}" for key in differing),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
