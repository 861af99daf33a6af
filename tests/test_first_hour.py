"""Issue 25, the first hour: what a newcomer meets from the shell and from a notebook."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _harness(*argv: str, **kwargs) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "harness", *argv], cwd=ROOT, stderr=subprocess.PIPE, text=True, **kwargs
    )


@pytest.mark.parametrize("argv", [("plugins",), ("list", "--json"), ("list", "models"), ("describe", "xlr")])
def test_output_into_a_closed_pipe_ends_quietly(argv):
    """`harness plugins | head -1`: the reader has gone before we write; exit 0 and nothing on stderr."""
    proc = _harness(*argv, stdout=subprocess.PIPE)
    proc.stdout.close()  # no reader is left: every write is EPIPE
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "BrokenPipe" not in err and "internal error" not in err and "Exception ignored" not in err


_SLOW_COMMAND = (
    "import sys, time\n"
    "import harness.cli as cli\n"
    "def slow(args):\n"
    "    print('ready', flush=True)\n"
    "    time.sleep(60)\n"
    "cli._command_plugins = slow\n"
    "sys.exit(cli.main(['plugins']))\n"
)


@pytest.mark.parametrize(
    ("signum", "code", "line"),
    [
        (signal.SIGTERM, 143, "harness: interrupted by SIGTERM; finished results and cache entries are kept"),
        (signal.SIGINT, 130, "harness: interrupted; finished results and cache entries are kept"),
    ],
)
def test_sigterm_and_sigint_print_one_line(signum, code, line):
    """Issue 23: SIGTERM (a scheduler's kill) ends with the same one line as Ctrl-C, not a silent exit 143."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _SLOW_COMMAND], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code
    assert err.strip() == line
