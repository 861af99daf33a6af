"""End to end through the CLI: the real IKEA data with tiny BERTs and the real image features,
``harness meta`` over four differently good encoders, reproducibility, and images through an image model."""

from __future__ import annotations

import json

import pytest
from conftest import shared_data
from retrieval.builders import bert_variants, tiny_resnet, write_images, write_multi30k

from harness.cli import main
from harness.results.records import read_records

# Random-weight BERTs differ in how much of the shared vocabulary (names, numbers) survives:
# no layers and wide embeddings keep it best; layers and CLS pooling blur it.
ENCODERS = {
    "wide": ({"layers": 0, "hidden": 256}, "pooling=mean"),
    "narrow": ({"layers": 0, "hidden": 16}, "pooling=mean"),
    "deep": ({"layers": 2, "hidden": 32}, "pooling=mean"),
    "deep-cls": ({"layers": 2, "hidden": 32}, "pooling=cls"),
}
RUN = ["run", "--tasks", "xlr,backretrieval,corr", "--task-args", "src=en,tgt=de"]


@pytest.fixture(scope="module")
def ikea():
    return str(shared_data("ikea"))


@pytest.fixture(scope="module")
def models(tmp_path_factory, ikea):
    from pathlib import Path

    texts = [line for name in ("test.en", "test.de") for line in (Path(ikea) / "en.de" / name).read_text().splitlines()]
    specs = {name: spec for name, (spec, _) in ENCODERS.items() if name != "deep-cls"}
    folders = bert_variants(tmp_path_factory.mktemp("berts"), texts, specs)
    return {name: (str(folders[name.removesuffix("-cls")]), args) for name, (_, args) in ENCODERS.items()}


@pytest.fixture(scope="module")
def four_models(tmp_path_factory, ikea, models):
    """One results folder with xlr, backretrieval and corr (25 seeds) for each of the four encoders."""
    output = tmp_path_factory.mktemp("results")
    for folder, args in models.values():
        assert main([*RUN, "--model", folder, "--model-args", args, "--data-dir", ikea, "--output", str(output)]) == 0
    return output


def test_run_writes_per_seed_results(four_models):
    records, problems = read_records(four_models / "results.jsonl")
    assert problems == [] and len(records) == 12
    for record in records:
        seeds = [0] if record.task == "xlr" else list(range(25))  # xlr with n >= items: the seeds could not differ
        assert record.seeds == seeds and len(record.per_seed[record.main_metric]) == len(seeds)
        assert (
            record.dataset["loader"] == "ikea" and record.dataset["size"] == 367 and record.dataset["split"] == "test"
        )
    bkr = [r for r in records if r.task == "backretrieval"]
    assert all(r.extra["n_used"] == 183 and r.extra["g"] == {"source": "image_features"} for r in bkr)
    xlr = sorted(r.metrics["recall@k"] for r in records if r.task == "xlr")
    assert xlr[-1] - xlr[0] > 0.1  # differently good encoders
    assert {"recall@k", "mrr", "median_rank"} <= set(records[0].metrics)


def test_meta_writes_table_json_and_plot(four_models, tmp_path, capsys):
    assert main(["meta", str(four_models), "--output", str(tmp_path / "meta")]) == 0
    table = capsys.readouterr().out
    assert "Pearson r" in table and "backretrieval" in table and "wide(pooling=mean)" not in table
    result = json.loads((tmp_path / "meta" / "meta.json").read_text())
    assert len(result["models"]) == 4 and result["direction"] == "en-de" and len(result["seeds"]) == 25
    for task in ("backretrieval", "corr"):
        for kind in ("pearson", "spearman"):
            summary = result["correlations"][task][kind]
            assert len(summary["per_seed"]) == 25 and -1 <= summary["mean"] <= 1 and summary["std"] >= 0
    assert (tmp_path / "meta" / "xlr_vs_backretrieval.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_meta_refuses_results_that_are_not_comparable(four_models, models, ikea, tmp_path, capsys):
    folder, args = models["wide"]
    other = tmp_path / "k5"
    assert (
        main(
            [
                *RUN[:-1],
                "src=en,tgt=de,k=5",
                "--model",
                folder,
                "--model-args",
                args,
                "--data-dir",
                ikea,
                "--output",
                str(other),
            ]
        )
        == 0
    )
    assert main(["meta", str(four_models), str(other), "--output", str(tmp_path / "meta")]) == 2
    assert "not comparable across models" in capsys.readouterr().err
    assert main(["meta", str(four_models), str(other), "--select", "k=10", "--output", str(tmp_path / "meta")]) == 0
    assert main(["meta", str(other), "--output", str(tmp_path / "meta")]) == 2
    assert "at least 3 models" in capsys.readouterr().err


def test_same_seed_same_numbers_and_batch_size_does_not_matter(models, ikea, tmp_path):
    folder, args = models["narrow"]

    def run(name, batch_size):
        command = [
            "run",
            "--tasks",
            "xlr,backretrieval",
            "--task-args",
            "src=en,tgt=de,n=100",
            "--model",
            folder,
            "--model-args",
            args,
            "--data-dir",
            ikea,
            "--seed",
            "3",
            "--no-cache",
            "--batch-size",
            str(batch_size),
            "--output",
            str(tmp_path / name),
        ]
        assert main(command) == 0
        return {r.task: r.per_seed for r in read_records(tmp_path / name / "results.jsonl")[0]}

    first, again = run("a", 8), run("b", 8)
    assert first == again
    # nothing is padded (a batch holds texts of one length), so the numbers are equal, not merely close (issue 29)
    assert run("c", 1) == first and run("d", 3) == first


def test_image_model_gives_g_from_images(models, tmp_path, capsys):
    names = write_images(tmp_path / "flickr", 6)
    data = write_multi30k(tmp_path / "m30k", images=names)
    resnet = tiny_resnet(tmp_path / "resnet")
    folder, _ = models["deep"]
    base = [
        "run",
        "--tasks",
        "backretrieval,corr",
        "--task-args",
        "dataset=multi30k,src=en,tgt=de,k=1",
        "--model",
        folder,
        "--data-dir",
        str(data),
        "--image-model",
        str(resnet),
        "--output",
        str(tmp_path / "out"),
        "--log-samples",
    ]
    assert main([*base, "--images", str(tmp_path / "flickr")]) == 0
    records = read_records(tmp_path / "out" / "results.jsonl")[0]
    assert [r.task for r in records] == ["backretrieval", "corr"]
    assert records[0].extra["g"]["source"] == "image_model" and records[0].extra["g"]["model"]["source"] == str(resnet)
    assert records[0].dataset["split"] == "test_2016_flickr" and records[0].extra["n_used"] == 3
    samples = [json.loads(line) for line in (tmp_path / "out" / records[0].samples_file).read_text().splitlines()]
    assert len(samples) == 25 * 3 and {"seed", "id", "retrieved", "hit"} <= samples[0].keys()
    assert main(base) == 2
    assert "needs images" in capsys.readouterr().err
