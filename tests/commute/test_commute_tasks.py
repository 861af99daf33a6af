"""The CoMMuTE tasks and commands: hand-checked with fake scorers, end to end with tiny real models."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from commute.fakes import CharScorer, RedScorer, TextOnlyCharScorer, run_task, solid_images
from commute.mmt_builders import stand_in_images, write_commute
from conftest import shared_data
from PIL import Image

from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import ScoreRequest
from harness.cli import main
from harness.errors import HarnessError
from harness.results.records import read_records
from harness.run.runner import evaluate
from harness_models.translation.vgamt import VgamtScorer
from harness_tasks.commute.data import CommuteExtendedLoader, CommuteLoader
from harness_tasks.commute.sweep import parse_temperatures
from harness_tasks.commute.tasks import CommuteConsistency, CommuteIC, CommuteOracle, CommuteTC

FOUR = "commute_tc,commute_ic,commute_gtc,commute_gic"


@pytest.mark.parametrize(("scorer", "asked"), [(CharScorer, 2), (TextOnlyCharScorer, 1)])
def test_a_text_only_scorer_is_asked_once_per_source_and_target(scorer, asked):
    images = [Image.new("RGB", (4, 4), (value, 0, 0)) for value in (0, 255)]
    requests = [ScoreRequest("s", "cat", image, f"image{i}", "en", "fr") for i, image in enumerate(images)]
    CharScorer.calls.clear()
    first, second = CachedModel(scorer("x"), cache=None).score_translations(requests)
    assert [call["n"] for call in CharScorer.calls] == [asked]
    np.testing.assert_array_equal(first, second)


PREFIXED = [("s", "aaaaZ", "aaaaY", "a.png"), ("s", "aaaaY", "aaaaZ", "b.png")]  # costs: a 0.7, Y 0.9, Z 0.0


def test_prefix_removal_drops_the_shared_token_prefix(tmp_path):
    data = CommuteLoader("commute").load(str(write_commute(tmp_path, PREFIXED)), {"lang": "fr"}).data
    plain = run_task(CommuteTC("commute_tc"), data, CharScorer("c")).samples[0]["ppl"]
    assert plain["a|a"] == pytest.approx(math.exp((4 * 0.7 + 0.0) / 5))
    assert plain["a|inc_a"] == pytest.approx(math.exp((4 * 0.7 + 0.9) / 5))
    CharScorer.calls.clear()
    trimmed = run_task(CommuteTC("commute_tc", {"prefix_removal": True}), data, CharScorer("c")).samples[0]["ppl"]
    assert trimmed["a|a"] == pytest.approx(math.exp(0.0)) and trimmed["a|inc_a"] == pytest.approx(math.exp(0.9))
    assert {"n": 2, "temperature": 1.0, "output": "token_ids"} in CharScorer.calls


def test_prefix_removal_that_leaves_nothing_is_an_error(tmp_path):
    lines = [("s", "ab", "abc", "a.png"), ("s", "abc", "ab", "b.png")]
    data = CommuteLoader("commute").load(str(write_commute(tmp_path, lines)), {"lang": "fr"}).data
    with pytest.raises(HarnessError, match="no target tokens left"):
        run_task(CommuteTC("commute_tc", {"prefix_removal": True}), data, CharScorer("c"))


def test_temperature_reaches_the_scorer_only_when_not_one(tmp_path):
    data = CommuteLoader("commute").load(str(write_commute(tmp_path, PREFIXED)), {"lang": "fr"}).data
    CharScorer.calls.clear()
    hot = run_task(CommuteTC("commute_tc", {"temperature": 2.0}), data, CharScorer("c")).samples[0]["ppl"]
    assert hot["a|a"] == pytest.approx(math.exp(0.56 / 2)) and CharScorer.calls[-1]["temperature"] == 2.0
    plain = run_task(CommuteTC("commute_tc", {"temperature": 1.0}), data, CharScorer("c"))
    assert CharScorer.calls[-1]["temperature"] == 1.0 and plain.samples[0]["ppl"]["a|a"] == pytest.approx(
        math.exp(0.56)
    )


@pytest.mark.parametrize("given", [0, -1, "0", "-1.0"])
def test_a_temperature_not_above_zero_is_refused_naming_the_argument(given):
    """The bound is exclusive: 0 itself is refused (a division by zero), with the task, argument, value and bound."""
    value = float(given)
    with pytest.raises(HarnessError) as error:
        CommuteTC("commute_tc", {"temperature": given})
    assert str(error.value) == f"task 'commute_tc': argument temperature={value!r} must be greater than 0.0"


def test_a_small_positive_temperature_is_accepted():
    assert CommuteTC("commute_tc", {"temperature": "0.01"}).settings.temperature == 0.01


def test_tc_task_decisions_and_ties_by_hand(tmp_path):
    """aaaaZ (0.56) beats aaaaY (0.74): TC^{a,b} = 1, TC^{b,a} = 0; the images are ignored."""
    data = CommuteLoader("commute").load(str(write_commute(tmp_path, PREFIXED)), {"lang": "fr"}).data
    out = run_task(CommuteTC("commute_tc"), data, CharScorer("c"))
    assert out.per_seed == [{"tc": 0.5, "ties": 0.0}]
    assert (out.samples[0]["tc_ab"], out.samples[0]["tc_ba"], out.samples[0]["gtc"]) == (1, 0, 0)
    assert out.samples[0]["id"] == "1" and out.samples[0]["lines"] == [1, 2] and out.samples[0]["image_b"] == "b.png"


def test_ic_task_needs_images(mini_commute):
    data = CommuteLoader("commute").load(str(mini_commute[0]), {"lang": "fr"}).data
    with pytest.raises(HarnessError, match="'commute_ic' compares images: pass --images"):
        run_task(CommuteIC("commute_ic"), data, CharScorer("c"))


def test_ic_and_consistency_with_the_red_scorer_by_hand(tmp_path):
    lines = [
        ("s", "x#10", "y#200", "a.png"),
        ("s", "y#200", "x#10", "b.png"),
        ("t", "x#100", "y#150", "c.png"),
        ("t", "y#150", "x#100", "d.png"),
    ]
    data_dir = write_commute(tmp_path / "data", lines)
    images = solid_images(tmp_path / "images", {"a.png": 20, "b.png": 190, "c.png": 160, "d.png": 140})
    data = CommuteLoader("commute").load(str(data_dir), {"lang": "fr"}, images_dir=str(images)).data
    ic = run_task(CommuteIC("commute_ic"), data, RedScorer("r"))
    # tuple 1: |20-10| < |190-10| and |190-200| < |20-200| -> (1, 1); tuple 2: |160-100| > |140-100| -> 0,
    # |140-150| < |160-150|? 10 < 10 is a tie -> 0 (ties wrong)
    assert [(s["ic_ab"], s["ic_ba"]) for s in ic.samples] == [(1, 1), (0, 0)]
    assert ic.per_seed == [{"ic": 0.5, "ties": 0.25}]
    rates = run_task(CommuteConsistency("commute_consistency"), data, RedScorer("r")).per_seed[0]
    # mixes: red 105 and 150. Baseline TC: t1 |105-10|=95 < |105-200|=95? tie -> (0, 0); t2: 50 vs 0 -> (0, 1)
    # true images TC: t1 (1, 1); t2 c=160: 60 vs 10 -> 0; d=140: 10 vs 40 -> 1 -> (0, 1)
    assert rates == {"ipr": 0.5, "inr": 0.0, "cpr": 0.25, "cnr": 0.25, "tc": 0.75, "tc_mix": 0.25}


def test_oracle_task_by_hand(tmp_path):
    lines = [("s", "x#0", "y#100", "a.png"), ("s", "y#100", "x#0", "b.png")]
    data_dir = write_commute(tmp_path / "data", lines)
    # candidates for t^a (prefers red 0): a.png 60 (original), a1 10, a2 90; for t^b (prefers 100): b.png 40, b1 95
    images = solid_images(
        tmp_path / "images",
        {"a.png": 60, "b.png": 40, "extended/1/a/a1.png": 10, "extended/1/a/a2.png": 90, "extended/1/b/b1.png": 95},
    )
    data = CommuteExtendedLoader("commute_extended").load(str(data_dir), {"lang": "fr"}, images_dir=str(images)).data
    out = run_task(CommuteOracle("commute_oracle"), data, RedScorer("r"))
    chosen = out.samples[0]["chosen"]
    # max: GIC-1 pairs minimise D = (|r_a| - |r_b|) + (|r_b - 100| - |r_a - 100|) / 100 (P = exp(.)); a1 & b1 best
    assert Path(chosen["max"]["image_a"]).name == "a1.png" and Path(chosen["max"]["image_b"]).name == "b1.png"
    # min: (a2 = 90, b = 40): |90| > |40| and |40-100| > |90-100| -> GIC 0 with the largest D
    assert Path(chosen["min"]["image_a"]).name == "a2.png" and Path(chosen["min"]["image_b"]).name == "b.png"
    metrics = out.per_seed[0]
    assert (metrics["max_ic"], metrics["max_gic"], metrics["min_ic"], metrics["min_gic"]) == (1.0, 1.0, 0.0, 0.0)
    assert (metrics["rr_max"], metrics["rr_min"]) == (1.0, 0.5)
    # TC at the max images: a1=10: |10-0| < |10-100|; b1=95: |95-100| < |95-0| -> both right
    # at the min images: a2=90: |90-0| > |90-100|; b=40: |40-100| > |40-0| -> both wrong
    assert (metrics["max_tc"], metrics["max_gtc"], metrics["min_tc"], metrics["min_gtc"]) == (1.0, 1.0, 0.0, 0.0)


@pytest.fixture(scope="module")
def fr_images(tmp_path_factory):
    names = (shared_data("commute", "en-fr") / "img.order").read_text().split()
    return stand_in_images(tmp_path_factory.mktemp("fr-images"), names, size=12)


@pytest.mark.real
def test_the_four_tasks_run_from_the_cli_with_a_vgamt_folder(vgamt_dir, fr_images, tmp_path, fresh_cache):
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--tasks",
            FOUR,
            "--model",
            str(vgamt_dir),
            "--data-dir",
            str(shared_data("commute")),
            "--task-args",
            "lang=fr",
            "--images",
            str(fr_images),
            "--output",
            str(out),
            "--log-samples",
        ]
    )
    assert code == 0
    records, problems = read_records(out / "results.jsonl")
    assert problems == [] and [r.task for r in records] == FOUR.split(",")
    for record in records:
        value = record.metrics[record.main_metric]
        assert 0.0 <= value <= 1.0 and record.dataset["size"] == 154
        assert "|ties:wrong|" in record.signature and "|lang:fr|" in record.signature
        assert record.model["adapter"].endswith("vgamt:VgamtScorer")
        samples = [json.loads(line) for line in (out / record.samples_file).read_text().splitlines()]
        assert len(samples) == 154 and samples[11]["lines"] == [23, 24]
    by_task = {r.task: r.metrics for r in records}
    assert (
        by_task["commute_gtc"]["gtc"] <= by_task["commute_tc"]["tc"]
        and by_task["commute_gic"]["gic"] <= by_task["commute_ic"]["ic"]
    )


def test_running_the_four_tasks_scores_each_triple_once(vgamt_dir, mini_commute, tmp_path, fresh_cache, monkeypatch):
    scored: list[tuple] = []
    original = VgamtScorer.logprobs

    def counting(self, requests, temperature):
        scored.extend((r.source, r.target, r.image_key) for r in requests)
        return original(self, requests, temperature)

    monkeypatch.setattr(VgamtScorer, "logprobs", counting)
    data_dir, images = mini_commute
    evaluate(FOUR, str(vgamt_dir), data_dir=str(data_dir), images=str(images), output=tmp_path / "a")
    # per tuple: images a, b x translations t^a, t^b; tuple 2's incorrect line for a is not t^b: one more
    assert len(scored) == len(set(scored)) == 3 * 4 + 1
    scored.clear()
    again = evaluate(FOUR, str(vgamt_dir), data_dir=str(data_dir), images=str(images), output=tmp_path / "b")
    assert scored == [] and len(again) == 4


@pytest.mark.real
@pytest.mark.parametrize("lang", ["de", "cs"])
def test_text_only_tc_is_exactly_one_half_on_real_commute(mbart_dir, lang, tmp_path):
    (record,) = evaluate(
        "commute_tc", str(mbart_dir), data_dir=str(shared_data("commute")), task_args={"lang": lang}, output=tmp_path
    )
    assert record.metrics == {"tc": 0.5, "ties": 0.0} and record.model["adapter"].endswith("seq2seq:Seq2SeqScorer")


def test_text_only_ic_is_all_ties_and_undefined(mbart_dir, mini_commute, tmp_path):
    data_dir, images = mini_commute
    wrong, right = (
        evaluate(
            "commute_ic",
            str(mbart_dir),
            data_dir=str(data_dir),
            images=str(images),
            task_args={"ties": ties},
            output=tmp_path / ties,
        )[0]
        for ties in ("wrong", "right")
    )
    assert wrong.metrics == {"ic": None, "ties": 1.0} and right.metrics == {"ic": None, "ties": 1.0}
    assert "section 5.4" in wrong.undefined["ic"] and "|ties:right|" in right.signature


@pytest.mark.real
def test_consistency_identities_on_real_german(vgamt_dir, tmp_path):
    names = (shared_data("commute", "en-de") / "img.order").read_text().split()
    images = stand_in_images(tmp_path / "images", names, size=12)
    rows = CommuteLoader("commute").load(str(shared_data("commute")), {"lang": "de"}).data.select(range(40)).to_list()
    assert all(r["incorrect_a"] == r["target_b"] and r["incorrect_b"] == r["target_a"] for r in rows)  # exact swaps
    (record,) = evaluate(
        "commute_consistency",
        str(vgamt_dir),
        data_dir=str(shared_data("commute")),
        images=str(images),
        task_args={"lang": "de"},
        limit=40,
        output=tmp_path / "out",
    )
    m = record.metrics
    assert m["ipr"] + m["cnr"] == pytest.approx(0.5) and m["inr"] + m["cpr"] == pytest.approx(0.5)
    assert m["cpr"] + m["ipr"] == pytest.approx(m["tc"]) and sum(
        m[k] for k in ("ipr", "inr", "cpr", "cnr")
    ) == pytest.approx(1)


def test_failure_iou_command_from_two_runs(vgamt_dir, cliptrans_dir, mini_commute, tmp_path, capsys):
    data_dir, images = mini_commute
    for name, model in (("vgamt", vgamt_dir), ("cliptrans", cliptrans_dir)):  # two scorers that use the image
        evaluate(
            "commute_tc,commute_ic",
            str(model),
            data_dir=str(data_dir),
            images=str(images),
            output=tmp_path / name,
            log_samples=True,
        )
    capsys.readouterr()
    assert main(["commute-iou", str(tmp_path / "vgamt"), str(tmp_path / "cliptrans"), "--task", "commute_ic"]) == 0
    table = capsys.readouterr().out.strip().splitlines()
    assert table[0].startswith("| metric |") and table[2].startswith("| IC |")

    def failures(folder):
        record = [r for r in read_records(folder / "results.jsonl")[0] if r.task == "commute_ic"][-1]
        samples = [json.loads(line) for line in (folder / record.samples_file).read_text().splitlines()]
        return {(s["id"], d) for s in samples for d in ("ab", "ba") if s[f"ic_{d}"] == 0}

    first, second = failures(tmp_path / "vgamt"), failures(tmp_path / "cliptrans")
    union = first | second
    expected = "n/a" if not union else f"{len(first & second) / len(union):.4f}"
    assert table[2].endswith(f"| {expected} |")
    assert f"| {len(first)} | {len(second)} | {len(first & second)} | {len(union)} |" in table[2]
    assert main(["commute-iou", str(tmp_path / "vgamt"), str(tmp_path / "vgamt")]) == 0  # latest record: commute_ic
    assert "| 1.0000 |" in capsys.readouterr().out or not first


def test_failure_iou_command_errors(tmp_path, capsys):
    (tmp_path / "x.jsonl").write_text('{"id": "1", "score": 1}\n')
    assert main(["commute-iou", str(tmp_path / "x.jsonl"), str(tmp_path / "x.jsonl")]) == 2
    assert "has no TC or IC decisions" in capsys.readouterr().err
    (tmp_path / "a.jsonl").write_text('{"id": "1", "tc_ab": 1, "tc_ba": 0}\n')
    (tmp_path / "b.jsonl").write_text('{"id": "2", "tc_ab": 1, "tc_ba": 0}\n')
    assert main(["commute-iou", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")]) == 2
    assert "do not cover the same TC directions" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["commute-iou", str(tmp_path / "empty"), str(tmp_path / "a.jsonl")]) == 2
    assert "cannot read results file" in capsys.readouterr().err
    (tmp_path / "empty" / "results.jsonl").write_text("")
    assert main(["commute-iou", str(tmp_path / "empty"), str(tmp_path / "a.jsonl")]) == 2
    assert "no record of a CoMMuTE task with per-sample logs" in capsys.readouterr().err


def test_temperature_sweep_command_writes_a_table_and_a_plot(mbart_dir, mini_commute, tmp_path, capsys):
    data_dir, images = mini_commute
    out = tmp_path / "sweep"
    code = main(
        [
            "commute-temperature",
            "--model",
            str(mbart_dir),
            "--data-dir",
            str(data_dir),
            "--images",
            str(images),
            "--tasks",
            "commute_tc,commute_gtc",
            "--temperatures",
            "0.5,1,2",
            "--output",
            str(out),
        ]
    )
    assert code == 0
    table = (out / "temperature_sweep.md").read_text().splitlines()
    assert table[0] == "| T | commute_tc | commute_gtc |" and [row.split(" |")[0] for row in table[2:]] == [
        "| 0.5",
        "| 1",
        "| 2",
    ]
    assert (out / "temperature_sweep.png").stat().st_size > 1000
    (plain,) = evaluate("commute_tc", str(mbart_dir), data_dir=str(data_dir), output=tmp_path / "plain")
    assert table[3].startswith(f"| 1 | {plain.metrics['tc']:.4f} |")
    records = read_records(out / "results.jsonl")[0]
    assert sorted({r.task_args["temperature"] for r in records}) == [0.5, 1.0, 2.0]
    assert main(["commute-temperature", "--model", "x", "--data-dir", "y", "--temperatures", "0,1"]) == 2
    assert "argument temperature=0.0 must be greater than 0.0" in capsys.readouterr().err


def test_prefix_removal_with_a_real_scorer(mbart_dir, mini_commute, tmp_path):
    data_dir, _ = mini_commute
    plain, trimmed = (
        evaluate(
            "commute_tc",
            str(mbart_dir),
            data_dir=str(data_dir),
            task_args={"prefix_removal": flag},
            output=tmp_path / str(flag),
            log_samples=True,
        )[0]
        for flag in (False, True)
    )
    assert "|prefix_removal:True|" in trimmed.signature

    def ppl(record):
        return [
            json.loads(line)["ppl"]
            for line in (tmp_path / str(record.task_args["prefix_removal"]) / record.samples_file)
            .read_text()
            .splitlines()
        ]

    # tuple 3 shares "Il va falloir": its perplexities change; every value stays a finite perplexity
    assert ppl(plain)[2]["a|a"] != pytest.approx(ppl(trimmed)[2]["a|a"], rel=1e-6)
    assert all(v >= 1.0 for sample in ppl(trimmed) for v in sample.values())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0.5,0", "--temperatures: argument temperature=0.0 must be greater than 0.0"),
        ("-1", "--temperatures: argument temperature=-1.0 must be greater than 0.0"),
        ("1,nan", "--temperatures: argument temperature=nan must be a number"),
        ("1,inf", "--temperatures must be finite numbers separated by commas, got '1,inf'"),
        (" , ", "--temperatures must be finite numbers separated by commas, got ' , '"),
    ],
)
def test_sweep_temperatures_are_bounded_by_the_tasks_parameter(text, message):
    with pytest.raises(HarnessError) as error:
        parse_temperatures(text)
    assert str(error.value) == message


def test_sweep_temperatures_parse_in_order_with_duplicates_and_blanks():
    assert parse_temperatures("0.01, 2,,2,1") == [0.01, 2.0, 2.0, 1.0]
