"""``harness meta`` on hand-made results: correlations by hand, and every refusal."""

from __future__ import annotations

import math

import pytest

from harness.errors import HarnessError
from harness.results import ResultRecord
from harness_tasks.retrieval.meta import group_models, meta_evaluate, select

XLR = {"m1": [0.1, 0.2], "m2": [0.2, 0.4], "m3": [0.3, 0.6]}
BKR = {"m1": [0.05, 0.3], "m2": [0.10, 0.2], "m3": [0.30, 0.1]}


def record(task: str, model: str, values: list[float], *, args: dict | None = None, seeds: list[int] | None = None,
           revision: str = "sha256:data", g: dict | None = None, model_args: dict | None = None) -> ResultRecord:
    metric = "spearman" if task == "corr" else "recall@k"
    task_args = {"dataset": "ikea", "src": "en", "tgt": "de", "split": "test", "n": 1000, "columns": "", **(args or {})}
    if task != "corr":
        task_args.setdefault("k", 10)
    seeds = seeds or list(range(len(values)))
    signature = "|".join([task, *(f"{k}:{v}" for k, v in sorted(task_args.items())), f"seeds:{len(seeds)}", f"data:{revision}"])
    extra = {} if task == "xlr" else {"g": g or {"source": "image_features"}}
    return ResultRecord(
        task=task, task_version=1, task_args=task_args, main_metric=metric,
        metrics={metric: sum(values) / len(values)}, metrics_std={metric: 0.0}, per_seed={metric: values}, seeds=seeds,
        model={"name": model, "adapter": "a", "source": model, "revision": "r", "args": model_args or {}, "dtype": "float32"},
        dataset={"loader": "ikea", "revision": revision, "split": "test", "size": 367}, run={}, signature=signature + f"|model:{model}",
        task_signature=signature, harness={}, environment={}, hardware={}, started="", wall_seconds=0.0, extra=extra,
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
    assert bkr["pearson"]["mean"] == pytest.approx((r0 - 1) / 2) and bkr["pearson"]["std"] == pytest.approx((r0 + 1) / math.sqrt(2))
    assert bkr["spearman"]["per_seed"] == pytest.approx([1.0, -1.0]) and bkr["spearman"]["mean"] == pytest.approx(0.0)
    assert "corr" not in result["correlations"] and [m["label"] for m in result["models"]] == ["m1", "m2", "m3"]
    assert result["models"][0]["xlr"]["mean"] == pytest.approx(0.15)


def test_a_constant_seed_is_undefined_not_zero():
    result = meta_evaluate(group_models(table(r3=record("backretrieval", "m1", [0.2, 0.3]),
                                              r4=record("backretrieval", "m2", [0.2, 0.2]),
                                              r5=record("backretrieval", "m3", [0.2, 0.1]))))
    pearson = result["correlations"]["backretrieval"]["pearson"]
    assert pearson["per_seed"][0] is None and pearson["seeds_defined"] == 1 and pearson["mean"] == pytest.approx(-1.0)


@pytest.mark.parametrize(("change", "message"), [
    ({"r3": record("backretrieval", "m1", [0.05, 0.3], args={"k": 5})}, "not comparable across models"),
    ({"r0": record("xlr", "m1", [0.1, 0.2], args={"split": "val"})}, "not comparable"),
    ({"r3": record("backretrieval", "m1", [0.05, 0.3], g={"source": "image_model"})}, "different image similarities"),
])
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
    records = table() + [record("xlr", "m1", [0.1, 0.2], args={"tgt": "fr"})]
    assert len(select(records, {"tgt": "de"})) == 6 and len(select(records, {"k": 10})) == 7
    same_name = [record("xlr", "enc", [0.1, 0.2], model_args={"pooling": p}) for p in ("cls", "mean")]
    same_name += [record("backretrieval", "enc", [0.1, 0.2], model_args={"pooling": p}) for p in ("cls", "mean")]
    assert sorted(row.label for row in group_models(same_name)) == ["enc(pooling=cls)", "enc(pooling=mean)"]
