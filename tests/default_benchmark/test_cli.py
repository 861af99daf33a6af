"""End to end: ``harness run --tasks xlr,backretrieval,corr`` with no --data-dir runs on the
built-in benchmark, with the pixel-statistics g or with an --image-model over its images."""

from __future__ import annotations

import pytest
from retrieval.builders import tiny_resnet
from tiny_models import tiny_bert

from harness.cli import main
from harness.results.records import read_records
from harness_tasks.default_benchmark.benchmark import generate, revision
from harness_tasks.default_benchmark.scenes import GENERATOR_VERSION

RUN = ["run", "--tasks", "xlr,backretrieval,corr", "--seeds", "3", "--task-args", "src=en,tgt=fr,n=200"]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    """A random-weight BERT without layers over a tokenizer trained on the captions: a lexical encoder."""
    captions = generate(1000, 0).captions
    return str(tiny_bert(tmp_path_factory.mktemp("bert"), captions["en"] + captions["fr"], layers=0, hidden=128))


def test_run_without_data_dir_evaluates_the_builtin_benchmark(tmp_path, encoder, capsys):
    assert main([*RUN, "--model", encoder, "--model-args", "pooling=mean", "--output", str(tmp_path)]) == 0
    records, problems = read_records(tmp_path / "results.jsonl")
    assert problems == [] and [r.task for r in records] == ["xlr", "backretrieval", "corr"]
    for record in records:
        assert record.dataset == {
            "loader": "xling-shapes",
            "source": "xling-shapes:size=1000,seed=0",
            "revision": revision(1000, 0),
            "split": None,
            "generator": GENERATOR_VERSION,
            "size": 1000,
        }
        assert "data:xling-shapes@" in record.signature and record.seeds == [0, 1, 2]
    xlr, bkr, corr = records
    assert xlr.extra["n_used"] == 200 and bkr.extra == {"n_used": 200, "items": 1000, "g": {"source": "image_features"}}
    assert xlr.metrics["recall@k"] > 1.5 * 10 / 200  # chance is k/n; shared sub-words of English and French lift it
    assert -1 <= corr.metrics["spearman"] <= 1
    assert "xlr" in capsys.readouterr().out


def test_an_image_model_encodes_the_generated_images(tmp_path, encoder):
    resnet = str(tiny_resnet(tmp_path / "resnet"))
    args = [
        "run",
        "--tasks",
        "backretrieval",
        "--seeds",
        "2",
        "--task-args",
        "n=50",
        "--model",
        encoder,
        "--image-model",
        resnet,
        "--output",
        str(tmp_path / "out"),
    ]
    assert main(args) == 0
    (record,) = read_records(tmp_path / "out" / "results.jsonl")[0]
    assert record.extra["g"]["source"] == "image_model" and record.dataset["loader"] == "xling-shapes"
    assert 0 <= record.metrics["recall@k"] <= 1


def test_resume_reruns_a_task_whose_image_model_changed(tmp_path, encoder):
    output = tmp_path / "out"
    base = [
        "run",
        "--tasks",
        "xlr,backretrieval",
        "--seeds",
        "1",
        "--task-args",
        "n=30,size=60",
        "--model",
        encoder,
        "--output",
        str(output),
        "--resume",
    ]
    resnets = [str(tiny_resnet(tmp_path / f"resnet{seed}", seed=seed)) for seed in (0, 1)]
    for resnet in resnets:
        assert main([*base, "--image-model", resnet]) == 0
    records = read_records(output / "results.jsonl")[0]
    assert [r.task for r in records] == ["xlr", "backretrieval", "backretrieval"]  # xlr does not use g: resumed
    first, second = (r for r in records if r.task == "backretrieval")
    assert f"|image:{resnets[0]}@" in first.signature and f"|image:{resnets[1]}@" in second.signature
    assert [r.extra["g"]["model"]["source"] for r in (first, second)] == resnets


def test_size_and_seed_are_task_arguments_once_the_dataset_is_named(tmp_path, encoder):
    args = [
        "run",
        "--tasks",
        "xlr",
        "--seed",
        "3",
        "--model",
        encoder,
        "--output",
        str(tmp_path),
        "--task-args",
        "dataset=xling-shapes,size=60,seed=2,src=en,tgt=cs",
    ]
    assert main(args) == 0
    (record,) = read_records(tmp_path / "results.jsonl")[0]
    assert record.dataset["source"] == "xling-shapes:size=60,seed=2" and record.dataset["revision"] == revision(60, 2)
    assert "|seed:2|size:60|" in record.signature and record.extra["n_used"] == 60
    assert "|seed_list:3|" in record.signature and record.seeds == [3]  # the sampling seed, apart from the generator's


def test_the_fallback_and_the_named_dataset_give_one_signature(tmp_path, encoder):
    records = []
    for name, extra in (("fallback", ""), ("named", ",dataset=xling-shapes")):
        args = [
            "run",
            "--tasks",
            "xlr",
            "--seeds",
            "1",
            "--model",
            encoder,
            "--output",
            str(tmp_path / name),
            "--task-args",
            f"n=30,size=60{extra}",
        ]
        assert main(args) == 0
        records += read_records(tmp_path / name / "results.jsonl")[0]
    fallback, named = records
    assert fallback.signature == named.signature and fallback.task_args == named.task_args
    assert "|dataset:xling-shapes|" in fallback.signature and "split" not in fallback.task_args
