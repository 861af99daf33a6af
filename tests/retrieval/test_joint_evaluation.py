"""xlr and backretrieval of one run evaluate together (one text pass) with outputs identical to separate runs."""

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
    [{"n": 60}, {"xlr.n": 80, "backretrieval.n": 40}, {"n": 60, "retrieval": "csls", "ties": "pessimistic"}],
)
def test_together_equals_apart(task_args):
    plan = planned(task_args)
    groups = joint_groups(plan.tasks)
    assert [[p.task.name for p in group] for group in groups] == [["xlr", "backretrieval"]]  # corr shares no pass
    joint = JointOutputs(plan.tasks, plan.model)
    for task_plan in plan.tasks:
        together = joint.evaluate(task_plan)
        alone = task_plan.task.evaluate(task_plan.loaded.data, plan.model, task_plan.ctx)
        assert together.per_seed == alone.per_seed and len(together.per_seed) == 3
        assert together.samples == alone.samples and together.extra == alone.extra
        assert together.undefined == alone.undefined


def test_tasks_that_disagree_evaluate_alone():
    # another k: no shared ranking
    assert joint_groups(planned({"xlr.k": 5, "backretrieval.k": 10, "n": 60}).tasks) == []
    # xlr's seeds could not differ (n >= items): one seed against backretrieval's three
    plan = planned({"xlr.n": 10_000, "backretrieval.n": 60})
    assert [p.seeds for p in plan.tasks[:2]] == [[0], [0, 1, 2]] and joint_groups(plan.tasks) == []


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


def test_the_runner_makes_one_text_pass_for_xlr_and_backretrieval(monkeypatch):
    from harness.run.runner import evaluate
    from harness_tasks.retrieval import metrics

    calls = {"joint": 0, "xlr": 0, "backretrieval": 0}
    for name, key in (("xlr_and_backretrieval", "joint"), ("xlr", "xlr"), ("backretrieval", "backretrieval")):
        original = getattr(metrics, name)

        def counted(*args, _original=original, _key=key, **kwargs):
            calls[_key] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(metrics, name, counted)
    evaluate(["xlr", "backretrieval", "corr"], Encoder(), output=None, seeds=3, task_args={"n": 60}, resamples=200)
    assert calls == {"joint": 1, "xlr": 0, "backretrieval": 0}
