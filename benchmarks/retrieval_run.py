"""Benchmark: a harness run of xlr + backretrieval + corr at n = 10,000 against the BLAS floor (issue 28.2).

The run is ``harness.evaluate(["xlr", "backretrieval", "corr"], model, data_dir=..., output=...)``,
what ``harness run --tasks xlr,backretrieval,corr`` calls after parsing its options, on
in-memory embeddings: an IKEA-layout folder of N = 2n items (texts ``en <i>`` / ``de <i>``,
2048-d non-negative image features) and a model whose ``encode`` looks each text's vector up
(768-d; the targets are noisy copies of the sources), the embeddings of
``benchmarks/retrieval_metrics.py``. Everything a run does is timed: loading and checking the
data, the three tasks (xlr and backretrieval sharing one text pass, ``harness.run.joint``), the
bootstrap intervals, the results lines, and the imports the run makes itself (the plugins, ``datasets``:
about 0.5-1 s, as a user's run pays them). Not timed: importing harness and NumPy, and writing the folder.

The floor is ``retrieval_metrics.floor``: the similarity products the three metrics need (the
text product once), on the same vectors and the seeds' samples, results thrown away. Each
measurement is a fresh process; the two alternate (run, floor; then floor, run) and the ratio is
the median of the rounds' CPU-time ratios (the machine may be shared: CPU time is what other
jobs disturb least). ``--check`` (on by default) also runs the three tasks as three separate
runs once and requires byte-identical records (metrics, stds, per-seed values, intervals,
signatures).

    python benchmarks/retrieval_run.py [--n 10000] [--seeds 25] [--repeats 2] [--no-check]
    python benchmarks/retrieval_run.py --profile [--n 10000]     # the time of each stage of one run
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval_metrics  # the embeddings and the floor of the metric-level benchmark

TASKS = ["xlr", "backretrieval", "corr"]
RECORD_FIELDS = ("metrics", "metrics_std", "per_seed", "intervals", "signature")


class VectorTable:
    """An in-memory text encoder: the text ``<lang> <i>`` has row i of that language's vectors."""

    def __init__(self, vectors: dict[str, np.ndarray]):
        self.vectors = vectors
        self.name = "vector-table"

    def encode(self, texts, **kwargs):
        """The stored vectors of ``texts``."""
        lang = texts[0].split(" ", 1)[0] if texts else "en"
        rows = np.fromiter((int(t.split(" ", 1)[1]) for t in texts), dtype=np.int64, count=len(texts))
        return self.vectors[lang][rows]


def write_data(folder: Path, n: int) -> None:
    """The IKEA-layout folder (``en.de/test.*``) and the text vectors (``vectors.npz``) of N = 2n items."""
    src, tgt, images = retrieval_metrics.embeddings(2 * n)
    pair = folder / "en.de"
    pair.mkdir(parents=True)
    for lang in ("en", "de"):
        (pair / f"test.{lang}").write_text("".join(f"{lang} {i}\n" for i in range(2 * n)), encoding="utf-8")
    np.save(pair / "test.image_features.npy", images)
    np.savez(folder / "vectors.npz", en=src, de=tgt)


def harness_run(folder: Path, n: int, seeds: int, tasks: list[str]) -> tuple[dict, float, float]:
    """One harness run of ``tasks`` (results written to a temporary folder): (records, wall s, CPU s)."""
    import harness

    with np.load(folder / "vectors.npz") as stored:
        model = VectorTable({lang: stored[lang] for lang in ("en", "de")})
    with tempfile.TemporaryDirectory() as output:
        start, cpu = time.perf_counter(), time.process_time()
        records = harness.evaluate(
            tasks, model, data_dir=str(folder), task_args={"src": "en", "tgt": "de", "n": n}, seeds=seeds, output=output
        )
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    fields = {r.task: {f: json.dumps(getattr(r, f), sort_keys=True) for f in RECORD_FIELDS} for r in records}
    return fields, wall, cpu


