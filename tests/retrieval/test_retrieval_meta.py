"""``harness meta`` on hand-made results: correlations by hand, and every refusal."""

from __future__ import annotations

import json
import math

import pytest

from harness.errors import HarnessError
from harness.results.records import ResultRecord
from harness_tasks.retrieval.analysis.meta import format_table, group_models, meta_by_direction, meta_evaluate, select

XLR = {"m1": [0.1, 0.2], "m2": [0.2, 0.4], "m3": [0.3, 0.6]}
BKR = {"m1": [0.05, 0.3], "m2": [0.10, 0.2], "m3": [0.30, 0.1]}


def record(
    task: str,
    model: str,
    values: list[float],
    *,
    args: dict | None = None,
    seeds: list[int] | None = None,
    revision: str = "sha256:data",
    g: dict | None = None,
    model_args: dict | None = None,
) -> ResultRecord:
    metric = "spearman" if task == "corr" else "recall@k"
    task_args = {"dataset": "ikea", "src": "en", "tgt": "de", "split": "test", "n": 1000, "columns": "", **(args or {})}
    if task != "corr":
        task_args.setdefault("k", 10)
    seeds = seeds or list(range(len(values)))
    data = f"data:ikea@{revision.removeprefix('sha256:')[:12]}"
    signature = "|".join(
        [task, *(f"{k}:{v}" for k, v in sorted(task_args.items())), "items:367", f"seeds:{len(seeds)}", data, "v:1"]
    )
    extra = {} if task == "xlr" else {"g": g or {"source": "image_features"}}
    return ResultRecord(
        task=task,
        task_version=1,
        task_args=task_args,
        main_metric=metric,
        metrics={metric: sum(values) / len(values)},
        metrics_std={metric: 0.0},
        per_seed={metric: values},
        seeds=seeds,
        model={
            "name": model,
            "adapter": "a",
            "source": model,
            "revision": "r",
            "args": model_args or {},
            "dtype": "float32",
        },
        dataset={"loader": "ikea", "revision": revision, "split": task_args["split"], "size": 367},  # as the runner
        run={},
        signature=signature.replace("|v:1", f"|model:{model}@r|v:1"),
        task_signature=signature,
        harness={},
        environment={},
        hardware={},
        started="2026-01-01T00:00:00+00:00",
        wall_seconds=0.0,
        extra=extra,
    )


def table(**changes) -> list[ResultRecord]:
    records = [record("xlr", m, v) for m, v in XLR.items()] + [record("backretrieval", m, v) for m, v in BKR.items()]
    for index, replacement in changes.items():
        records[int(index.removeprefix("r"))] = replacement
    return records


def test_correlations_per_seed_by_hand():
    result = meta_evaluate(group_models(table()))
    bkr = result["correlations"]["backretrieval"]
    # seed 0: x = (.1, .2, .3), y = (.05, .10, .30): r = .025 / sqrt(.02 * .035); monotone: rho = 1
    # seed 1: x rising, y falling linearly: r = rho = -1
    r0 = 0.025 / math.sqrt(0.02 * 0.035)
    assert bkr["pearson"]["per_seed"] == pytest.approx([r0, -1.0])
    assert bkr["pearson"]["mean"] == pytest.approx((r0 - 1) / 2) and bkr["pearson"]["std"] == pytest.approx(
        (r0 + 1) / math.sqrt(2)
    )
    assert bkr["spearman"]["per_seed"] == pytest.approx([1.0, -1.0]) and bkr["spearman"]["mean"] == pytest.approx(0.0)
    assert "corr" not in result["correlations"] and [m["label"] for m in result["models"]] == ["m1", "m2", "m3"]
    assert result["models"][0]["xlr"]["mean"] == pytest.approx(0.15)


