"""RunConfig: one validated object for a run's settings; keyword arguments build the same config."""

from __future__ import annotations

import pytest
from fixtures.plugins.fake import CountingEncoder, fake_data
from fixtures.registries import fixture_registry

from harness.errors import HarnessError
from harness.run.config import RunConfig, run_config
from harness.run.runner import evaluate, prepare


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"batch_size": 0}, "--batch-size must be at least 1, got 0"),
        ({"seeds": 0}, "--seeds must be at least 1, got 0"),
        ({"seed": -1}, "--seed must be 0 or more, got -1"),
        ({"limit": 0}, "--limit must be at least 1, got 0"),
        ({"resamples": -1}, "--resamples must be at least 0, got -1"),
        ({"limit": 2.5}, "--limit takes a whole number, got 2.5"),
        ({"seeds": True}, "--seeds takes a whole number, got True"),
        ({"device": "tpu"}, "--device takes cpu, cuda, cuda:N or auto, got 'tpu'"),
        ({"device": "cuda:x"}, "--device takes cpu, cuda, cuda:N or auto, got 'cuda:x'"),
        ({"output": None, "resume": True}, "--resume and --log-samples need an output folder"),
        ({"shard": "2/2"}, "--shard"),
        ({"task_args": "k"}, "malformed --task-args 'k'"),
    ],
)
def test_a_bad_setting_fails_when_the_config_is_built(changes, message):
    with pytest.raises(HarnessError) as info:
        RunConfig(**changes)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    "changes",
    [
        {"batch_size": 1},
        {"seeds": 1},
        {"seed": 0},
        {"limit": 1},
        {"resamples": 0},
        {"device": "cuda:3"},
        {"device": "cpu"},
        {"shard": "1/2"},
    ],
)
def test_the_lowest_allowed_values_pass(changes):
    assert RunConfig(**changes) == RunConfig().replace(**changes)


def test_argument_strings_become_dicts_and_replace_validates_again():
    config = RunConfig(task_args="k=3, src=en", model_args={"dim": 4})
    assert (
        config.task_args == {"k": "3", "src": "en"}
        and config.model_args == {"dim": 4}
        and config.image_model_args == {}
    )
    assert config.replace(seed=2).task_args == {"k": "3", "src": "en"}
    with pytest.raises(HarnessError, match="--batch-size must be at least 1, got -3"):
        config.replace(batch_size=-3)


def test_keywords_override_a_given_config_and_unknown_keywords_are_type_errors():
    base = RunConfig(seeds=4, limit=7)
    assert run_config(base, {"seeds": 2}) == RunConfig(seeds=2, limit=7)
    assert run_config(None, {}) == RunConfig()
    assert run_config(base, {}) is base
    with pytest.raises(TypeError, match="unexpected keyword argument 'seedz'"):
        run_config(None, {"seedz": 2})


def test_a_config_and_the_equivalent_keywords_give_the_same_plan(tmp_path, fresh_cache):
    data = str(fake_data(tmp_path / "data", ["a b", "c d", "e f"], ["x y", "z w", "u v"]))
    registry = fixture_registry()
    config = RunConfig(data_dir=data, seeds=2, limit=2, output=None, registry=registry, model_args="dim=4")
    by_config = prepare("mean_similarity", "counting-encoder", config)
    by_keywords = prepare(
        "mean_similarity",
        "counting-encoder",
        data_dir=data,
        seeds=2,
        limit=2,
        output=None,
        registry=registry,
        model_args={"dim": "4"},
    )
    [one], [two] = by_config.tasks, by_keywords.tasks
    assert one.signature == two.signature and one.seeds == two.seeds == [0, 1]
    assert by_config.settings == by_keywords.settings and by_config.settings["limit"] == 2
    CountingEncoder.calls.clear()
    [record] = evaluate("mean_similarity", "counting-encoder", config, seeds=1)  # a keyword overrides the config
    assert record.seeds == [0] and record.dataset["size"] == 2 and record.signature != one.signature
