"""The Python API: in-memory models, output=None, records as a DataFrame, dir(harness), and the doc's examples."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from conftest import REPO
from fixtures.plugins.fake import CountingEncoder, fake_data
from fixtures.registries import fixture_registry

import harness
from harness.errors import HarnessError

DOC = REPO / "docs" / "python-api.md"


class HashEncoder:
    """An MTEB-style encoder with the fake plugin's vectors (dim 8), counting its calls."""

    def __init__(self):
        self.calls = 0
        self.adapter = CountingEncoder("same", {})

    def encode(self, texts, **kwargs):
        self.calls += 1
        return self.adapter.encode_texts(texts).tolist()  # a list of lists is fine too


@pytest.fixture
def setup(tmp_path, monkeypatch, fresh_cache):
    monkeypatch.chdir(tmp_path)
    data = fake_data(tmp_path / "data", ["a b", "c d", "e f"], ["x y", "z w", "u v"])
    return fixture_registry("fake"), str(data)


def test_an_encode_object_scores_as_the_equivalent_adapter_and_output_none_writes_nothing(setup, tmp_path):
    registry, data = setup
    encoder = HashEncoder()
    [mine] = harness.evaluate("mean_similarity", encoder, data_dir=data, seed=1, output=None, registry=registry)
    [theirs] = harness.evaluate(
        "mean_similarity", "counting-encoder", data_dir=data, seed=1, output=None, registry=registry
    )
    assert mine.metrics["similarity"] == pytest.approx(theirs.metrics["similarity"])
    assert mine.model["name"] == "HashEncoder" and mine.run["use_cache"] is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "data"]  # no results folder
    harness.evaluate("mean_similarity", encoder, data_dir=data, seed=1, output=None, registry=registry)
    assert encoder.calls == 4  # two languages per run, never answered from the cache


def test_an_adapter_instance_is_used_and_cached(setup):
    registry, data = setup
    CountingEncoder.calls.clear()
    adapter = CountingEncoder("mine", {"dim": 4})
    for _ in range(2):
        [record] = harness.evaluate("mean_similarity", adapter, data_dir=data, seed=0, output=None, registry=registry)
    assert record.model["args"] == {"dim": 4} and CountingEncoder.calls == [3, 3]  # the second run came from the cache


def test_bad_in_memory_models_are_refused(setup):
    registry, data = setup

    class Flat:
        def encode(self, texts, **kwargs):
            return np.zeros(len(texts))

    with pytest.raises(HarnessError, match=r"encode\(\) returned shape \(3,\) for 3 texts"):
        harness.evaluate("mean_similarity", Flat(), data_dir=data, output=None, registry=registry)
    with pytest.raises(HarnessError, match="an object with encode"):
        harness.evaluate("mean_similarity", object(), data_dir=data, output=None, registry=registry)
    with pytest.raises(HarnessError, match="it is not a translation scorer"):
        harness.evaluate("needs_scorer", HashEncoder(), data_dir=data, output=None, registry=registry)
    with pytest.raises(HarnessError, match="need an output folder"):
        harness.evaluate(
            "mean_similarity", HashEncoder(), data_dir=data, output=None, log_samples=True, registry=registry
        )


def test_to_dataframe_rows_and_a_clear_error_without_pandas(setup, monkeypatch):
    registry, data = setup
    records = harness.evaluate(
        "mean_similarity", "counting-encoder", data_dir=data, seeds=2, output=None, registry=registry
    )
    frame = harness.to_dataframe([*records, *[r.to_dict() for r in records]])
    assert list(frame["task"]) == ["mean_similarity"] * 2 and list(frame["seeds"]) == [2, 2]
    assert frame.loc[0, "similarity"] == pytest.approx(records[0].metrics["similarity"])
    assert frame.loc[0, "similarity_std"] == pytest.approx(records[0].metrics_std["similarity"])
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(HarnessError, match="to_dataframe needs pandas"):
        harness.to_dataframe(records)


def test_dir_lists_the_public_api_as_documented():
    public = [name for name in dir(harness) if not name.startswith("_")]
    documented = re.search(r"`dir\(harness\)` lists the public API:\n\n```\n(.*?)```", DOC.read_text(), re.S)[1].split()
    assert public == documented
    for name in public:
        getattr(harness, name)


def test_the_docs_examples_run(tmp_path, monkeypatch, fresh_cache):
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    assert len(blocks) == 5
    namespace: dict = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)
    assert list(tmp_path.iterdir()) in ([], [tmp_path / "cache"])  # output=None wrote nothing here
