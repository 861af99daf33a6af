"""One task of each family under torchrun (2 ranks, gloo on CPU) equals the single-process run.

The torchrun side is the real end-to-end CLI run of each family (two processes, each importing torch and the
harness); the single-process side runs in this process through ``harness.cli.main``, the same entry point.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from commute import mmt_builders
from yisi.helpers import write_multi30k

from harness.cli import main

pytestmark = pytest.mark.slow  # two torchrun ranks start torch and the harness: tens of seconds per family


def read_by_task(output: Path) -> dict[str, dict]:
    """The records a run wrote, by task; exactly one line per task."""
    records = [json.loads(line) for line in (output / "results.jsonl").read_text().splitlines()]
    by_task = {record["task"]: record for record in records}
    assert len(by_task) == len(records)  # rank 0 alone writes: one line per task
    return by_task


def run_single(args: list[str], cache: Path, output: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, dict]:
    """The single-process run, in this process."""
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache))
    assert main([*args, "--output", str(output)]) == 0
    return read_by_task(output)


def run_torchrun(args: list[str], cache: Path, output: Path) -> dict[str, dict]:
    """The same run under torchrun, 2 ranks of one thread each, as a user starts it."""
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "--max_restarts=0"]
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache), "OMP_NUM_THREADS": "1"}
    command = [*launcher, "-m", "harness", *args, "--dist-timeout", "120", "--output", str(output)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return read_by_task(output)


@pytest.mark.parametrize("family", ["retrieval", "commute", "yisi"])
def test_two_ranks_equal_one(family, tmp_path, tiny_bert_12, monkeypatch):
    if family == "retrieval":
        model = tiny_bert_12
        args = [
            "--tasks",
            "xlr,backretrieval",
            "--model",
            str(model),
            "--task-args",
            "dataset=xling-shapes,size=60,n=25",
            "--seeds",
            "3",
        ]
    elif family == "commute":
        model = mmt_builders.tiny_marian(tmp_path / "model")
        data = mmt_builders.write_commute(tmp_path / "commute")
        images = mmt_builders.stand_in_images(tmp_path / "images", [line[3] for line in mmt_builders.MINI])
        args = [
            "--tasks",
            "commute_tc",
            "--model",
            str(model),
            "--data-dir",
            str(data),
            "--images",
            str(images),
            "--task-args",
            "lang=fr",
        ]
    else:
        model = tiny_bert_12
        data = write_multi30k(tmp_path / "multi30k")
        args = [
            "--tasks",
            "yisi2_filter",
            "--model",
            str(model),
            "--data-dir",
            str(data),
            "--task-args",
            "src=en,tgt=de",
        ]
    run = ["run", *args, "--batch-size", "2"]
    single = run_single(run, tmp_path / "cache1", tmp_path / "single", monkeypatch)
    dist = run_torchrun(run, tmp_path / "cache2", tmp_path / "dist")
    assert sorted(dist) == sorted(single)
    for task, expected in single.items():
        got = dist[task]
        assert got["run"]["world_size"] == 2 and expected["run"]["world_size"] == 1
        assert got["task_signature"] == expected["task_signature"]
        for name, value in expected["metrics"].items():
            exact = family == "commute"  # indicator metrics: exactly equal
            assert got["metrics"][name] == (value if exact or value is None else pytest.approx(value, abs=1e-6)), (
                task,
                name,
            )
