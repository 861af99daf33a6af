"""The paired bootstrap on cases with known answers, the statistics, and ``harness compare`` end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from fixtures.plugins.fake import fake_data
from fixtures.registries import fixture_registry
from leaderboard.builders import record, with_samples, write_results
from scipy.stats import pearsonr

from harness.cli import main
from harness.errors import HarnessError
from harness.results.bootstrap import Paired, Statistic, paired_bootstrap
from harness.results.samples import align
from harness.run.runner import evaluate


def mean_pair(a, b, counts=None) -> Paired:
    return Paired(
        "mean",
        np.asarray(a, float),
        np.asarray(b, float),
        np.ones(len(a)) if counts is None else np.asarray(counts, float),
    )


def test_a_model_better_on_every_unit_has_a_degenerate_interval_and_p_zero():
    result = paired_bootstrap(mean_pair([1, 1, 1, 1], [0, 0, 0, 0]), resamples=200)
    assert (result.difference, result.low, result.high, result.p_value) == (1.0, 1.0, 1.0, 0.0)


def test_a_model_against_itself_differs_by_zero_with_p_one():
    scores = np.random.default_rng(1).random(30)
    result = paired_bootstrap(mean_pair(scores, scores), resamples=300)
    assert (result.difference, result.low, result.high, result.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_two_units_with_opposite_differences_resample_to_minus_one_zero_one_at_one_quarter_half_quarter():
    # the difference of a resample is the mean of two draws from {+1, -1}: -1, 0, +1 with probabilities 1/4, 1/2, 1/4
    paired = mean_pair([1, 0], [0, 1])
    inner = paired_bootstrap(paired, resamples=20000, confidence=0.4)  # quantiles 0.3 and 0.7 fall on 0
    outer = paired_bootstrap(paired, resamples=20000, confidence=0.6)  # quantiles 0.2 and 0.8 fall on -1 and +1
    assert (inner.low, inner.high) == (0.0, 0.0) and (outer.low, outer.high) == (-1.0, 1.0)
    assert inner.difference == 0.0 and inner.p_value == 1.0


def test_the_interval_width_matches_the_standard_error_of_a_mean_difference():
    rng = np.random.default_rng(7)
    a, b = rng.random(400), rng.random(400)
    result = paired_bootstrap(mean_pair(a, b), resamples=4000, seed=3, confidence=0.6827)
    standard_error = np.std(a - b) / np.sqrt(len(a))
    assert (result.high - result.low) / 2 == pytest.approx(standard_error, rel=0.1)
    assert result.low < result.difference < result.high


def test_the_resampling_is_seeded():
    rng = np.random.default_rng(0)
    paired = mean_pair(rng.random(50), rng.random(50))
    first, again, other = (paired_bootstrap(paired, resamples=500, seed=seed) for seed in (5, 5, 6))
    assert first == again
    assert (other.low, other.high) != (first.low, first.high) and other.difference == first.difference


def test_pearson_and_auc_statistics_on_the_full_data():
    gold = np.array([0.0, 1.0, 2.0, 3.0, 5.0])
    first, second = np.array([0.1, 0.3, 0.2, 0.9, 1.0]), np.array([1.0, 0.0, 0.5, 0.2, 0.3])
    result = paired_bootstrap(Paired("pearson", first, second, gold), resamples=50)
    assert result.a == pytest.approx(pearsonr(first, gold).statistic) and result.b == pytest.approx(
        pearsonr(second, gold).statistic
    )
    labels = np.array([0.0, 0.0, 1.0, 1.0])
    auc = paired_bootstrap(
        Paired("auc", np.array([0.1, 0.4, 0.35, 0.8]), np.array([0.5, 0.5, 0.5, 0.5]), labels), resamples=50
    )
    assert (auc.a, auc.b) == (0.75, 0.5)  # 3 of 4 (positive, negative) pairs ordered; all ties count half


def test_samples_of_an_id_move_together_and_mismatched_logs_are_refused():
    first = {(0, "x"): (1.0, 0.0), (1, "x"): (1.0, 1.0), (0, "y"): (0.0, 0.0)}
    second = {(0, "x"): (0.0, 0.0), (1, "x"): (1.0, 0.0), (0, "y"): (1.0, 1.0)}
    paired, samples = align(first, second, Statistic("mean", ("ab", "ba")))
    assert samples == 3 and paired.a.tolist() == [3.0, 0.0] and paired.b.tolist() == [1.0, 2.0]
    assert paired.reference.tolist() == [4.0, 2.0]  # two seeds x two fields for x; one seed x two fields for y
    with pytest.raises(HarnessError, match=r"different samples \(0 only in A, 1 only in B\)"):
        align({(0, "x"): (1.0,)}, {(0, "x"): (1.0,), (0, "z"): (0.0,)}, Statistic("mean", ("hit",)))
    with pytest.raises(HarnessError, match="one sample per id"):
        align(first, second, Statistic("pearson", ("ab", "ba")))
    with pytest.raises(HarnessError, match="reference field 'gold' differs"):
        align({(None, "x"): (1.0, 2.0)}, {(None, "x"): (1.0, 3.0)}, Statistic("pearson", ("s", "gold")))


@pytest.mark.parametrize(
    ("text", "message"), [("median:x", "unknown statistic"), ("pearson:x", "two fields"), ("mean:", "one or more")]
)
def test_bad_statistics_are_user_errors(text, message):
    with pytest.raises(HarnessError, match=message):
        Statistic.parse(text)


HITS = {"labse": {0: [1, 1, 0, 1, 1], 1: [1, 0, 1, 1, 1]}, "mbert": {0: [0, 1, 0, 0, 1], 1: [1, 0, 0, 0, 1]}}
IDS = ["a", "b", "c", "d", "e"]


def xlr_with_samples(folder, model: str, args: dict | None = None, samples: bool = True, drop: str | None = None):
    hits = HITS[model]
    item = record(
        "xlr",
        model,
        [float(np.mean(hits[seed])) for seed in (0, 1)],
        args=args or {"src": "en", "tgt": "de", "dataset": "ikea", "k": 10},
    )
    item.metric_info = {
        "recall@k": {"display": "R@10", "higher_is_better": True, "chance": 0.5, "statistic": "mean:hit"}
    }
    if samples:
        rows = [
            {"seed": seed, "id": i, "hit": float(h)} for seed in (0, 1) for i, h in zip(IDS, hits[seed]) if i != drop
        ]
        with_samples(folder, item, rows, f"samples_xlr_{model}.jsonl")
    return item


def test_compare_end_to_end(tmp_path, capsys):
    write_results(tmp_path, [xlr_with_samples(tmp_path, "labse"), xlr_with_samples(tmp_path, "mbert")])
    assert (
        main(["compare", "labse", "mbert", "--task", "xlr", "--results", str(tmp_path), "--json", "--resamples", "500"])
        == 0
    )
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert err == ""  # the samples reproduce the recorded recall: no warning
    assert (result["model_a"], result["model_b"], result["statistic"], result["units"], result["samples"]) == (
        "labse",
        "mbert",
        "mean:hit",
        5,
        10,
    )
    assert result["bootstrap"]["difference"] == pytest.approx(0.8 - 0.4)
    assert result["bootstrap"]["a"] == pytest.approx(result["recorded_a"])
    assert result["bootstrap"]["low"] <= 0.4 <= result["bootstrap"]["high"] and result["bootstrap"]["resamples"] == 500
    assert main(["compare", "labse", "mbert", "--task", "xlr", "--results", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "A - B  +0.4000  95% CI [" in text and "(1000 resamples, seed 0)" in text


@pytest.mark.parametrize(
    ("second", "message"),
    [
        (dict(args={"src": "en", "tgt": "de", "dataset": "ikea", "k": 5}), "same task signature"),
        (dict(samples=False), "run it with --log-samples"),
        (dict(drop="c"), "different samples (0 only in A, 2 only in B)"),
    ],
)
def test_compare_refuses_what_is_not_paired(tmp_path, capsys, second, message):
    write_results(tmp_path, [xlr_with_samples(tmp_path, "mbert", **second), xlr_with_samples(tmp_path, "labse")])
    assert main(["compare", "mbert", "labse", "--task", "xlr", "--results", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_compare_names_the_models_and_tasks_it_knows(tmp_path, capsys):
    write_results(tmp_path, [xlr_with_samples(tmp_path, "labse"), xlr_with_samples(tmp_path, "mbert")])
    assert main(["compare", "labse", "xlmr", "--task", "xlr", "--results", str(tmp_path)]) == 2
    assert "no results of model 'xlmr' on task 'xlr' (models with xlr: labse, mbert)" in capsys.readouterr().err
    assert main(["compare", "labse", "mbert", "--task", "corr", "--results", str(tmp_path)]) == 2
    assert "no results of task 'corr' (tasks found: xlr)" in capsys.readouterr().err


def test_compare_runs_of_the_fixture_plugin_with_a_chosen_statistic(tmp_path, capsys):
    data = fake_data(tmp_path / "data", ["a b", "c d", "e f", "g h"], ["x y", "z w", "u v", "a b"])
    for model in ("counting-encoder", "counting-encoder-dim2"):
        evaluate(
            "mean_similarity",
            model,
            data_dir=str(data),
            output=str(tmp_path / "out"),
            log_samples=True,
            seeds=2,
            registry=fixture_registry(),
        )
    assert (
        main(
            [
                "compare",
                "counting-encoder",
                "counting-encoder-dim2",
                "--task",
                "mean_similarity",
                "--results",
                str(tmp_path / "out"),
                "--statistic",
                "mean:cos",
                "--json",
            ]
        )
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    cos = {}
    for path in sorted((tmp_path / "out").glob("samples_*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        cos[rows[0]["signature"].split("model:")[1].split("@")[0]] = np.mean([row["cos"] for row in rows])
    assert result["bootstrap"]["difference"] == pytest.approx(cos["counting-encoder"] - cos["counting-encoder-dim2"])
    assert (
        main(
            [
                "compare",
                "counting-encoder",
                "counting-encoder-dim2",
                "--task",
                "mean_similarity",
                "--results",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )  # by default, the mean of a 'similarity' field: absent
    assert "no field 'similarity' (choose what to compute with --statistic)" in capsys.readouterr().err


# Every built-in family and the example plugin: ``compare`` takes the statistic from the line's metric_info.
FAMILY_TASKS = [
    ("xlr", "harness_tasks.retrieval.tasks:Xlr"),
    ("backretrieval", "harness_tasks.retrieval.tasks:BackRetrieval"),
    ("corr", "harness_tasks.retrieval.tasks:Corr"),
    *[(f"commute_{kind}", f"harness_tasks.commute.tasks:Commute{kind.upper()}") for kind in ("tc", "ic", "gtc", "gic")],
    ("commute_consistency", "harness_tasks.commute.tasks:CommuteConsistency"),
    ("commute_oracle", "harness_tasks.commute.tasks:CommuteOracle"),
    ("yisi2_sts", "harness_tasks.yisi.tasks:Yisi2Sts"),
    ("bert_sum_sts", "harness_tasks.yisi.tasks:BertSumSts"),
    ("yisi2_filter", "harness_tasks.yisi.tasks:Yisi2Filter"),
    ("bert_sum_filter", "harness_tasks.yisi.tasks:BertSumFilter"),
    ("bitext_mining", "harness_bitext.mining:BitextMining"),
]


def family_samples(statistic: Statistic, quality: float, rng) -> tuple[list[dict], float]:
    """Six items' samples for ``statistic`` (better with ``quality``) and the statistic on them, computed directly."""
    from scipy.stats import spearmanr

    from harness_tasks.retrieval.metrics import rank_moments

    ids = [f"s{i}" for i in range(6)]
    base = np.random.default_rng(0)  # the reference (gold, labels, images) is the same for both models
    if statistic.kind == "mean":
        values = (rng.random((6, len(statistic.fields))) < quality).astype(float)
        return [{"id": i, **dict(zip(statistic.fields, map(float, row)))} for i, row in zip(ids, values)], float(
            values.mean()
        )
    if statistic.kind == "moments":
        image = base.normal(size=(6, 6))
        text = quality * image + rng.normal(size=(6, 6))
        rows = rank_moments(text, image)
        samples = [{"seed": 0, "id": i, **dict(zip(statistic.fields, map(float, row)))} for i, row in zip(ids, rows)]
        return samples, float(spearmanr(text.ravel(), image.ravel()).statistic)
    score, reference = statistic.fields
    gold = np.array([0, 1, 0, 1, 1, 0], dtype=float) if statistic.kind == "auc" else base.normal(size=6)
    scores = quality * gold + rng.normal(size=6)
    if statistic.kind == "auc":
        value = np.mean([(s > t) + 0.5 * (s == t) for s in scores[gold == 1] for t in scores[gold == 0]])
    else:
        value = (pearsonr if statistic.kind == "pearson" else spearmanr)(scores, gold).statistic
    return [{"id": i, score: float(s), reference: float(g)} for i, s, g in zip(ids, scores, gold)], float(value)


