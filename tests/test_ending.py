"""A command's large result is not freed: the ``harness`` process ends with its exit handlers run, its output whole."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from leaderboard.builders import record, write_results

from harness import ending


def test_called_from_python_nothing_is_held() -> None:
    with ending.owning(False):
        ending.hold(object())
        assert not ending.holding()


def test_what_was_held_is_let_go_when_the_process_goes_on() -> None:
    """A test calling ``main()`` as the command line would (a patched ``os._exit``) leaves nothing held behind it."""
    try:
        with ending.owning(True):
            ending.hold(object())
            assert ending.holding()
            raise RuntimeError("the process did not end")
    except RuntimeError:
        pass
    ending.hold(object())
    assert not ending.holding()


def test_the_command_line_holds_and_still_runs_exit_handlers(tmp_path: Path) -> None:
    results = write_results(tmp_path / "results", [record(model="a", values=0.5), record(model="b", values=0.7)])
    script = (
        "import atexit, sys\n"
        "import harness.cli\n"
        "atexit.register(lambda: print('exit handler ran', flush=True))\n"
        f"sys.argv = ['harness', 'leaderboard', {str(results)!r}, '-o', {str(tmp_path / 'board')!r}, '--no-plots']\n"
        "code = harness.cli.main()\n"
        "print('after main', flush=True)\n"  # never reached: the process ends in main
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "exit handler ran"
    assert "after main" not in done.stdout
    assert f"wrote {tmp_path / 'board'}/.leaderboard-manifest.json" in lines
    assert (tmp_path / "board" / "index.html").is_file()