def test_a_constant_seed_is_undefined_not_zero():
    result = meta_evaluate(
        group_models(
            table(
                r3=record("backretrieval", "m1", [0.2, 0.3]),
                r4=record("backretrieval", "m2", [0.2, 0.2]),
                r5=record("backretrieval", "m3", [0.2, 0.1]),
            )
        )
    )
    pearson = result["correlations"]["backretrieval"]["pearson"]
    assert pearson["per_seed"][0] is None and pearson["seeds_defined"] == 1 and pearson["mean"] == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"r3": record("backretrieval", "m1", [0.05, 0.3], args={"k": 5})}, "not comparable across models"),
        ({"r0": record("xlr", "m1", [0.1, 0.2], args={"split": "val"})}, "not comparable"),
        (
            {"r3": record("backretrieval", "m1", [0.05, 0.3], g={"source": "image_model"})},
            "different image similarities",
        ),
    ],
)
def test_refusals_within_a_task(change, message):
    with pytest.raises(HarnessError, match=message):
        group_models(table(**change))


def test_refusals_between_tasks():
    moved = [record("backretrieval", m, v, args={"tgt": "fr"}) for m, v in BKR.items()]
    with pytest.raises(HarnessError, match="different tgt"):
        group_models([record("xlr", m, v) for m, v in XLR.items()] + moved)
    other_data = [record("backretrieval", m, v, revision="sha256:other") for m, v in BKR.items()]
    with pytest.raises(HarnessError, match="different data"):
        group_models([record("xlr", m, v) for m, v in XLR.items()] + other_data)
    other_seeds = [record("backretrieval", m, v, seeds=[5, 6]) for m, v in BKR.items()]
    with pytest.raises(HarnessError, match="different seeds"):
        group_models([record("xlr", m, v) for m, v in XLR.items()] + other_seeds)
    with pytest.raises(HarnessError, match="needs xlr and backretrieval"):
        group_models([record("xlr", m, v) for m, v in XLR.items()])
    with pytest.raises(HarnessError, match="at least 3 models"):
        meta_evaluate(group_models(table()[:2] + table()[3:5]))


def test_select_and_labels():
    records = [*table(), record("xlr", "m1", [0.1, 0.2], args={"tgt": "fr"})]
    assert len(select(records, {"tgt": "de"})) == 6 and len(select(records, {"k": 10})) == 7
    same_name = [record("xlr", "enc", [0.1, 0.2], model_args={"pooling": p}) for p in ("cls", "mean")]
    same_name += [record("backretrieval", "enc", [0.1, 0.2], model_args={"pooling": p}) for p in ("cls", "mean")]
    assert sorted(row.label for row in group_models(same_name)) == ["enc(pooling=cls)", "enc(pooling=mean)"]


# 5 models x 2 seeds: the hand-computed table of test_retrieval_significance (r(B,X) = .9, .9; r(C,X) = .8, .6; r(B,C) = .6, .8)
HAND = {
    "xlr": [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]],
    "backretrieval": [[1, 2], [2, 1], [3, 3], [5, 4], [4, 5]],
    "corr": [[2, 3], [1, 1], [4, 2], [3, 5], [5, 4]],
}


def hand_records(direction: tuple[str, str] = ("en", "de"), models: int = 5, **extra) -> list[ResultRecord]:
    src, tgt = direction
    records = []
    for task, rows in HAND.items():
        for index, values in enumerate(rows[:models]):
            r = record(task, f"m{index}", [float(v) for v in values], args={"src": src, "tgt": tgt})
            r.extra.update({"n_used": 183} if task != "xlr" else {}, **extra.get(task, {}))
            records.append(r)
    return records


def test_significance_in_meta_json_and_table():
    result = meta_evaluate(group_models(hand_records()), resamples=200, bootstrap_seed=3)
    pearson = result["significance"]["pearson"]
    # Steiger's Z by hand in test_retrieval_significance: .449492 (p .653076) and 1.234343 (p .217075)
    assert [s["z"] for s in pearson["per_seed"]] == pytest.approx([0.449492, 1.234343], abs=1e-6)
    assert pearson["share_significant"] == 0.0 and pearson["combined_p"] == pytest.approx(2 * 0.217075, abs=1e-6)
    assert pearson["bootstrap"]["difference"] == pytest.approx(0.2) and pearson["bootstrap"]["seed"] == 3
    assert result["significance"]["models"] == ["m0", "m1", "m2", "m3", "m4"]
    assert result["chance"] == {"xlr": None, "backretrieval": pytest.approx(10 / 183)} and result["k"] == 10
    rows = {
        line.split()[0]: line.split()
        for line in format_table(result).splitlines()
        if line.startswith(("pearson", "spearman"))
    }
    assert rows["pearson"][:5] == ["pearson", "0/2", "0.435", "0.434", "+0.200"]


