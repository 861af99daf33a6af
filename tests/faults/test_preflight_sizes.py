"""Issue 23.14: every task's fewest items (``Task.min_items`` / ``check_size``) are checked before any inference.

On the old code, with one item, backretrieval and corr were refused only after xlr had been computed.
"""

from __future__ import annotations

import pytest
from faults.conftest import run_cli
from fixtures.registries import project_registry

import harness
import harness.plugins.registry
from harness.errors import HarnessError


class Counting:
    """An in-memory encoder that counts the texts it encodes."""

    texts = 0

    def encode(self, texts, **kwargs):
        Counting.texts += len(texts)
        return [[float(len(t)), 1.0] for t in texts]


@pytest.fixture
def project(monkeypatch):
    registry = project_registry()
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", registry)
    Counting.texts = 0
    return registry


def test_one_item_is_refused_for_backretrieval_before_xlr_computes(project, tmp_path):
    with pytest.raises(HarnessError) as caught:
        harness.evaluate(
            "xlr,backretrieval,corr", Counting(), task_args="size=8", limit=1, output=tmp_path / "out", registry=project
        )
    assert str(caught.value) == (
        "task 'backretrieval' needs at least 2 item(s), the data has 1 (xling-shapes from xling-shapes:size=8,seed=0, "
        "cut by --limit 1)"
    )
    assert Counting.texts == 0  # xlr, first in the run, computed nothing
    assert not (tmp_path / "out" / "results.jsonl").exists() or (tmp_path / "out" / "results.jsonl").read_text() == ""


def test_the_cli_exits_2_naming_the_task_and_writes_nothing(project, tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["run", "--tasks", "xlr,corr", "--model", "random-encoder", "--task-args", "size=8", "--limit", "1"]
    code, _, err = run_cli(capsys, *argv, "--output", str(out))
    assert code == 2
    assert "harness: error: task 'corr' needs at least 2 item(s), the data has 1" in err
    assert not (out / "results.jsonl").exists() or (out / "results.jsonl").read_text() == ""
    code, _, err = run_cli(capsys, *argv[:-1], "2", "--output", str(out), "--seed", "0")
    assert code == 0, err  # two items are enough for both
    assert len((out / "results.jsonl").read_text().splitlines()) == 2
