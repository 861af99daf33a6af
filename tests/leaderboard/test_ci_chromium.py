""".ci/run installs Debian's chromium for the page's browser tests when it is missing and the machine allows it,
tolerates a failed install, and otherwise runs exactly the README's setup and test blocks (issue 24.6)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = """# x

```bash setup
echo setup-ran >> log
```

```bash test
echo tests-ran >> log
```
"""


def fake_checkout(tmp_path: Path, apt_status: int, uid: int) -> Path:
    """A copy of .ci/run beside a README, with a PATH of only the tools it needs (no chromium), a fake
    ``apt-get`` that logs its arguments and exits ``apt_status``, and a fake ``id -u`` printing ``uid``."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(REPO / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "README.md").write_text(README, encoding="utf-8")
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("bash", "awk", "rm", "dirname", "cat"):
        found = shutil.which(tool)
        assert found is not None
        (tools / tool).symlink_to(found)
    (tools / "apt-get").write_text(f'#!/bin/bash\necho "apt-get $*" >> log\nexit {apt_status}\n')
    (tools / "id").write_text(f"#!/bin/bash\necho {uid}\n")
    for script in ("apt-get", "id"):
        (tools / script).chmod(0o755)
    return tools


def run_ci(tmp_path: Path, tools: Path) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    done = subprocess.run(
        [str(tools / "bash"), str(tmp_path / ".ci" / "run")],
        env={"PATH": str(tools), "HOME": str(tmp_path)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, (tmp_path / "log").read_text().splitlines()


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_missing_chromium_is_installed_as_root_then_the_readme_blocks_run(tmp_path):
    done, log = run_ci(tmp_path, fake_checkout(tmp_path, 0, 0))
    assert done.returncode == 0, done.stderr
    assert log == ["apt-get update -qq", "apt-get install -y -qq chromium", "setup-ran", "tests-ran"]


@pytest.mark.skipif(os.name != "posix", reason="a POSIX shell script")
def test_a_failed_install_is_tolerated_and_a_user_without_root_is_not_asked(tmp_path):
    done, log = run_ci(tmp_path, fake_checkout(tmp_path, 100, 0))
    assert done.returncode == 0 and "browser tests will be skipped" in done.stderr
    assert log == ["apt-get update -qq", "setup-ran", "tests-ran"]
    (tmp_path / "log").unlink()
    shutil.rmtree(tmp_path / "bin")
    shutil.rmtree(tmp_path / ".ci")
    done, log = run_ci(tmp_path, fake_checkout(tmp_path, 0, 1000))
    assert done.returncode == 0 and log == ["setup-ran", "tests-ran"]
