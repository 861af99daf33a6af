"""ensure_built: a folder is built once, whoever asks for it at the same moment (threads, xdist workers)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from harness.artefacts import ensure_built
from harness.errors import HarnessError


def test_two_threads_asking_at_once_build_the_folder_once(tmp_path, capsys):
    builds: list[int] = []
    both_asked = threading.Barrier(2)
    folder = tmp_path / "models" / "tiny-abc"

    def build(scratch: Path) -> None:
        builds.append(threading.get_ident())
        (scratch / "weights").write_text("w")
        threading.Event().wait(0.3)  # long enough for the other thread to arrive while this one builds

    def ask() -> None:
        both_asked.wait()
        assert ensure_built(folder, build) == folder

    threads = [threading.Thread(target=ask) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert (folder / "weights").read_text() == "w"
    assert capsys.readouterr().err.count("converting tiny-abc, once") == 1
    # nothing but the folder and its lock beside it: no scratch folder left
    assert sorted(p.name for p in folder.parent.iterdir()) == [".lock-tiny-abc", "tiny-abc"]


def test_a_failed_build_leaves_no_folder_and_the_next_call_builds_it(tmp_path):
    folder = tmp_path / "tiny-abc"

    def broken(scratch: Path) -> None:
        (scratch / "half").write_text("h")
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        ensure_built(folder, broken)
    assert not folder.exists()
    assert ensure_built(folder, lambda scratch: (scratch / "whole").write_text("w")) == folder
    assert "whole" in [p.name for p in folder.iterdir()]


def test_an_unwritable_models_folder_is_one_clear_error(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(HarnessError, match=r"cannot write converted models to .*file.*HARNESS_MODELS_DIR"):
        ensure_built(tmp_path / "file" / "tiny-abc", lambda scratch: None)
