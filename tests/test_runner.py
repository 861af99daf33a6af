"""harness.evaluate end to end with the fixture plugin: results, cache, resume, errors."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
from fixtures.plugins.fake import CountingEncoder, fake_data
from fixtures.registries import fixture_registry

from harness.errors import CapabilityError, DataError, HarnessError, UnknownNameError
from harness.results.records import read_records
from harness.run.runner import Skipped, aggregate, evaluate

A = ["the cat", "a dog", "the bird", "one fish"]
B = ["le chat", "un chien", "l'oiseau", "un poisson"]


@pytest.fixture
def registry():
    return fixture_registry()


@pytest.fixture
def data_dir(tmp_path):
    return str(fake_data(tmp_path / "data", A, B))


@pytest.fixture(autouse=True)
def _reset_counters(fresh_cache):
    CountingEncoder.calls.clear()
    CountingEncoder.loads.clear()


def run(registry, data_dir, output, **kwargs):
    return evaluate(
        "mean_similarity", "counting-encoder", data_dir=data_dir, output=output, registry=registry, **kwargs
    )


def test_results_line_is_complete_and_valid(registry, data_dir, tmp_path):
    run(registry, data_dir, tmp_path / "out", seeds=3)
    records, problems = read_records(tmp_path / "out" / "results.jsonl")
    assert problems == [] and len(records) == 1
    saved = records[0]
    assert saved.seeds == [0, 1, 2] and len(saved.per_seed["similarity"]) == 3
    values = saved.per_seed["similarity"]
    assert saved.metrics["similarity"] == pytest.approx(sum(values) / 3)
    assert saved.metrics_std["similarity"] == pytest.approx(float(np.std(values, ddof=1)))
    assert saved.task_version == 1 and saved.dataset["size"] == 4 and saved.dataset["loader"] == "line_pairs"
    assert saved.dataset["revision"].startswith("sha256:")
    assert saved.model["name"] == "counting-encoder" and saved.model["args"] == {"dim": 8}
    assert saved.signature.startswith("mean_similarity|scale:1.0|side_a:a|skip:0|items:4|seeds:3|data:line_pairs@")
    assert "|model:counting-encoder@" in saved.signature and saved.signature.endswith("|v:1")
    assert saved.environment["numpy"] and saved.harness["version"] and saved.hardware["device"] == "cpu"
    assert saved.wall_seconds >= 0 and saved.started


def test_second_identical_run_does_no_inference_and_resume_skips(registry, data_dir, tmp_path):
    first = run(registry, data_dir, tmp_path / "out")
    assert sum(CountingEncoder.calls) == 8 and CountingEncoder.loads == ["counting-encoder"]
    CountingEncoder.calls.clear()
    CountingEncoder.loads.clear()
    second = run(registry, data_dir, tmp_path / "out2")
    assert CountingEncoder.calls == [] and CountingEncoder.loads == []  # served from the cache, weights never loaded
    assert second[0].metrics == first[0].metrics
    resumed = run(registry, data_dir, tmp_path / "out", resume=True)
    assert isinstance(resumed[0], Skipped) and resumed[0].signature == first[0].signature
    assert len(read_records(tmp_path / "out" / "results.jsonl")[0]) == 1


def test_no_cache_calls_the_model_again(registry, data_dir, tmp_path):
    run(registry, data_dir, tmp_path / "out")
    CountingEncoder.calls.clear()
    run(registry, data_dir, tmp_path / "out", use_cache=False)
    assert sum(CountingEncoder.calls) == 8


def test_changed_input_or_args_miss_the_cache(registry, data_dir, tmp_path):
    run(registry, data_dir, tmp_path / "out")
    CountingEncoder.calls.clear()
    run(registry, data_dir, tmp_path / "out", model_args="dim=4")
    assert sum(CountingEncoder.calls) == 8  # other adapter arguments: other identity
    CountingEncoder.calls.clear()
    fake_data(tmp_path / "data", [*A[:3], "one fish!"], B)
    run(registry, data_dir, tmp_path / "out")
    assert CountingEncoder.calls == [1]  # only the changed text


def test_duplicate_inputs_are_encoded_once(registry, tmp_path):
    folder = fake_data(tmp_path / "dup", ["same", "same", "other"], ["x", "x", "x"])
    run(registry, str(folder), tmp_path / "out")
    assert sorted(CountingEncoder.calls) == [1, 2]


def test_seed_and_preset(registry, data_dir, tmp_path):
    (record,) = evaluate(
        "mean_similarity", "counting-encoder-dim2", data_dir=data_dir, output=tmp_path, seed=7, registry=registry
    )
    assert record.seeds == [7] and record.model["args"] == {"dim": 2} and "|seed_list:7|" in record.signature
    assert record.metrics_std["similarity"] == 0.0


def test_limit_and_log_samples(registry, data_dir, tmp_path):
    (record,) = run(registry, data_dir, tmp_path, limit=2, log_samples=True)
    assert record.dataset["size"] == 2
    rows = [json.loads(line) for line in (tmp_path / record.samples_file).read_text().splitlines()]
    assert [r["id"] for r in rows] == ["0", "1"] and all(r["signature"] == record.signature for r in rows)


def test_limit_keeps_a_run_apart_from_full_runs_and_warns(registry, data_dir, tmp_path):
    (full,) = run(registry, data_dir, tmp_path)
    (limited,) = run(registry, data_dir, tmp_path, limit=2)
    assert "|limit:" not in full.signature and full.warnings == []
    assert limited.task_signature == full.task_signature.replace("|scale:1.0|", "|limit:2|scale:1.0|").replace(
        "items:4", "items:2"
    )
    assert limited.warnings == [
        "mean_similarity: --limit 2: 2 items evaluated (not comparable with a run on the full data; "
        "'limit:2' is in the signature)"
    ]
    assert limited.run["limit"] == 2 and limited.task_args == full.task_args  # the task's own arguments are unchanged


def test_a_task_without_metric_declarations_gets_no_metadata_nor_intervals(registry, data_dir, tmp_path):
    (record,) = run(registry, data_dir, tmp_path, seeds=2)
    assert record.metric_info == {} and record.intervals == {} and record.run["resamples"] == 1000


def test_task_args_reach_task_and_loader(registry, tmp_path):
    folder = fake_data(tmp_path / "d", A, B)
    (folder / "c.txt").write_text("\n".join(A) + "\n")
    (record,) = run(registry, str(folder), tmp_path / "o", task_args="side_a=c,scale=2")
    assert record.task_args == {"side_a": "c", "scale": 2.0, "skip": 0}
    (base,) = run(registry, str(folder), tmp_path / "o")
    assert record.metrics["similarity"] == pytest.approx(2 * base.metrics["similarity"])


def test_loader_only_arguments_reach_the_loader_and_the_signature(registry, data_dir, tmp_path):
    (record,) = run(registry, data_dir, tmp_path, task_args="skip=1")
    assert record.dataset["size"] == 3 and record.task_args["skip"] == 1 and "|skip:1|" in record.signature
    (default,) = run(registry, data_dir, tmp_path / "d")
    assert default.task_args["skip"] == 0 and default.signature != record.signature


def test_capability_mismatch_is_caught_before_loading(registry, data_dir, tmp_path):
    with pytest.raises(
        CapabilityError,
        match="model 'counting-encoder' cannot serve task 'needs_scorer': it is not a translation scorer",
    ):
        evaluate("needs_scorer", "counting-encoder", data_dir=data_dir, output=tmp_path, registry=registry)
    assert CountingEncoder.loads == []


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"task_args": "scale"}, HarnessError, "malformed --task-args 'scale'"),
        ({"task_args": "scal=2"}, UnknownNameError, "did you mean 'scale'"),
        ({"task_args": "scale=big"}, HarnessError, "scale='big' is not a valid float"),
        ({"model_args": "dim=8,dim=9"}, HarnessError, "'dim' is given twice"),
        ({"model_args": "dims=4"}, UnknownNameError, "did you mean 'dim'"),
        ({"seeds": 0}, HarnessError, "--seeds must be at least 1"),
        ({"limit": 0}, HarnessError, "--limit must be at least 1"),
        ({"resamples": -1}, HarnessError, "--resamples must be at least 0, got -1"),
    ],
)
def test_bad_arguments(registry, data_dir, tmp_path, kwargs, error, text):
    with pytest.raises(error, match=text):
        run(registry, data_dir, tmp_path, **kwargs)


def test_unknown_task_and_model_names(registry, data_dir, tmp_path):
    with pytest.raises(UnknownNameError, match="did you mean 'mean_similarity'"):
        evaluate("mean_similarit", "counting-encoder", data_dir=data_dir, output=tmp_path, registry=registry)
    with pytest.raises(UnknownNameError, match="did you mean 'counting-encoder'"):
        evaluate("mean_similarity", "counting-encodr", data_dir=data_dir, output=tmp_path, registry=registry)


def test_missing_and_misaligned_data(registry, tmp_path):
    with pytest.raises(HarnessError, match="does not exist"):
        run(registry, str(tmp_path / "nowhere"), tmp_path)
    folder = fake_data(tmp_path / "bad", A, B[:3])
    with pytest.raises(DataError) as info:
        run(registry, str(folder), tmp_path)
    assert "a.txt has 4 lines" in str(info.value) and "b.txt has 3 lines" in str(info.value)
    folder = fake_data(tmp_path / "empty", A, ["x", " ", "y", "z"])
    with pytest.raises(DataError, match=r"b.txt, row 2, field 'b': empty text"):
        run(registry, str(folder), tmp_path)


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output_folder_non_root(registry, data_dir, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    with pytest.raises(HarnessError, match="is not writable"):
        run(registry, data_dir, locked / "out")


def test_output_folder_that_is_a_file(registry, data_dir, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(HarnessError, match=r"output folder .* is not writable"):
        run(registry, data_dir, blocker / "out")
    assert CountingEncoder.calls == []  # checked before any work


def test_aggregate_by_hand():
    means, stds, series = aggregate([{"a": 1.0, "b": float("nan")}, {"a": 3.0, "b": 2.0}, {"a": 5.0}])
    assert means == {"a": 3.0, "b": 2.0}
    assert stds["a"] == pytest.approx(2.0) and stds["b"] == 0.0
    assert series == {"a": [1.0, 3.0, 5.0], "b": [None, 2.0, None]}
    means, stds, _ = aggregate([{"a": float("nan")}])
    assert means == {"a": None} and stds == {"a": None}
    assert math.isclose(aggregate([{"a": 0.25}])[0]["a"], 0.25)
