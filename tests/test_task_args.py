"""Scoped task arguments: ``--task-args xlr.k=5`` reaches xlr alone; an unscoped key two tasks read differently is
an error that shows the scoped form; ``--dry-run`` prints each task's resolved arguments."""

from __future__ import annotations

import pytest
from fixtures.registries import project_registry

import harness
from harness.cli import main
from harness.errors import HarnessError, UnknownNameError
from harness.run.runner import resolve_tasks


@pytest.fixture(scope="module")
def registry():
    return project_registry()


def args_of(registry, names, task_args):
    return {task.name: (dict(task.args), given) for task, given in resolve_tasks(registry, names, task_args)}


def test_a_scoped_argument_reaches_its_task_only(registry):
    resolved = args_of(registry, ["xlr", "backretrieval"], {"xlr.k": "5", "src": "de", "tgt": "en"})
    assert resolved["xlr"][0]["k"] == 5 and resolved["backretrieval"][0]["k"] == 10  # backretrieval keeps its default
    assert resolved["xlr"][0]["src"] == resolved["backretrieval"][0]["src"] == "de"  # unscoped: both
    # the scoped value wins over the unscoped one for its task
    resolved = args_of(registry, ["xlr", "backretrieval"], {"k": "3", "backretrieval.k": "7"})
    assert (resolved["xlr"][0]["k"], resolved["backretrieval"][0]["k"]) == (3, 7)
    # a loader's argument can be scoped too (xling-shapes, the fallback of ikea without --data-dir)
    assert args_of(registry, ["xlr", "corr"], {"corr.size": "30"})["corr"][1] == {"size": "30"}


def test_shared_definitions_stay_unscoped(registry):
    resolved = args_of(registry, ["xlr", "backretrieval", "corr"], {"src": "en", "tgt": "fr", "n": "9"})
    assert {name: (args["src"], args["tgt"], args["n"]) for name, (args, _) in resolved.items()} == {
        "xlr": ("en", "fr", 9),
        "backretrieval": ("en", "fr", 9),
        "corr": ("en", "fr", 9),
    }


def test_an_unscoped_key_with_two_meanings_is_an_error_showing_the_scoped_form(registry):
    if "bitext_mining" not in registry.names("task"):
        pytest.skip("the example plugin harness-bitext is not installed")
    with pytest.raises(HarnessError) as caught:
        resolve_tasks(registry, ["xlr", "bitext_mining"], {"k": "1"})
    message = str(caught.value)
    assert "task argument 'k' means different things" in message
    assert "xlr: 'cut-off of Recall@k'" in message and "bitext_mining: 'neighbourhood size" in message
    assert message.endswith("--task-args xlr.k=1,bitext_mining.k=1")
    resolved = args_of(registry, ["xlr", "bitext_mining"], {"xlr.k": "1", "bitext_mining.k": "4", "src": "en"})
    assert (resolved["xlr"][0]["k"], resolved["bitext_mining"][0]["k"]) == (1, 4)
    assert resolved["xlr"][0]["src"] == resolved["bitext_mining"][0]["src"] == "en"  # same definition: fine


def test_a_bad_scope_or_key_is_named(registry):
    with pytest.raises(UnknownNameError, match=r"unknown task in --task-args 'xrl'; did you mean 'xlr'"):
        resolve_tasks(registry, ["xlr", "corr"], {"xrl.k": "5"})
    with pytest.raises(UnknownNameError, match=r"unknown argument for task 'corr' 'k'"):
        resolve_tasks(registry, ["xlr", "corr"], {"corr.k": "5"})  # corr has no Recall@k
    with pytest.raises(HarnessError, match=r"malformed --task-args key '\.k'"):
        resolve_tasks(registry, ["xlr"], {".k": "5"})
    with pytest.raises(UnknownNameError, match="unknown task argument 'kk'; did you mean 'k'"):
        resolve_tasks(registry, ["xlr"], {"kk": "5"})


def test_the_python_api_takes_scoped_arguments_as_nested_mappings(fresh_cache):
    class Vectors:
        def encode(self, texts, **kwargs):
            return [[float(len(t)), 1.0, float(sum(map(ord, t)) % 7)] for t in texts]

    xlr, backretrieval = harness.evaluate(
        "xlr,backretrieval",
        Vectors(),
        task_args={"xlr": {"k": 2}, "size": 12, "n": 6},
        seed=0,
        output=None,
    )
    assert xlr.task_args["k"] == 2 and backretrieval.task_args["k"] == 10
    assert xlr.task_args["size"] == backretrieval.task_args["size"] == 12


def test_dry_run_prints_each_tasks_resolved_arguments(tmp_path, capsys, fresh_cache):
    argv = ["run", "--tasks", "xlr,backretrieval", "--model", "random-encoder"]
    code = main([*argv, "--task-args", "xlr.k=5,size=12,n=4", "--output", str(tmp_path / "out"), "--dry-run"])
    out, err = capsys.readouterr()
    assert code == 0, err
    xlr, backretrieval = out.split("task backretrieval")
    assert "k=5" in xlr and "n=4" in xlr and "size=12" in xlr
    assert "k=10" in backretrieval and "n=4" in backretrieval
