"""Benchmark (issue 39.2): text-encoding throughput of the packaged models idle and with busy processes beside them,
on this tree and on a base commit, in the same run.

    .venv/bin/python benchmarks/native_under_load.py [--base 11843f3] [--models e5-small,e5-small-hf,minilm]
        [--sentences 400] [--rounds 2] [--hogs 2] [--work DIR]

Each measurement is a fresh child process (OpenMP reads its settings when a runtime loads) that loads the model
through its harness adapter (converted models shared in ``--work``, converted before any timing), encodes 32
sentences untimed, then times one pass over ``--sentences`` Multi30K captions (test_2016_flickr, half English,
half German, batch 32). "busy" starts ``--hogs`` processes of ``yes > /dev/null`` before the child and stops them
after it, so they hold the cores for the whole pass. Idle and busy alternate per round and per side; the best
pass counts. The base side is ``git archive`` of ``--base`` imported through ``PYTHONPATH``, as in
``quick_start.py``. The load average before each child is printed with it: on a machine shared with other work
"idle" is not idle, and only the ratios within one run compare.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from offline_models_throughput import BATCH, sentences  # the same captions as the packaged-model benchmark
from quick_start import unpack_base


def child(model: str, count: int) -> None:
    """Load ``model``, warm up, time one pass; print ``texts/s cpu_s``."""
    from harness_models.packaged.e5 import E5Small, E5SmallHF
    from harness_models.packaged.hf_folder import MiniLM

    builders = {
        "e5-small": lambda: E5Small("e5-small"),
        "e5-small-hf": lambda: E5SmallHF("e5-small-hf", batch_size=BATCH),
        "minilm": lambda: MiniLM("minilm", batch_size=BATCH),
    }
    adapter, texts = builders[model](), sentences(count)
    adapter.encode_texts(texts[:BATCH])
    print("ready", flush=True)
    sys.stdin.readline()  # the parent starts the busy processes, then says go
    cpu, start = time.process_time(), time.perf_counter()
    adapter.encode_texts(texts)
    wall = time.perf_counter() - start
    print(f"{len(texts) / wall:.2f} {time.process_time() - cpu:.2f}", flush=True)


def measure(model: str, count: int, hogs: int, env: dict[str, str]) -> tuple[float, float, float]:
    """(texts/s, CPU seconds, load average before) of one child, with ``hogs`` busy processes during its pass."""
    load = os.getloadavg()[0]
    command = [sys.executable, __file__, "--child", model, "--sentences", str(count)]
    process = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        raise SystemExit(f"{model}: the child failed before timing")
    busy = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(hogs)]
    try:
        time.sleep(0.2)  # the busy processes are running before the timed pass starts
        process.stdin.write("go\n")
        process.stdin.flush()
        rate, cpu = map(float, process.stdout.readline().split())
    finally:
        for hog in busy:
            hog.kill()
            hog.wait()
    process.wait()
    return rate, cpu, load


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="11843f3", help="commit to compare with ('' for none)")
    parser.add_argument("--models", default="e5-small,e5-small-hf,minilm")
    parser.add_argument("--sentences", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--hogs", type=int, default=2, help="busy processes beside the model")
    parser.add_argument("--work", type=Path, default=Path("/tmp/native-under-load"))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.sentences)
        return 0

    args.work.mkdir(parents=True, exist_ok=True)
    base = dict(os.environ, HARNESS_MODELS_DIR=str(args.work / "models"), HARNESS_CACHE_DIR=str(args.work / "cache"))
    base.pop("PYTHONPATH", None)
    sides = {"this tree": base}
    if args.base:
        links = unpack_base(args.base, args.work)
        sides[args.base] = dict(base, PYTHONPATH=str(links))
    models = args.models.split(",")
    best: dict[tuple[str, str, str], tuple[float, float]] = {}
    print(f"{os.cpu_count()} CPUs, affinity {len(os.sched_getaffinity(0))}, {args.sentences} sentences, batch {BATCH}")
    for round_ in range(args.rounds):
        for model in models:
            for side, env in sides.items():
                for state, hogs in (("idle", 0), ("busy", args.hogs)):
                    rate, cpu, load = measure(model, args.sentences, hogs, env)
                    print(
                        f"round {round_ + 1} {model:12} {side:10} {state}: {rate:7.1f} texts/s, "
                        f"{cpu:6.1f} s CPU (load before {load:.1f})",
                        flush=True,
                    )
                    key = (model, side, state)
                    if rate > best.get(key, (0.0, 0.0))[0]:
                        best[key] = (rate, cpu)
    print(f"\nbest of {args.rounds}, texts/s; busy = {args.hogs} x `yes > /dev/null` beside the model\n")
    print("| model | tree | idle | busy | busy / idle |\n|---|---|---:|---:|---:|")
    for model in models:
        for side in sides:
            idle, busy = best[(model, side, "idle")][0], best[(model, side, "busy")][0]
            print(f"| {model} | {side} | {idle:.1f} | {busy:.1f} | {busy / idle:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
