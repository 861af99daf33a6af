"""The runner reads each data set once per run: tasks with the same loader, source, arguments, images and
``--limit`` share one ``LoadedData``."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from retrieval.builders import write_ikea

from harness.run.plan import DataSource
from harness.run.runner import data_key, prepare
from harness_tasks.retrieval.ikea import IkeaLoader


class Encoder:
    """A deterministic 16-d text encoder (from a hash of the text)."""

    def encode(self, texts):
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], dtype=np.uint8) for t in texts]
        return np.asarray(rows, dtype=np.float32) / 255.0


@pytest.fixture
def loads(monkeypatch):
    """The (source, src, tgt) of every IkeaLoader.load call."""
    calls: list[tuple[str, str, str]] = []
    original = IkeaLoader.load

    def counted(self, source, args, images_dir=None):
        calls.append((source, args["src"], args["tgt"]))
        return original(self, source, args, images_dir)

    monkeypatch.setattr(IkeaLoader, "load", counted)
    return calls


def test_three_tasks_on_one_data_set_read_it_once(tmp_path, loads):
    folder = str(write_ikea(tmp_path / "d"))
    plan = prepare(["xlr", "backretrieval", "corr"], Encoder(), output=None, data_dir=folder, task_args={"n": 3})
    assert loads == [(folder, "en", "de")]
    first = plan.tasks[0].loaded
    assert all(p.loaded is first for p in plan.tasks)
    assert first.identity["loader"] == "ikea" and first.identity["size"] == 6


def test_other_arguments_or_limit_read_again(tmp_path, loads):
    folder = str(write_ikea(write_ikea(tmp_path / "d"), pair="en.fr"))
    plan = prepare(
        ["xlr", "backretrieval", "corr"],
        Encoder(),
        output=None,
        data_dir=folder,
        task_args={"n": 3, "xlr.tgt": "fr"},
        limit=5,
    )
    assert loads == [(folder, "en", "fr"), (folder, "en", "de")]
    xlr, bkr, corr = (p.loaded for p in plan.tasks)
    assert xlr is not bkr and bkr is corr and len(xlr.data) == len(bkr.data) == 5


def test_data_key():
    source = DataSource("ikea", "/d")
    key = data_key(source, {"src": "en", "tgt": "de"}, None, None)
    assert key == data_key(source, {"tgt": "de", "src": "en"}, None, None)  # the arguments' order does not count
    others = [
        data_key(DataSource("multi30k", "/d"), {"src": "en", "tgt": "de"}, None, None),
        data_key(DataSource("ikea", "/e"), {"src": "en", "tgt": "de"}, None, None),
        data_key(source, {"src": "en", "tgt": "fr"}, None, None),
        data_key(source, {"src": "en", "tgt": "de"}, "/images", None),
        data_key(source, {"src": "en", "tgt": "de"}, None, 10),
    ]
    assert len({key, *others}) == 6