@pytest.mark.parametrize(("task", "ref"), FAMILY_TASKS, ids=[t for t, _ in FAMILY_TASKS])
def test_compare_every_family_without_a_statistic(task, ref, tmp_path, capsys):
    import importlib

    from harness.run.task import TaskOutput

    module, _, name = ref.partition(":")
    instance = getattr(importlib.import_module(module), name)(task)
    info = instance.metric_info(TaskOutput([{}], extra={"n_used": 6, "items": 6}))
    main_metric = instance.main_metric
    statistic = Statistic.parse(info[main_metric]["statistic"])
    rng = np.random.default_rng(1)
    lines, values = [], {}
    for model, quality in (
        ("good", 3.0 if statistic.kind != "mean" else 0.9),
        ("poor", 0.0 if statistic.kind != "mean" else 0.3),
    ):
        samples, values[model] = family_samples(statistic, quality, rng)
        item = record(task, model, 0.5)
        item.main_metric, item.metrics, item.metrics_std = main_metric, {main_metric: values[model]}, {main_metric: 0.0}
        item.per_seed, item.metric_info = {main_metric: [values[model]]}, info
        lines.append(with_samples(tmp_path, item, samples, f"samples_{task}_{model}.jsonl"))
    write_results(tmp_path, lines)
    assert (
        main(["compare", "good", "poor", "--task", task, "--results", str(tmp_path), "--json", "--resamples", "200"])
        == 0
    )
    out, err = capsys.readouterr()
    result = json.loads(out)
    assert err == ""  # the samples reproduce the recorded values
    assert result["statistic"] == str(statistic) and result["higher_is_better"] is True
    assert result["bootstrap"]["difference"] == pytest.approx(values["good"] - values["poor"])


