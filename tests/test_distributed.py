"""torch.distributed (torchrun, gloo on CPU) and --shard runs equal single-process runs and resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.plugins.fake import CountingEncoder, fake_data
from fixtures.registries import fixture_registry

from harness.errors import HarnessError
from harness.results.records import read_records
from harness.run.distributed import parse_shard
from harness.run.runner import ShardDone, evaluate

HERE = Path(__file__).resolve().parent
A = [f"source sentence number {i}" for i in range(40)]
B = [f"phrase cible numéro {i}" for i in range(40)]


@pytest.fixture
def data_dir(tmp_path):
    return str(fake_data(tmp_path / "data", A, B))


@pytest.fixture(autouse=True)
def _reset(fresh_cache):
    CountingEncoder.calls.clear()


def torchrun(*args: str, env: dict[str, str] | None = None, timeout: int = 240) -> subprocess.CompletedProcess:
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        "--max_restarts=0",
        *args,
    ]
    environment = {**os.environ, "OMP_NUM_THREADS": "1", **(env or {})}
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environment, cwd=HERE)


def single(data_dir: str, output: Path):
    return evaluate(
        "mean_similarity", "counting-encoder", data_dir=data_dir, output=output, seeds=3, registry=fixture_registry()
    )


@pytest.mark.slow  # torchrun starts two processes that import torch
def test_two_ranks_equal_one_process_and_fill_the_shared_cache(data_dir, tmp_path):
    run = torchrun(str(HERE / "fixtures" / "dist_run.py"), data_dir, str(tmp_path / "dist"))
    assert run.returncode == 0, run.stderr[-3000:]
    ranks = sorted(
        (json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")), key=lambda r: r["rank"]
    )
    assert [r["rank"] for r in ranks] == [0, 1]
    assert (
        ranks[0]["encoded"] + ranks[1]["encoded"] == 80 and min(r["encoded"] for r in ranks) > 0
    )  # each rank did its share
    records, problems = read_records(tmp_path / "dist" / "results.jsonl")
    assert problems == [] and len(records) == 1  # rank 0 alone writes
    assert records[0].run["world_size"] == 2
    (alone,) = single(data_dir, tmp_path / "single")
    assert CountingEncoder.calls == []  # everything the ranks computed is in the shared cache
    assert alone.metrics == pytest.approx(records[0].metrics, abs=1e-6)
    assert alone.signature == records[0].signature


@pytest.mark.slow  # torchrun starts two processes that import torch
def test_no_rank_returns_before_rank_0_has_written_the_results(data_dir, tmp_path):
    """A rank that exits while rank 0 still works can abort at interpreter shutdown (a gloo worker thread releasing
    the last exchange's tensors): every rank leaves the run together, after rank 0's last line is written."""
    run = torchrun(
        str(HERE / "fixtures" / "dist_run.py"), data_dir, str(tmp_path / "dist"), env={"FAKE_SLOW_RANK": "0"}
    )
    assert run.returncode == 0, run.stderr[-3000:]
    returned = {r["rank"]: r["returned_at"] for r in map(json.loads, run.stdout.splitlines()) if "rank" in r}
    written = (tmp_path / "dist" / "results.jsonl").stat().st_mtime
    assert sorted(returned) == [0, 1]
    assert returned[1] >= written  # rank 0 spent 2 s past the exchange; rank 1 waited for it


@pytest.mark.slow  # torchrun starts two processes that import torch
def test_a_dying_rank_stops_the_run_and_the_rerun_resumes(data_dir, tmp_path):
    run = torchrun(
        str(HERE / "fixtures" / "dist_run.py"), data_dir, str(tmp_path / "dist"), env={"FAKE_DIE_ON_RANK": "1"}
    )
    assert run.returncode != 0
    assert not (tmp_path / "dist" / "results.jsonl").exists() or (tmp_path / "dist" / "results.jsonl").read_text() == ""
    (record,) = single(data_dir, tmp_path / "single")
    assert 0 < sum(CountingEncoder.calls) < 80  # what the ranks finished before the failure came from the cache
    assert record.dataset["size"] == 40


def test_shards_then_merge(data_dir, tmp_path):
    registry = fixture_registry()
    (first,) = evaluate(
        "mean_similarity",
        "counting-encoder",
        data_dir=data_dir,
        output=tmp_path,
        seeds=3,
        shard="0/2",
        registry=registry,
    )
    assert isinstance(first, ShardDone) and 0 < first.missing < 80
    # only its slice, and no results: not even an empty results file (issue 25.7)
    assert 0 < sum(CountingEncoder.calls) < 80 and not (tmp_path / "results.jsonl").exists()
    # the last shard finds the others' outputs in the cache, so it can write the results itself
    (last,) = evaluate(
        "mean_similarity",
        "counting-encoder",
        data_dir=data_dir,
        output=tmp_path,
        seeds=3,
        shard="1/2",
        registry=registry,
    )
    assert sum(CountingEncoder.calls) == 80
    CountingEncoder.calls.clear()
    (merged,) = evaluate(
        "mean_similarity", "counting-encoder", data_dir=data_dir, output=tmp_path / "merged", seeds=3, registry=registry
    )
    assert CountingEncoder.calls == []
    (plain,) = evaluate(
        "mean_similarity",
        "counting-encoder",
        data_dir=data_dir,
        output=tmp_path / "plain",
        seeds=3,
        registry=registry,
        use_cache=False,
    )
    assert merged.metrics == plain.metrics == last.metrics


def test_shard_syntax():
    assert parse_shard("1/4").index == 1 and parse_shard(" 3 / 4 ").count == 4
    for bad in ("4/4", "-1/2", "1", "a/b"):
        with pytest.raises(HarnessError, match="--shard takes i/N"):
            parse_shard(bad)
