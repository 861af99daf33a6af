"""xlr, backretrieval and corr of one run evaluate together (one text pass for xlr and backretrieval, whose
vectors corr reuses) with outputs identical to separate runs."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from harness.run.joint import JointOutputs, joint_groups
from harness.run.runner import prepare


class Encoder:
    """A deterministic 16-d text encoder (from a hash of the text): near-ties are rare but possible."""

    def encode(self, texts):
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:16], dtype=np.uint8) for t in texts]
        return np.asarray(rows, dtype=np.float32) / 255.0


def planned(task_args, seeds=3):
    return prepare(["xlr", "backretrieval", "corr"], Encoder(), output=None, seeds=seeds, task_args=task_args)


@pytest.mark.parametrize(
    "task_args",
    [
        {"n": 60},
        {"xlr.n": 80, "backretrieval.n": 40},
        {"n": 60, "retrieval": "csls", "ties": "pessimistic"},
        {"n": 60, "corr.max_pairs": 100},  # corr on 10 x 10 of backretrieval's items
        {"n": 60, "backretrieval.n": 20},  # corr's items are not all among the others': corr alone
    ],
)
def test_together_equals_apart(task_args):
    plan = planned(task_args)
    groups = joint_groups(plan.tasks)
    assert [[p.task.name for p in group] for group in groups] == [["xlr", "backretrieval", "corr"]]
    joint = JointOutputs(plan.tasks, plan.model)
    for task_plan in plan.tasks:
        together = joint.evaluate(task_plan)
        alone = task_plan.task.evaluate(task_plan.loaded.data, plan.model, task_plan.ctx)
        assert together.per_seed == alone.per_seed and len(together.per_seed) == 3
        assert together.samples == alone.samples and together.extra == alone.extra
        assert together.undefined == alone.undefined


def joint_calls(monkeypatch):
    """Counts of the calls of the metric functions that xlr, backretrieval and corr use."""
    from harness_tasks.retrieval import metrics

    calls = {"joint": 0, "xlr": 0, "backretrieval": 0, "corr": 0}
    names = (("xlr_and_backretrieval", "joint"), ("xlr", "xlr"), ("backretrieval", "backretrieval"))
    for name, key in (*names, ("corr_with_moments", "corr")):
        original = getattr(metrics, name)

        def counted(*args, _original=original, _key=key, **kwargs):
            calls[_key] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(metrics, name, counted)
    return calls


def test_tasks_that_disagree_evaluate_alone(monkeypatch):
    # another k: no shared ranking, so neither a shared pass for corr: each alone
    plan = planned({"xlr.k": 5, "backretrieval.k": 10, "n": 60})
    calls = joint_calls(monkeypatch)
    joint = JointOutputs(plan.tasks, plan.model)
    for task_plan in plan.tasks:
        joint.evaluate(task_plan)
    assert calls == {"joint": 0, "xlr": 1, "backretrieval": 1, "corr": 1}
    # xlr's seeds could not differ (n >= items): one seed against backretrieval's three
    plan = planned({"xlr.n": 10_000, "backretrieval.n": 60})
    assert [p.seeds for p in plan.tasks[:2]] == [[0], [0, 1, 2]]
    assert [[p.task.name for p in group] for group in joint_groups(plan.tasks)] == [["backretrieval", "corr"]]


def test_a_run_of_both_writes_the_records_separate_runs_write(tmp_path):
    import json

    from harness.results.records import read_records
    from harness.run.runner import evaluate

    options = {"seeds": 3, "task_args": {"n": 60}, "resamples": 200}
    evaluate(["xlr", "backretrieval"], Encoder(), output=tmp_path / "together", **options)
    for task in ("xlr", "backretrieval"):
        evaluate(task, Encoder(), output=tmp_path / "apart", **options)
    together, apart = (read_records(tmp_path / name / "results.jsonl")[0] for name in ("together", "apart"))
    assert [r.task for r in together] == [r.task for r in apart] == ["xlr", "backretrieval"]
    for one, other in zip(together, apart):
        for field in ("metrics", "metrics_std", "per_seed", "intervals", "signature"):
            assert json.dumps(getattr(one, field), sort_keys=True) == json.dumps(getattr(other, field), sort_keys=True)


class Recording(Encoder):
    """``Encoder``, keeping every text it encoded."""

    def __init__(self):
        self.seen = []

    def encode(self, texts):
        self.seen += list(texts)
        return super().encode(texts)


def test_the_runner_makes_one_text_pass_for_the_three_tasks(monkeypatch):
    from harness.run.runner import evaluate

    calls = joint_calls(monkeypatch)
    encoder = Recording()
    evaluate(["xlr", "backretrieval", "corr"], encoder, output=None, seeds=3, task_args={"n": 60}, resamples=200)
    assert calls == {"joint": 1, "xlr": 0, "backretrieval": 0, "corr": 1}
    assert encoder.seen and len(encoder.seen) == len(set(encoder.seen))  # no text encoded twice
