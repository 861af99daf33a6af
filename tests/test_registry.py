"""The plugin layer: discovery, isolation of broken plugins, filters, collisions, suggestions."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from fixtures.registries import entry_points, fixture_registry

from harness.errors import HarnessError, UnknownNameError
from harness.plugins.registry import build_registry


def test_hook_register_tasks():
    registry = fixture_registry()
    assert registry.names("task") == ["mean_similarity", "needs_scorer"]
    entry = registry.get("task", "mean_similarity")
    assert entry.plugin == "fake" and entry.description.startswith("Mean cosine")
    assert entry.load().__name__ == "MeanSimilarity"


def test_hook_register_models():
    registry = fixture_registry()
    assert registry.names("model") == ["counting-encoder", "counting-encoder-dim2"]
    assert registry.get("model", "counting-encoder-dim2").info == {"preset": {"dim": 2}}


def test_hook_register_datasets():
    registry = fixture_registry()
    assert registry.names("dataset") == ["line_pairs"]
    assert registry.load("dataset", "line_pairs").__name__ == "LinePairs"


def test_hook_register_commands():
    registry = fixture_registry("commands")
    assert registry.names("command") == ["greet"]
    assert registry.plugins["commands"].registered["command"] == ["greet"]


def test_registration_is_lazy():
    """Registering imports only the plugin module, not what the references point to."""
    code = (
        "import sys; from importlib.metadata import EntryPoint; from harness.plugins.registry import build_registry;"
        "r = build_registry([EntryPoint('commands', 'fixtures.plugins.commands', 'harness')]);"
        "print('fixtures.plugins.fake' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=_tests_dir(), check=True)
    assert out.stdout.strip() == "False"


def test_broken_import_is_one_warning_and_the_rest_works(capsys):
    registry = build_registry(entry_points("fake", "broken-import"))
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert (
        "plugin 'broken-import'" in err[0]
        and "ModuleNotFoundError" in err[0]
        and "a_module_that_does_not_exist" in err[0]
    )
    assert registry.names("task") == ["mean_similarity", "needs_scorer"]
    assert registry.plugins["broken-import"].error


def test_plugin_failing_inside_a_hook_registers_nothing(capsys):
    registry = build_registry(entry_points("fake", "broken-register"))
    err = capsys.readouterr().err
    assert "plugin 'broken-register'" in err and "RuntimeError: bug in register_tasks" in err
    assert "half_registered" not in registry.entries["task"]
    assert "mean_similarity" in registry.entries["task"]


def test_unknown_hook_is_reported(capsys):
    registry = build_registry(entry_points("fake", "typo-hook"))
    assert "plugin 'typo-hook'" in capsys.readouterr().err
    assert "typo" not in registry.entries["task"]


def test_collision_names_both_plugins():
    with pytest.raises(HarnessError) as info:
        build_registry(entry_points("fake", "colliding"))
    message = str(info.value)
    assert "'colliding'" in message and "'fake'" in message and "mean_similarity" in message
    assert "HARNESS_DISABLE_PLUGINS" in message


def test_disable_and_load_filters(monkeypatch):
    monkeypatch.setenv("HARNESS_DISABLE_PLUGINS", "colliding, broken-import")
    registry = build_registry(entry_points("fake", "colliding", "broken-import"))
    assert set(registry.plugins) == {"fake"}
    monkeypatch.delenv("HARNESS_DISABLE_PLUGINS")
    monkeypatch.setenv("HARNESS_LOAD_PLUGINS", "commands")
    registry = build_registry(entry_points("fake", "colliding", "commands"))
    assert set(registry.plugins) == {"commands"}


def test_unknown_name_suggests_closest():
    registry = fixture_registry()
    with pytest.raises(UnknownNameError) as info:
        registry.get("task", "mean_similarty")
    assert info.value.suggestions == ["mean_similarity"]
    assert "did you mean 'mean_similarity'?" in str(info.value)
    with pytest.raises(UnknownNameError) as info:
        registry.get("model", "zzz")
    assert info.value.suggestions == [] and "harness list models" in str(info.value)


def test_bad_registration_call_is_isolated(tmp_path, capsys, monkeypatch):
    (tmp_path / "bad_ref.py").write_text(
        "from harness.plugins.hookspecs import hookimpl\n"
        "@hookimpl\n"
        "def register_models(register):\n"
        "    register('m', 'no_colon_here', 'x')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from importlib.metadata import EntryPoint

    registry = build_registry([EntryPoint("bad-ref", "bad_ref", "harness"), *entry_points("fake")])
    assert "reference must be 'module:attribute'" in capsys.readouterr().err
    assert "m" not in registry.entries["model"] and "counting-encoder" in registry.entries["model"]


def test_list_and_plugins_import_neither_torch_nor_transformers():
    code = (
        "import sys; from harness.cli import main; main(['list', 'tasks']); main(['list', 'models']); main(['plugins']);"
        "print(json.dumps(sorted(m for m in ('torch', 'transformers', 'datasets') if m in sys.modules)), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", "import json;" + code], capture_output=True, text=True, check=True)
    assert json.loads(out.stderr.strip().splitlines()[-1]) == []


def _tests_dir() -> str:
    from pathlib import Path

    return str(Path(__file__).resolve().parent)


def test_distributions_of_what_served_a_run(tmp_path):
    from importlib import metadata

    dist_info = tmp_path / "fake_plugins-2.0.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-plugins\nVersion: 2.0\n")
    (dist_info / "entry_points.txt").write_text("[harness]\nfake = fixtures.plugins.fake\n")
    (dist,) = metadata.distributions(path=[str(tmp_path)])
    registry = build_registry([*dist.entry_points, *entry_points("commands")])  # "commands" belongs to no distribution
    assert registry.distributions([("task", "mean_similarity")]) == {"fake-plugins": "2.0"}
    assert registry.distributions(refs=["fixtures.plugins.fake:CountingEncoder"]) == {
        "fake-plugins": "2.0"
    }  # by adapter
    assert registry.distributions([("command", "greet"), ("task", "no-such-task")], ["x:Y"]) == {}
