"""Benchmark (issue 28.3): the README's quick start from a cold cache, then the same command again, on this tree
and on a base commit, alternating. With ``--examples`` (issue 36): every example of the README's examples block,
as written, twice in order: first with nothing converted nor cached (a new user's first run), then with the
converted models kept and the cache emptied (each example's own work); wall, CPU and peak memory of each.

    .venv/bin/python benchmarks/quick_start.py [--base 921b164] [--cold 1] [--warm 5] [--work DIR] [--profile]
    .venv/bin/python benchmarks/quick_start.py --examples [--work DIR]

Each side runs in folders of its own (converted models, cache, output), emptied before each cold run, so a cold
run dequantises e5-small, exports both models to ONNX and encodes everything, and a warm run (the same command
again) loads no weights. The base side is ``git archive`` of ``--base`` unpacked under ``--work``, imported first
through ``PYTHONPATH`` (links ``harness``, ``harness_models`` -> models, ``harness_tasks`` -> tasks) with this
venv's packages. CPU time is user + system of the child (``os.wait4``). Prints a Markdown table, the load average
seen before each run, whether every run printed the same numbers, the timeline of this tree's last cold run
(each stderr line with its time), and with ``--profile`` the top of a cProfile of this tree's warm run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PYTHON = REPO / ".venv" / "bin" / "python"
HARNESS = REPO / ".venv" / "bin" / "harness"
ARGS = ["run", "--tasks", "xlr,backretrieval,corr", "--model", "e5-small-hf", "--image-model", "efficientnet-lite0"]
PACKAGES = {"harness": "harness", "harness_models": "models", "harness_tasks": "tasks"}
TASKS = ("xlr\t", "backretrieval\t", "corr\t")


@dataclass
class Run:
    """One run of the command: times, peak memory, the numbers it printed, its stderr lines with their times."""

    side: str
    state: str
    wall: float
    cpu: float
    system: float
    minor_faults: int
    peak_mib: float
    load: float
    numbers: list[str]
    timeline: list[tuple[float, str]] = field(default_factory=list)

    @property
    def computed(self) -> bool:
        """Whether it computed model outputs (a warm run does when a model's code identity changed since)."""
        return any(
            ": encoding " in line or line.startswith(("harness: exporting", "harness: dequantising"))
            for _, line in self.timeline
        )


class Side:
    """One tree: where it is imported from and its own models, cache and output folders."""

    def __init__(self, name: str, work: Path, pythonpath: Path | None):
        self.name, self.folder, self.pythonpath = name, work / name, pythonpath

    def env(self) -> dict[str, str]:
        env = dict(
            os.environ, HARNESS_MODELS_DIR=str(self.folder / "models"), HARNESS_CACHE_DIR=str(self.folder / "cache")
        )
        env.pop("PYTHONPATH", None)
        if self.pythonpath is not None:
            env["PYTHONPATH"] = str(self.pythonpath)
        return env

    def clear(self) -> None:
        for sub in ("models", "cache", "out"):
            shutil.rmtree(self.folder / sub, ignore_errors=True)

    def run(self, state: str, command: list[str] | None = None) -> Run:
        """Run the quick start (or ``command``) once and measure it."""
        shutil.rmtree(self.folder / "out", ignore_errors=True)
        command = command or [str(HARNESS), *ARGS, "--output", str(self.folder / "out")]
        load = os.getloadavg()[0]
        start = time.perf_counter()
        child = subprocess.Popen(command, env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        timeline: list[tuple[float, str]] = []
        stdout: list[str] = []
        readers = [
            threading.Thread(target=_stamp, args=(child.stderr, timeline, start)),
            threading.Thread(target=lambda: stdout.extend(child.stdout)),  # type: ignore[arg-type]
        ]
        for reader in readers:
            reader.start()
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        for reader in readers:
            reader.join()
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            tail = "\n".join(line for _, line in timeline[-15:])
            raise SystemExit(f"{self.name} {state} run failed ({child.returncode}):\n{tail}")
        numbers = [line.rsplit("\t", 1)[0] for line in stdout if line.startswith(TASKS)]
        cpu = usage.ru_utime + usage.ru_stime
        return Run(
            self.name,
            state,
            wall,
            cpu,
            usage.ru_stime,
            usage.ru_minflt,
            usage.ru_maxrss / 1024,
            load,
            numbers,
            timeline,
        )


def _stamp(stream: object, timeline: list[tuple[float, str]], start: float) -> None:
    for line in stream:  # type: ignore[attr-defined]
        timeline.append((time.perf_counter() - start, line.rstrip("\n")))


def unpack_base(commit: str, work: Path) -> Path:
    """``git archive`` of ``commit`` under ``work/base-tree``, and a folder of links that imports it."""
    tree, links = work / "base-tree", work / "base-path"
    shutil.rmtree(tree, ignore_errors=True)
    shutil.rmtree(links, ignore_errors=True)
    tree.mkdir(parents=True)
    links.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    for package, folder in PACKAGES.items():
        (links / package).symlink_to(tree / folder)
    return links


def table(runs: list[Run]) -> str:
    """Markdown: per side and state, median wall and CPU time, their range, the median system time and minor page
    faults (memory the kernel hands out afresh), peak RSS and the load seen."""
    lines = [
        "| tree | state | runs | wall, median (range) | CPU user + sys, median (range) | sys | minor faults | peak RSS "
        "| load (1 min) before |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    keys = list(dict.fromkeys((run.side, run.state) for run in runs))
    for side, state in keys:
        group = [run for run in runs if (run.side, run.state) == (side, state)]
        walls, cpus = [run.wall for run in group], [run.cpu for run in group]
        lines.append(
            f"| {side} | {state} | {len(group)} | {statistics.median(walls):.2f} s ({min(walls):.2f}-{max(walls):.2f}) "
            f"| {statistics.median(cpus):.2f} s ({min(cpus):.2f}-{max(cpus):.2f}) "
            f"| {statistics.median(run.system for run in group):.2f} s "
            f"| {statistics.median(run.minor_faults for run in group) / 1e6:.2f} M "
            f"| {max(run.peak_mib for run in group) / 1024:.2f} GiB "
            f"| {', '.join(f'{run.load:.1f}' for run in group)} |"
        )
    return "\n".join(lines)


def profile(side: Side, top: int) -> str:
    """The top of a cProfile (cumulative time) of one warm run of ``side``."""
    stats = side.folder / "warm.prof"
    side.run(
        "profiled",
        [str(PYTHON), "-m", "cProfile", "-o", str(stats), str(HARNESS), *ARGS, "--output", str(side.folder / "out")],
    )
    import io
    import pstats

    text = io.StringIO()
    pstats.Stats(str(stats), stream=text).sort_stats("cumulative").print_stats(top)
    body = text.getvalue()
    return body[body.index("   ncalls") :] if "   ncalls" in body else body


def readme_examples() -> list[str]:
    """The README's commands as written: its quick start (``Run a real evaluation``), then its examples block
    (``Examples that run here``)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    found = []
    for heading in ("Run a real evaluation", "Examples that run here"):
        block = readme.split(heading, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
        found += [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    return found


def examples(work: Path) -> int:
    """Every README example as written, from a folder laid out as the repository is (``.venv`` and
    ``../shared/data`` linked), in order: first run, then again with the models converted and the cache empty."""
    folder = work / "examples"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "repository").mkdir(parents=True)
    (folder / "shared").mkdir()
    (folder / "repository" / ".venv").symlink_to(REPO / ".venv")
    (folder / "shared" / "data").symlink_to((REPO.parent / "shared" / "data").resolve())
    side = Side("examples", work, None)
    print(f"load average at the start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)
    rows = []
    for state in ("first run (converts)", "models converted, cache empty"):
        shutil.rmtree(side.folder / "cache", ignore_errors=True)
        shutil.rmtree(folder / "repository" / "results", ignore_errors=True)
        for command in readme_examples():
            run = side.run(state, ["bash", "-c", f"cd {folder / 'repository'} && {command}"])
            rows.append((command, run))
            print(f"{state}: {run.wall:.1f} s wall, {run.cpu:.1f} s CPU: {command[:90]}", flush=True)
    print(f"load average at the end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}\n")
    print("| example | state | wall | CPU user + sys | peak RSS | load (1 min) before |")
    print("|---|---|---:|---:|---:|---:|")
    for command, run in rows:
        shown = command.replace(".venv/bin/harness ", "").replace("|", "\\|")
        print(
            f"| `{shown}` | {run.state} | {run.wall:.1f} s | {run.cpu:.1f} s | {run.peak_mib / 1024:.2f} GiB | {run.load:.1f} |"
        )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="921b164", help="commit to compare with ('' for none)")
    parser.add_argument("--cold", type=int, default=1, help="cold runs per tree")
    parser.add_argument("--warm", type=int, default=5, help="warm runs per tree (after the cold ones)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/quick-start-bench"), help="scratch folder")
    parser.add_argument("--profile", action="store_true", help="also print a cProfile of this tree's warm run")
    parser.add_argument("--examples", action="store_true", help="time every README example instead (issue 36)")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.examples:
        return examples(args.work)
    sides = [Side("this tree", args.work, None)]
    if args.base:
        sides.insert(0, Side(f"base {args.base}", args.work, unpack_base(args.base, args.work)))
    print(f"load average at the start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)
    runs: list[Run] = []
    for _ in range(args.cold):
        for side in sides:
            side.clear()
            runs.append(side.run("cold"))
            print(f"{side.name}: cold {runs[-1].wall:.1f} s wall, {runs[-1].cpu:.1f} s CPU", flush=True)
    for _ in range(args.warm):
        for side in sides:
            run = side.run("warm (same command again)")
            if run.computed:  # the tree's code changed under the benchmark: not a warm run, left out
                run.state = "warm, but recomputed (a model's code changed meanwhile)"
            runs.append(run)
            print(f"{side.name}: {run.state} {run.wall:.2f} s wall, {run.cpu:.2f} s CPU", flush=True)
    print(f"load average at the end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}\n")
    print(table(runs))
    printed = {tuple(run.numbers) for run in runs}
    print(f"\nEvery run printed the same numbers: {'yes' if len(printed) == 1 else 'NO'}")
    for numbers in sorted(printed):
        print("    " + "\n    ".join(line.replace("\t", "  ") for line in numbers) + "\n")
    cold = [run for run in runs if run.side == sides[-1].name and run.state == "cold"]
    if cold:
        print(f"Timeline of the last cold run of {sides[-1].name} (seconds from the start, stderr lines):\n")
        print("\n".join(f"    {t:6.1f}  {line}" for t, line in cold[-1].timeline))
    if args.profile:
        print(f"\ncProfile of a warm run of {sides[-1].name} (cumulative):\n")
        print(profile(sides[-1], 40))
    return 0


if __name__ == "__main__":
    sys.exit(main())
