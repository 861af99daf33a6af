"""Issue 23, point 12: torchrun ranks that read different data stop with one line naming the rank;
--dist-timeout and the launcher's variables are checked."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from faults.conftest import A, B, run_counting
from fixtures.plugins.fake import fake_data

HERE = Path(__file__).resolve().parent


def _run(capsys, data_dir: str, output: Path, *extra: str) -> tuple[int, str, str]:
    return run_counting(capsys, data_dir, output, *extra)


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-5"])
def test_a_dist_timeout_that_is_not_a_positive_number_is_refused(value, data_dir, tmp_path, capsys):
    code, _, err = _run(capsys, data_dir, tmp_path / "out", f"--dist-timeout={value}")
    assert code == 2 and f"--dist-timeout {value}" in err and "positive number of seconds" in err, err


def test_a_bad_harness_dist_timeout_is_refused(data_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HARNESS_DIST_TIMEOUT", "soon")
    code, _, err = _run(capsys, data_dir, tmp_path / "out")
    assert code == 2 and "HARNESS_DIST_TIMEOUT='soon'" in err, err


@pytest.mark.parametrize(("name", "value"), [("WORLD_SIZE", "abc"), ("WORLD_SIZE", "0"), ("RANK", "x")])
def test_launcher_variables_that_are_not_counts_are_refused(name, value, data_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv(name, value)
    code, _, err = _run(capsys, data_dir, tmp_path / "out")
    assert code == 2 and f"{name}={value!r}" in err, err


@pytest.mark.slow  # torchrun starts two processes that import torch
def test_ranks_that_read_different_data_stop_naming_the_rank(tmp_path):
    fake_data(tmp_path / "data0", A, B)
    fake_data(tmp_path / "data1", A, [*B[:-1], "un autre poisson"])
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node=2",
        "--max_restarts=0",
        str(HERE / "dist_diverging.py"),
        str(tmp_path / "dataRANK"),
        str(tmp_path / "out"),
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=HERE)
    assert run.returncode != 0
    errors = [line for line in run.stderr.splitlines() if line.startswith("harness: error:")]
    assert errors and all("rank 1 of 2 read different data than rank 0" in line for line in errors), run.stderr[-3000:]
    assert "KeyError" not in run.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists() or (tmp_path / "out" / "results.jsonl").read_text() == ""


def test_a_peer_lost_at_the_closing_barrier_is_one_clear_error(monkeypatch):
    """The barrier that ends a run fails as every collective does: PeerLostError naming the rank and the step."""
    import torch.distributed as dist

    from harness.run.distributed import PeerLostError, RankPartition

    def gone() -> None:
        raise RuntimeError("Connection closed by peer [127.0.0.1]:29500\nmore detail")

    monkeypatch.setattr(dist, "barrier", gone)
    with pytest.raises(PeerLostError) as caught:
        RankPartition(1, 2).leave_together()
    assert str(caught.value).startswith(
        "rank 1 of 2 lost contact with the other ranks while waiting for every rank to finish "
        "(RuntimeError: Connection closed by peer [127.0.0.1]:29500); what was finished is in the cache"
    )


@pytest.mark.parametrize(
    ("argv", "joined", "ended"), [(None, True, True), (None, False, False), (["list"], True, False)]
)
def test_a_rank_ends_without_interpreter_shutdown(argv, joined, ended, monkeypatch, capsys):
    """A process that joined a process group ends by ``os._exit`` with the command's code once its output is
    flushed (gloo's threads abort an interpreter shutdown); an in-process call (``main(argv)``) and a process
    that joined none return as usual."""
    import harness.cli as cli
    from harness.run import distributed

    class Ended(Exception):
        pass

    def exit_now(code: int) -> None:
        raise Ended(code)

    monkeypatch.setattr(sys, "argv", ["harness", "list"])
    monkeypatch.setattr(cli.os, "_exit", exit_now)
    monkeypatch.setattr(distributed, "_JOINED", distributed.threading.Event())
    if joined:
        distributed._JOINED.set()
    if ended:
        with pytest.raises(Ended) as caught:
            cli.main(argv)
        assert caught.value.args == (0,)
    else:
        assert cli.main(argv) == 0
    assert capsys.readouterr().out.count("\n") >= 1  # the listing was written before the end