def floor(folder: Path, n: int, seeds: int) -> tuple[dict, float, float]:
    """The similarity products alone, on the run's vectors and samples: ({}, wall s, CPU s)."""
    with np.load(folder / "vectors.npz") as stored:
        src, tgt = stored["en"], stored["de"]
    images = np.load(folder / "en.de" / "test.image_features.npy")
    sources, targets = retrieval_metrics.samples(2 * n, n, seeds)  # the tasks' samples: permutation s, halves
    start, cpu = time.perf_counter(), time.process_time()
    retrieval_metrics.floor(src, tgt, images, sources, targets)
    return {}, time.perf_counter() - start, time.process_time() - cpu


def worker(kind: str, folder: Path, n: int, seeds: int) -> None:
    """Measure one side; print a JSON line."""
    if kind == "floor":
        result, wall, cpu = floor(folder, n, seeds)
    elif kind == "run":
        result, wall, cpu = harness_run(folder, n, seeds, TASKS)
    else:  # separate: one run per task, as three ``harness run --tasks T`` would
        result, wall, cpu = {}, 0.0, 0.0
        for task in TASKS:
            records, seconds, cpu_seconds = harness_run(folder, n, seeds, [task])
            result.update(records)
            wall, cpu = wall + seconds, cpu + cpu_seconds
    print(json.dumps({"result": result, "wall": wall, "cpu": cpu}))


