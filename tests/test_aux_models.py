"""Auxiliary models by role: a task declares each role with its capability; the run resolves the models given
for them with its own registry, before any inference, and records them in the signature."""

from __future__ import annotations

import pytest
from fixtures.plugins.fake import CountingEncoder, fake_data
from fixtures.registries import entry_points, fixture_registry, project_registry

import harness
import harness.plugins.registry
from harness.adapters.capabilities import Capability
from harness.errors import CapabilityError, HarnessError
from harness.plugins.registry import build_registry
from harness.run.config import RunConfig
from harness.run.roles import role_capabilities


@pytest.fixture
def only_fake_globally(monkeypatch, fresh_cache):
    """The process-wide registry knows neither the roles plugin nor any image model: only the run's may serve."""
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", fixture_registry("fake"))
    CountingEncoder.calls.clear()


@pytest.fixture
def custom():
    return build_registry(entry_points("fake", "roles"))


def test_a_role_of_a_plugin_task_is_resolved_with_the_runs_own_registry(only_fake_globally, custom, tmp_path):
    data = fake_data(tmp_path / "d", ["one", "two", "three"], ["un", "deux", "trois"])
    plan = harness.prepare(
        "judged",
        "counting-encoder",
        registry=custom,
        aux_models={"judge": "counting-encoder-dim2"},
        data_dir=str(data),
        output=None,
    )
    [task_plan] = plan.tasks
    assert "|judge:counting-encoder-dim2@" in str(task_plan.signature)
    assert set(task_plan.ctx.loaded_models) == {"judge"} and CountingEncoder.calls == []  # resolved, nothing encoded
    [record] = harness.evaluate(
        "judged",
        "counting-encoder",
        registry=custom,
        aux_models={"judge": ("counting-encoder", "dim=2")},
        data_dir=str(data),
        output=None,
    )
    assert record.metrics["judge_dim"] == 2.0  # the judge's vectors have dim=2
    [alone] = harness.evaluate("judged", "counting-encoder", registry=custom, data_dir=str(data), output=None)
    assert alone.metrics["judge_dim"] == 0.0 and "judge:" not in alone.signature  # no judge given: none recorded


def test_a_model_that_cannot_play_a_role_is_refused_before_any_data_or_inference(only_fake_globally, custom, tmp_path):
    with pytest.raises(
        CapabilityError, match="model 'flat-images' cannot serve task 'judged': it is not a text encoder"
    ):
        harness.prepare(
            "judged",
            "counting-encoder",
            registry=custom,
            aux_models={"judge": "flat-images"},
            data_dir=str(tmp_path / "absent"),  # never read: the model is refused first
            output=None,
        )
    assert CountingEncoder.calls == []


def test_a_dry_run_counts_the_outputs_of_an_auxiliary_model_of_the_runs_registry(only_fake_globally, custom, tmp_path):
    data = fake_data(tmp_path / "d", ["one", "two", "two"], ["un", "deux", "trois"])
    [task_plan] = harness.evaluate(
        "judged",
        "counting-encoder",
        registry=custom,
        aux_models={"judge": "counting-encoder-dim2"},
        data_dir=str(data),
        output=None,
        dry_run=True,
    )
    assert (task_plan.cached, task_plan.to_compute) == (0, 2)  # the judge's two distinct texts of side a
    assert CountingEncoder.calls == []


def test_the_image_role_of_the_retrieval_tasks_resolves_with_a_custom_registry(only_fake_globally):
    """``harness.prepare(..., registry=custom, image_model="efficientnet-lite0")``: the issue's case."""
    custom = project_registry()
    if "efficientnet-lite0" not in custom.names("model"):
        pytest.skip("the packaged efficientnet-lite0 is not installed (the offline-models extra)")

    class Vectors:
        def encode(self, texts, **kwargs):
            return [[float(len(t)), 1.0] for t in texts]

    plan = harness.prepare(
        "xlr,backretrieval,corr",
        Vectors(),
        registry=custom,
        image_model="efficientnet-lite0",
        task_args="size=6,n=3",
        output=None,
    )
    signatures = {p.task.name: str(p.signature) for p in plan.tasks}
    assert "image:" not in signatures["xlr"]  # xlr declares no image role
    assert "|image:efficientnet-lite0@" in signatures["backretrieval"]
    assert "|image:efficientnet-lite0@" in signatures["corr"]


def test_a_role_needs_its_capability():
    assert role_capabilities(("image",), "t") == {"image": Capability.IMAGE_ENCODER}  # the harness knows this role
    with pytest.raises(HarnessError, match="declares the auxiliary role 'judge' without its capability"):
        role_capabilities(("judge",), "t")
    with pytest.raises(HarnessError, match="needs a Capability"):
        role_capabilities({"judge": "text_encoder"}, "t")  # type: ignore[dict-item]
    registry = fixture_registry("fake", "roles")
    with pytest.raises(HarnessError, match="declares the auxiliary role 'judge' without its capability"):
        harness.prepare("undeclared_role", "counting-encoder", registry=registry, data_dir="/x", output=None)


def test_the_image_role_is_given_once():
    assert RunConfig(image_model="m", image_model_args="a=1").models_by_role() == {"image": ("m", {"a": "1"})}
    assert RunConfig(aux_models={"judge": ("j", {"x": 1})}).models_by_role() == {"judge": ("j", {"x": 1})}
    with pytest.raises(HarnessError, match="the image role is given twice"):
        RunConfig(image_model="m", aux_models={"image": "n"})
    with pytest.raises(HarnessError, match="takes a model name or"):
        RunConfig(aux_models={"judge": 3})
    with pytest.raises(HarnessError, match="takes a model name or"):
        RunConfig(aux_models={"judge": ("j", 3)})