def test_significance_is_skipped_without_corr():
    result = meta_evaluate(group_models(table()))
    assert "corr" in result["significance"]["skipped"] and "BkR vs CORR: not tested" in format_table(result)


def test_seed_independent_xlr_is_repeated_over_the_seeds():
    both = meta_evaluate(group_models(hand_records()), resamples=50)
    once = [r for r in hand_records() if r.task != "xlr"]
    for index, values in enumerate(HAND["xlr"]):
        r = record("xlr", f"m{index}", [float(values[0])], seeds=[0])
        once.append(r)
    with pytest.raises(HarnessError, match="xlr and backretrieval were run with different seeds"):
        group_models(once)
    for r in once:
        if r.task == "xlr":
            r.extra["n_used"] = r.dataset["size"]  # every item in every seed: the value cannot depend on the seed
    result = meta_evaluate(group_models(once), resamples=50)
    assert result["correlations"] == both["correlations"] and result["seeds"] == [0, 1]
    assert result["significance"]["pearson"]["per_seed"] == both["significance"]["pearson"]["per_seed"]


def test_several_directions_are_aggregated(tmp_path, capsys):
    from harness.cli import main
    from harness.results.records import append_record

    records = hand_records(("en", "de")) + hand_records(("de", "en"), models=2)
    for r in records:
        append_record(tmp_path, r)
    assert main(["meta", str(tmp_path), "--output", str(tmp_path / "meta"), "--resamples", "50"]) == 0
    out, err = capsys.readouterr()
    assert "de-en: no meta-evaluation: correlating backretrieval with xlr needs at least 3 models" in err
    result = json.loads((tmp_path / "meta" / "meta.json").read_text())
    assert "skipped" in result["directions"]["de-en"] and "significance" in result["directions"]["en-de"]
    aggregation = result["aggregation"]
    # BkR mean over the two seeds: m0 (1+2)/2 = 1.5, m1 1.5, m2 3, m3 4.5, m4 4.5; de-en only for m0 and m1
    rows = {row["model"]: row for row in aggregation["table"]["rows"]}
    assert rows["m0"]["average"] == pytest.approx(1.5) and rows["m3"]["average"] is None
    assert [row["model"] for row in aggregation["table"]["rows"]] == ["m0", "m1", "m2", "m3", "m4"]  # undefined by name
    assert aggregation["chance"] == {"de-en": pytest.approx(10 / 183), "en-de": pytest.approx(10 / 183)}
    assert aggregation["boxplot"]["models"] == ["m3", "m4", "m2", "m0", "m1"]
    assert (tmp_path / "meta" / "bkr_over_pairs.png").is_file() and (
        tmp_path / "meta" / "xlr_vs_backretrieval_en-de.png"
    ).is_file()
    assert "averaged over 2 language pairs" in out


def test_several_data_sets_or_configurations_are_refused():
    with pytest.raises(HarnessError, match="span 2 data sets or splits"):
        meta_by_direction(
            [*hand_records(), record("backretrieval", "m0", [0.1, 0.2], args={"tgt": "fr", "split": "val"})],
            resamples=10,
            bootstrap_seed=0,
        )
    # k differs between the directions: each direction is still evaluated, the aggregation is not
    result = meta_by_direction(
        [*hand_records(), record("backretrieval", "m0", [0.1, 0.2], args={"tgt": "fr", "k": 5})],
        resamples=10,
        bootstrap_seed=0,
    )
    assert (
        "differ in more than the direction" in result["aggregation"]["skipped"]
        and "correlations" in result["directions"]["en-de"]
    )
