"""Issue 36.2, a stop that stops: SIGINT and SIGTERM end a run within 2 s while a model encodes in native code or
converts its weights, with the one-line message, what was finished kept and nothing torn."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.foreground import foreground
from fixtures.plugins.fake import fake_data

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent

# the `harness` command with the fake plugin and the slow one, run as a process of its own (main() without argv)
_COMMAND = (
    "import sys\n"
    f"sys.path.insert(0, {str(TESTS)!r})\n"
    "from importlib.metadata import EntryPoint\n"
    "import harness.plugins.registry as registry\n"
    "registry._REGISTRY = registry.build_registry([\n"
    "    EntryPoint('fake', 'fixtures.plugins.fake', 'harness'),\n"
    "    EntryPoint('slow', 'fixtures.plugins.slow_native', 'harness'),\n"
    "])\n"
    "import harness.cli\n"
    "sys.argv = ['harness', *sys.argv[1:]]\n"
    "sys.exit(harness.cli.main())\n"
)
_SIGNALS = [
    (signal.SIGTERM, 143, "harness: interrupted by SIGTERM; finished results and cache entries are kept"),
    (signal.SIGINT, 130, "harness: interrupted; finished results and cache entries are kept"),
]


def _harness(tmp_path: Path, *argv: str, fast: bool = False) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "HARNESS_CACHE_DIR": str(tmp_path / "cache"),
        "HARNESS_MODELS_DIR": str(tmp_path / "models"),
    }
    if fast:
        env["SLOW_NATIVE_FAST"] = "1"
    return subprocess.Popen(
        [sys.executable, "-c", _COMMAND, *argv],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=foreground,
    )


def _run_args(tmp_path: Path, model: str) -> list[str]:
    data = fake_data(tmp_path / "data", [f"a {i}" for i in range(20)], [f"b {i}" for i in range(20)])
    # --batch-size 1: the cache is filled in chunks of 1, 2, 4, 8, 8... texts, the first of which the slow encoder computes at once
    return ["run", "--tasks", "mean_similarity", "--model", model, "--data-dir", str(data), "--batch-size", "1"]


def _stop_when_blocked(proc: subprocess.Popen[str], signum: int) -> tuple[str, str]:
    """Wait for the plugin's ``blocking``, send ``signum``; the process must be gone within 2 s."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "blocking", (line, proc.stderr.read() if proc.stderr else "")
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=2)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail(f"still running 2 s after signal {signum}")
    return out, err


@pytest.mark.parametrize(("signum", "code", "line"), _SIGNALS)
def test_a_signal_stops_a_model_blocked_in_native_code_and_keeps_what_was_encoded(tmp_path, signum, code, line):
    argv = _run_args(tmp_path, "slow-native-encoder")
    proc = _harness(tmp_path, *argv)
    _, err = _stop_when_blocked(proc, signum)
    assert proc.returncode == code
    assert err.strip().splitlines()[-1] == line
    assert not (tmp_path / "results" / "results.jsonl").exists()  # the task did not finish: no line, no torn line
    # the first chunk (1 of the 40 distinct texts: one batch) was cached before the stop, and is not computed again
    plan = _harness(tmp_path, *argv, "--dry-run", fast=True)
    out, err = plan.communicate(timeout=120)
    assert plan.returncode == 0, err
    assert "model outputs: 1 cached, 39 to compute" in out


@pytest.mark.parametrize(("signum", "code", "line"), _SIGNALS)
def test_a_signal_stops_a_conversion_and_leaves_no_folder_half_built(tmp_path, signum, code, line):
    argv = _run_args(tmp_path, "slow-converting-encoder")
    proc = _harness(tmp_path, *argv)
    _, err = _stop_when_blocked(proc, signum)
    assert proc.returncode == code
    assert err.strip().splitlines()[-1] == line
    models = tmp_path / "models"
    assert not (models / "slow-v1").exists()  # never renamed into place half-built
    assert not [p.name for p in models.iterdir() if p.name.startswith(".slow-v1.")]  # no scratch folder left
    # the next run builds it whole
    again = _harness(tmp_path, *argv, fast=True)
    _, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert sorted(p.name for p in (models / "slow-v1").iterdir()) == ["half.bin", "harness-manifest.json", "rest.bin"]