def run_worker(kind: str, folder: Path, n: int, seeds: int) -> dict:
    command = [sys.executable, __file__, "--worker", kind, "--data", str(folder), "--n", str(n), "--seeds", str(seeds)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


STAGES = (  # (module, owner attribute path, label): the stages of a run, timed where they are called
    ("harness.run.runner", "prepare", "preflight (`runner.prepare`)"),
    ("harness.run.runner", "load_task_data", "of which reading the data (`load_task_data`, per task)"),
    ("harness_tasks.retrieval.tasks", "RetrievalTask.texts", "text vectors (`RetrievalTask.texts`, per task)"),
    ("harness.adapters.cached_model", "CachedModel.encode_texts", "of which the model wrapper (`encode_texts`)"),
    ("harness_tasks.retrieval.tasks", "RetrievalTask.images", "image vectors (`RetrievalTask.images`, per task)"),
    ("harness_tasks.retrieval.tasks", "image_features", "of which the column as a matrix (`image_features`)"),
    ("harness_tasks.retrieval.metrics", "xlr_and_backretrieval", "metrics: xlr + backretrieval, one text pass"),
    ("harness_tasks.retrieval.metrics", "corr_with_moments", "metrics: corr"),
    ("harness_tasks.retrieval.tasks", "Xlr.output", "per-item records: xlr"),
    ("harness_tasks.retrieval.tasks", "BackRetrieval.output", "per-item records: backretrieval"),
    ("harness.run.runner", "_record", "results lines (`runner._record`)"),
    ("harness.run.runner", "item_intervals", "of which bootstrap intervals (`item_intervals`)"),
    ("harness.results.samples", "sample_values", "of which the samples' values (`sample_values`)"),
    ("harness.results.samples", "to_units", "of which the units (`to_units`)"),
    ("harness.results.bootstrap", "interval", "of which the resampling (`bootstrap.interval`)"),
)


def profile(folder: Path, n: int, seeds: int) -> None:
    """One run with its stages timed (wall, CPU of the process, CPU of the main thread): a Markdown table.

    The process's CPU time includes every thread: the metrics' worker threads (``metrics._Workers``,
    which compute the chunks and corr's seeds) and BLAS's; the main thread's CPU time is the work
    done on the calling thread (a stage whose main thread is far below its wall time waits on workers).
    """
    import functools
    import importlib

    spent: dict[str, list[float]] = {}

    def timed(function, label):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            clocks = time.perf_counter(), time.process_time(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                now = time.perf_counter(), time.process_time(), time.thread_time()
                total = spent.setdefault(label, [0.0, 0.0, 0.0])
                for i in range(3):
                    total[i] += now[i] - clocks[i]

        return wrapper

    for module_name, path, label in STAGES:
        owner = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        setattr(owner, name, timed(getattr(owner, name), label))
    start = time.thread_time()
    _, wall, cpu = harness_run(folder, n, seeds, TASKS)
    thread = time.thread_time() - start
    print(f"load average: {os.getloadavg()[0]:.1f} (2 cores)\n")
    print("| stage | wall (s) | CPU, process (s) | CPU, main thread (s) |")
    print("|---|---:|---:|---:|")
    for _, _, label in STAGES:
        if label in spent:
            w, c, t = spent[label]
            print(f"| {label} | {w:.1f} | {c:.1f} | {t:.1f} |")
    print(f"| **the run** | {wall:.1f} | {cpu:.1f} | {thread:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="sample size n (N = 2n items)")
    parser.add_argument("--seeds", type=int, default=25)
    parser.add_argument("--repeats", type=int, default=2, help="alternating rounds of the run and the floor")
    parser.add_argument("--no-check", action="store_true", help="skip the separate runs (identity check)")
    parser.add_argument("--profile", action="store_true", help="time the stages of one run instead")
    parser.add_argument("--worker", choices=("run", "floor", "separate"), help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.data, args.n, args.seeds)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "data"
        write_data(folder, args.n)
        if args.profile:
            return profile(folder, args.n, args.seeds)
        compare(folder, args.n, args.seeds, args.repeats, not args.no_check)


def compare(folder: Path, n: int, seeds: int, repeats: int, check: bool) -> None:
    """Alternate the run and the floor; check the run against separate runs; print the table."""
    runs: dict[str, list[dict]] = {"run": [], "floor": []}
    for r in range(repeats):
        for kind in ("run", "floor") if r % 2 == 0 else ("floor", "run"):
            load = os.getloadavg()[0]
            runs[kind].append({**run_worker(kind, folder, n, seeds), "load": load})
            last = runs[kind][-1]
            print(
                f"round {r + 1}: {kind} {last['wall']:.1f} s wall, {last['cpu']:.1f} s CPU (load average before: {load:.1f})",
                flush=True,
            )
    identical = "not checked"
    if check:
        load = os.getloadavg()[0]
        separate = run_worker("separate", folder, n, seeds)
        print(
            f"separate runs: {separate['wall']:.1f} s wall, {separate['cpu']:.1f} s CPU (load average before: {load:.1f})"
        )
        if separate["result"] != runs["run"][0]["result"]:
            raise SystemExit("the run's records differ from those of separate runs")
        identical = "identical to separate runs"
    ratio_cpu = statistics.median(o["cpu"] / f["cpu"] for o, f in zip(runs["run"], runs["floor"]))
    ratio_wall = statistics.median(o["wall"] / f["wall"] for o, f in zip(runs["run"], runs["floor"]))
    med = {
        kind: {key: statistics.median(x[key] for x in values) for key in ("wall", "cpu")}
        for kind, values in runs.items()
    }
    loads = [x["load"] for values in runs.values() for x in values]
    print(f"\nload average at end: {os.getloadavg()[0]:.1f} (2 cores)\n")
    print(
        f"harness run of {', '.join(TASKS)}, n = {n:,} (N = {2 * n:,} items), {seeds} seeds, medians of {repeats} rounds\n"
    )
    print("| n | run wall / CPU (s) | floor wall / CPU (s) | ratio CPU (wall) | records | load average |")
    print("|---:|---:|---:|---:|---|---:|")
    print(
        f"| {n:,} | {med['run']['wall']:.1f} / {med['run']['cpu']:.1f} | {med['floor']['wall']:.1f} / "
        f"{med['floor']['cpu']:.1f} | {ratio_cpu:.2f}x ({ratio_wall:.2f}x) | {identical} | "
        f"{min(loads):.1f}-{max(loads):.1f} |"
    )


if __name__ == "__main__":
    main()