def fake_lines(tmp_path, higher_is_better):
    lines = []
    for model, hit in (("a", 0.0), ("b", 1.0)):
        item = record("fake_task", model, hit)
        item.metric_info = {
            "score": {"display": "errors", "higher_is_better": higher_is_better, "statistic": "mean:err"}
        }
        lines.append(
            with_samples(tmp_path, item, [{"id": str(i), "err": hit} for i in range(4)], f"samples_{model}.jsonl")
        )
    write_results(tmp_path, lines)


@pytest.mark.parametrize(
    ("higher", "verdict"),
    [
        (False, "a is better at 95% (lower score is better)"),
        (True, "b is better at 95% (higher score is better)"),
        (None, "A - B is negative at 95% (score has no better direction)"),
    ],
)
def test_the_verdict_follows_the_metric_direction(tmp_path, capsys, higher, verdict):
    fake_lines(tmp_path, higher)
    assert main(["compare", "a", "b", "--task", "fake_task", "--results", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "statistic mean:err" in text and text.strip().splitlines()[-1] == verdict


def test_a_metric_without_a_statistic_asks_for_one(tmp_path, capsys):
    fake_lines(tmp_path, True)
    lines = (tmp_path / "results.jsonl").read_text().replace('"statistic": "mean:err"', '"statistic": null')
    (tmp_path / "results.jsonl").write_text(lines)
    assert main(["compare", "a", "b", "--task", "fake_task", "--results", str(tmp_path)]) == 2
    assert "fake_task's score is not a statistic of per-sample values" in capsys.readouterr().err


def test_compare_runs_on_compact_compressed_samples_alone(tmp_path, capsys):
    # the committed leaderboard's form: results.jsonl and <samples_file>.gz, no full per-sample log
    import gzip

    from harness.results.samples import compact_folder

    full, kept = tmp_path / "full", tmp_path / "kept"
    write_results(full, [xlr_with_samples(full, "labse"), xlr_with_samples(full, "mbert")])
    with_text = {name: (full / name).read_text() for name in ("samples_xlr_labse.jsonl", "samples_xlr_mbert.jsonl")}
    for name, text in with_text.items():  # the full logs also hold what compare does not read
        (full / name).write_text(text.replace('"hit"', '"source": "a long product text", "hit"'))
    written = compact_folder(full, kept)
    assert sorted(p.name for p in kept.iterdir()) == [
        "results.jsonl",
        "samples_xlr_labse.jsonl.gz",
        "samples_xlr_mbert.jsonl.gz",
    ] and written == [kept / "samples_xlr_labse.jsonl.gz", kept / "samples_xlr_mbert.jsonl.gz"]
    lines = gzip.decompress((kept / "samples_xlr_labse.jsonl.gz").read_bytes()).decode().splitlines()
    assert json.loads(lines[0])["compact"] == ["hit"] and json.loads(lines[1]) == {"seed": 0, "id": "a", "hit": 1.0}
    assert len(lines) == 11  # the header and 2 seeds x 5 ids
    first = (kept / "samples_xlr_labse.jsonl.gz").read_bytes()
    compact_folder(full, kept)
    assert (kept / "samples_xlr_labse.jsonl.gz").read_bytes() == first  # no time stamp: the same bytes again
    outputs = []
    for folder in (full, kept):
        command = [
            "compare",
            "labse",
            "mbert",
            "--task",
            "xlr",
            "--results",
            str(folder),
            "--json",
            "--resamples",
            "300",
        ]
        assert main(command) == 0
        out, err = capsys.readouterr()
        assert err == ""
        outputs.append(json.loads(out))
    assert outputs[0] == outputs[1] and outputs[1]["bootstrap"]["difference"] == pytest.approx(0.4)
    # a field the compact log does not keep is named with what it keeps
    command = ["compare", "labse", "mbert", "--task", "xlr", "--results", str(kept), "--statistic", "mean:rank"]
    assert main(command) == 2
    assert "a compact log keeps only the fields of the results line's statistics" in capsys.readouterr().err


def test_a_missing_log_names_the_full_and_the_compact_file(tmp_path, capsys):
    write_results(tmp_path, [xlr_with_samples(tmp_path, "labse"), xlr_with_samples(tmp_path, "mbert")])
    (tmp_path / "samples_xlr_mbert.jsonl").unlink()
    assert main(["compare", "labse", "mbert", "--task", "xlr", "--results", str(tmp_path)]) == 2
    assert "nor its compact 'samples_xlr_mbert.jsonl.gz'" in capsys.readouterr().err


def test_whole_logs_can_be_kept_and_logs_no_line_names_are_removed(tmp_path):
    from harness.results.samples import compact_folder

    full, kept = tmp_path / "full", tmp_path / "kept"
    write_results(full, [xlr_with_samples(full, "labse"), xlr_with_samples(full, "mbert")])
    kept.mkdir()
    (kept / "samples_xlr_old.jsonl.gz").write_bytes(b"")  # a log of an earlier run
    (kept / "notes.md").write_text("kept")
    written = compact_folder(full, kept, compact=False)
    assert sorted(p.name for p in kept.iterdir()) == [
        "notes.md",
        "results.jsonl",
        "samples_xlr_labse.jsonl",
        "samples_xlr_mbert.jsonl",
    ]
    assert written[0].read_text() == (full / "samples_xlr_labse.jsonl").read_text()
    # a role left out keeps no log (its line stays, naming the log it had)
    assert compact_folder(full, kept, without=["xlr"]) == []
    assert sorted(p.name for p in kept.iterdir()) == ["notes.md", "results.jsonl"]


def two_data_sets(folder):
    """labse and mbert on xlr with the same arguments over two data sets (a real folder and a generated one)."""
    lines = []
    for source, revision in (
        ("/data/ikea/en-de", "sha256:aaaa11112222"),
        ("/gen/xling-shapes/en-de", "sha256:bbbb3333"),
    ):
        for model in ("labse", "mbert"):
            item = xlr_with_samples(folder, model, samples=False)
            item.dataset = {**item.dataset, "source": source, "revision": revision}
            rebuilt = record("xlr", model, item.per_seed["recall@k"], args=item.task_args, data_revision=revision)
            rebuilt.dataset, rebuilt.metric_info = item.dataset, item.metric_info
            rows = [{"seed": s, "id": i, "hit": float(h)} for s in (0, 1) for i, h in zip(IDS, HITS[model][s])]
            lines.append(with_samples(folder, rebuilt, rows, f"samples_{model}_{revision[7:11]}.jsonl"))
    write_results(folder, lines)


def test_select_names_the_data_when_two_configurations_differ_only_in_it(tmp_path, capsys):
    # issue 36.8: the candidates were raw signatures, and --select could not name the data
    two_data_sets(tmp_path)
    command = ["compare", "labse", "mbert", "--task", "xlr", "--results", str(tmp_path), "--json", "--select"]
    assert main([*command, "src=en"]) == 2
    assert capsys.readouterr().err == (
        "harness: error: labse and mbert share several xlr configurations; choose one: "
        "--select src=en,data=ikea (data /data/ikea/en-de, 100 items); "
        "--select src=en,data=xling-shapes (data /gen/xling-shapes/en-de, 100 items)\n"
    )  # xlr has an argument named 'dataset': 'data' names the data set
    for name in ("ikea", "xling-shapes", "/gen/xling-shapes/en-de", "xling-shapes/en-de", "bbbb3333", "ikea@bbbb3333"):
        assert main([*command, f"src=en,data={name}"]) == 0, capsys.readouterr().err
        found = json.loads(capsys.readouterr().out)
        assert found["task_signature"].endswith(f"data:ikea@{'aaaa11112222' if name == 'ikea' else 'bbbb3333'}|v:1")
    for both in ("data=en-de", "dataset=ikea", "items=100"):  # both sources end in en-de; the argument; the size
        assert main([*command, both]) == 2 and "choose one" in capsys.readouterr().err
    assert main([*command, "data=elsewhere"]) == 2
    assert "no results of model 'labse' on task 'xlr'" in capsys.readouterr().err


def test_versus_task_names_the_data_of_configurations_that_differ_only_in_it(tmp_path, capsys):
    # issue 36.8's command: one model's TC against its IC, on the real CoMMuTE and on a generated set, both lang=fr
    args = {"lang": "fr", "ties": "wrong", "prefix_removal": False, "temperature": 1.0}
    lines = []
    for source, revision in (
        ("/data/commute/en-fr", "sha256:698bf2945799"),
        ("sets/xling-shapes-commute/en-fr", "sha256:b697"),
    ):
        for task, fields in (("commute_tc", ("tc_ab", "tc_ba")), ("commute_ic", ("ic_ab", "ic_ba"))):
            item = record(task, "gemma", 0.5, args=args, data_revision=revision, size=4)
            item.dataset = {**item.dataset, "loader": "commute", "source": source}
            item.metric_info = {item.main_metric: {"higher_is_better": True, "statistic": f"mean:{','.join(fields)}"}}
            rows = [{"id": str(i), fields[0]: float(i % 2), fields[1]: float(i < 2)} for i in range(4)]
            lines.append(with_samples(tmp_path, item, rows, f"samples_{task}_{revision[7:11]}.jsonl"))
    write_results(tmp_path, lines)
    command = ["compare", "gemma", "--task", "commute_tc", "--versus-task", "commute_ic", "--results", str(tmp_path)]
    assert main([*command, "--select", "lang=fr,prefix_removal=False"]) == 2
    assert capsys.readouterr().err == (
        "harness: error: gemma has several configurations of both commute_tc and commute_ic; choose one: "
        "--select lang=fr,prefix_removal=False,dataset=commute (data /data/commute/en-fr, 4 items); "
        "--select lang=fr,prefix_removal=False,dataset=xling-shapes-commute (data sets/xling-shapes-commute/en-fr, "
        "4 items)\n"
    )
    assert main([*command, "--select", "lang=fr,prefix_removal=False,dataset=xling-shapes-commute", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["task_signature"].endswith("data:ikea@b697|v:1") and found["bootstrap"]["difference"] == 0.0
