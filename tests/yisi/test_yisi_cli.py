"""End to end through the command line: yisi2_filter on Multi30K, yisi2_sts and bert_sum_sts on STS."""

from __future__ import annotations

import json

import pytest
from conftest import shared_data

import harness.plugins.registry
from harness.cli import main
from harness.results.records import read_records
from harness.run.runner import evaluate


@pytest.fixture(autouse=True)
def real_registry(monkeypatch, fresh_cache):
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", None)  # the installed plugins, built afresh


def records(folder):
    found, problems = read_records(folder / "results.jsonl")
    assert problems == []
    return {r.task: r for r in found}


@pytest.mark.real
def test_filter_on_real_multi30k_with_a_tiny_encoder(tiny_encoder, tmp_path, capsys):
    data = shared_data("multi30k")
    code = main(
        [
            "run",
            "--tasks",
            "yisi2_filter",
            "--model",
            str(tiny_encoder),
            "--data-dir",
            str(data),
            "--task-args",
            "src=en,tgt=de",
            "--limit",
            "300",
            "--output",
            str(tmp_path),
            "--log-samples",
        ]
    )
    assert code == 0, capsys.readouterr().err
    record = records(tmp_path)["yisi2_filter"]
    assert record.main_metric == "roc_auc" and 0.0 <= record.metrics["roc_auc"] <= 1.0
    assert 0.0 < record.metrics["mean_f1"] <= 1.0 and 0.0 < record.metrics["mean_f2"] <= 1.0
    assert record.metrics["n_good"] == 150 and record.metrics["n_bad"] == 150
    assert {k: record.model["args"][k] for k in ("pretrained", "revision", "layer")} == {
        "pretrained": str(tiny_encoder),
        "revision": None,
        "layer": 9,
    }
    assert record.dataset["builder"] == "multi30k_filter.v1" and "|corruption_seed:0|" in record.signature
    samples = [json.loads(line) for line in (tmp_path / record.samples_file).read_text().splitlines()]
    assert len(samples) == 300 and samples[0]["id"] == "1:good" and samples[0]["label"] == 1
    assert "yisi2_filter\tROC AUC *" in capsys.readouterr().out


@pytest.mark.real
def test_lexical_overlap_model_scores_above_chance(tmp_path):
    data = shared_data("multi30k")
    (record,) = evaluate(
        "yisi2_filter", "lexical-ngrams", data_dir=str(data), task_args="src=en,tgt=de", output=tmp_path
    )
    # 1000 good and 1000 bad pairs: chance is 0.5 with a standard error of about 0.013
    assert record.metrics["roc_auc"] > 0.6
    assert record.metrics["roc_auc[mismatch]"] > 0.75
    assert record.metrics["roc_auc[clause_drop]"] > 0.55


def test_filter_on_a_local_folder_for_another_language_pair(tiny_encoder, multi30k_dir, tmp_path):
    code = main(
        [
            "run",
            "--tasks",
            "yisi2_filter",
            "--model",
            str(tiny_encoder),
            "--model-args",
            "layer=4",
            "--data-dir",
            str(multi30k_dir),
            "--task-args",
            "src=de,tgt=fr,idf=none,alpha=0.3",
            "--output",
            str(tmp_path),
        ]
    )
    assert code == 0
    record = records(tmp_path)["yisi2_filter"]
    assert record.dataset["size"] == 12 and record.task_args["alpha"] == 0.3 and record.model["args"]["layer"] == 4


def test_sts_tasks_on_a_semeval_folder(tiny_encoder, sts_dir, tmp_path, capsys):
    code = main(
        [
            "run",
            "--tasks",
            "yisi2_sts,bert_sum_sts",
            "--model",
            str(tiny_encoder),
            "--data-dir",
            str(sts_dir),
            "--task-args",
            "src=en,tgt=es",
            "--output",
            str(tmp_path),
            "--log-samples",
        ]
    )
    assert code == 0, capsys.readouterr().err
    found = records(tmp_path)
    for task in ("yisi2_sts", "bert_sum_sts"):
        record = found[task]
        assert record.dataset["size"] == 6 and record.dataset["column_order"] == {
            "multisource": "en-es",
            "news": "es-en",
        }
        assert -1.0 <= record.metrics["pearson"] <= 1.0 and -1.0 <= record.metrics["spearman"] <= 1.0
        assert set(record.metrics) >= {"pearson[news]", "pearson[multisource]"}


def test_lexical_overlap_follows_gold_on_the_small_sts_set(sts_dir, tmp_path):
    # the gold scores of the test pairs fall as their shared names and numbers do
    (record,) = evaluate(
        "yisi2_sts", "lexical-ngrams", data_dir=str(sts_dir), task_args="src=en,tgt=es", output=tmp_path
    )
    assert record.metrics["pearson"] > 0.8 and record.metrics["spearman"] > 0.8


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--tasks", "yisi2_filter", "--model", "lexical-ngrams", "--task-args", "alpha=2"],
            "argument alpha=2.0 must be at most 1.0",
        ),
        (
            ["--tasks", "yisi2_filter", "--model", "tfidf-char"],
            "cannot serve task 'yisi2_filter': it is not a token embedder",
        ),
        (["--tasks", "yisi2_sts", "--model", "lexical-ngrams"], "dataset 'sts_crosslingual' needs --data-dir"),
        (
            ["--tasks", "yisi2_sts", "--model", "lexical-ngrams", "--task-args", "idf=reference"],
            "needs idf_src_file and idf_tgt_file",
        ),
    ],
)
def test_errors_are_one_line(argv, message, tmp_path, capsys):
    assert main(["run", *argv, "--output", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_sts_with_only_empty_gold_lines_exits_2_naming_the_file(tmp_path, capsys):
    from yisi.helpers import STS_PAIRS, write_sts

    folder = write_sts(tmp_path / "sts", {"news": ([(en, es, "") for en, es, _ in STS_PAIRS[:3]], True)})
    code = main(
        [
            "run",
            "--tasks",
            "yisi2_sts",
            "--model",
            "lexical-ngrams",
            "--data-dir",
            str(folder),
            "--output",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{folder / 'STS.gs.news.txt'}, field 'score': no pair has a gold score: all 3 gold lines are empty" in err
    assert not (tmp_path / "out" / "results.jsonl").exists() or (tmp_path / "out" / "results.jsonl").read_text() == ""
