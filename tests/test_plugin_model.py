"""One plugin model (issue 22): a task's family and role are declared once, typed registration warns on a
misspelled keyword, and a user's YAML preset of xlr/backretrieval/corr goes through meta and calibrate as the
built-in tasks do."""

from __future__ import annotations

import json
import textwrap
from importlib.metadata import EntryPoint

import numpy as np
import pytest
from fixtures.oracles import oracles
from fixtures.registries import project_entry_points

import harness
import harness.plugins.registry
from harness.cli import main
from harness.plugins.membership import task_membership
from harness.plugins.registry import build_registry
from harness.plugins.specs import FamilySpec, ModelSpec, nearest

ITEMS = 12
RUNS = [pytest.mark.slow, pytest.mark.filterwarnings("ignore:.*every seed would evaluate the same")]  # 16 small runs
PAIRS = (("de", "fr"), ("fr", "de"))


# --- typed registration ---------------------------------------------------------------------------------------------

TYPO_PLUGIN = """
from harness import hookimpl


@hookimpl
def register_families(register):
    register("typo", "typo_plugin:PLOTS", "A family", task=("a", "b"), average=True)


@hookimpl
def register_models(register):
    register("typo-model", "typo_plugin:Model", "A model", defualt_for=("text_encoder",), preset={"dim": 2})
"""


def _plugin(tmp_path, monkeypatch, name: str, source: str) -> harness.plugins.registry.Registry:
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    return build_registry([EntryPoint(name.replace("_", "-"), name, "harness")])


def test_a_misspelled_keyword_warns_naming_plugin_key_and_suggestion(tmp_path, monkeypatch, capsys):
    registry = _plugin(tmp_path, monkeypatch, "typo_plugin", TYPO_PLUGIN)
    assert sorted(registry.warnings) == [
        "plugin 'typo-plugin': register_families('typo', ...) got an unknown keyword 'task' (did you mean 'tasks'?); "
        "it is ignored",
        "plugin 'typo-plugin': register_models('typo-model', ...) got an unknown keyword 'defualt_for' "
        "(did you mean 'default_for'?); it is ignored",
    ]
    assert "did you mean 'tasks'?" in capsys.readouterr().err
    family = registry.get("family", "typo").spec  # registered all the same, typed, without the unknown keyword
    assert family == FamilySpec("typo", "typo_plugin:PLOTS", "A family", "typo-plugin", average=True)
    assert family.title == "A family" and family.display_roles == ()
    model = registry.get("model", "typo-model")
    assert model.spec == ModelSpec("typo-model", "typo_plugin:Model", "A model", "typo-plugin", preset={"dim": 2})
    assert model.info == {"preset": {"dim": 2}}


def test_a_keyword_of_the_wrong_type_fails_the_plugin_by_name(tmp_path, monkeypatch, capsys):
    source = TYPO_PLUGIN.replace('task=("a", "b"), average=True', 'tasks="a,b"')
    registry = _plugin(tmp_path, monkeypatch, "typed_plugin", source)
    warning = registry.warnings[-1]
    assert warning.startswith("plugin 'typed-plugin' failed in register_families: TypeError: family 'typo': ")
    assert "keyword 'tasks' must be a sequence of strings, got 'a,b'" in warning
    assert "typo" not in registry.entries["family"]


def test_nearest_lists_the_valid_keywords_when_none_is_close():
    assert nearest("averge", ("tasks", "average")) == "did you mean 'average'?"
    assert nearest("zzz", ("tasks", "average")) == "it takes 'tasks', 'average'"
    assert nearest("tasks", ()) == "it takes no keywords"


# --- membership --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def project():
    return build_registry(project_entry_points())


@pytest.mark.parametrize(
    ("name", "family", "role"),
    [
        ("xlr", "retrieval", "xlr"),
        ("ikea_en_de_backretrieval", "retrieval", "backretrieval"),  # a shipped preset: its base's
        ("xling_shapes_en_de_corr", "retrieval", "corr"),
        ("commute_en_fr_gic", "commute", "commute_gic"),
        ("yisi2_filter_layers", "yisi", "yisi2_filter_layers"),
        ("multi30k_en_de_bert_sum_filter", "yisi", "bert_sum_filter"),
    ],
)
def test_membership_is_the_task_class_s_declaration(project, name, family, role):
    assert task_membership(project, name) == harness.Membership(family, role)
    cls = project.load("task", name)
    assert (cls.family, cls.role) == (family, role)  # what the runner writes into the results line


def test_every_registered_task_s_membership_is_read_without_importing_it_and_agrees_with_its_class(project):
    import sys

    before = set(sys.modules)
    members = {name: task_membership(project, name) for name in project.names("task")}
    assert not {m for m in set(sys.modules) - before if m.startswith(("harness_tasks.", "torch", "datasets"))}
    for name, member in members.items():
        cls = project.load("task", name)
        assert member == harness.Membership(cls.family, cls.role or name), name


def test_a_preset_whose_family_disagrees_with_its_base_is_refused_at_its_line(tmp_path, project):
    from harness.run.presets import PresetError, include_presets

    (tmp_path / "p.yaml").write_text("name: odd_xlr\nbase: xlr\nfamily: yisi\ndataset: {loader: ikea}\n")
    registry = include_presets(build_registry(project_entry_points()), tmp_path)
    with pytest.raises(PresetError, match=r"p\.yaml, line 3, key 'family': 'xlr' is of family 'retrieval'"):
        registry.load("task", "odd_xlr")


# --- a user's preset of xlr / backretrieval / corr, through meta and calibrate ----------------------------------


ENCODERS = oracles(ITEMS)


def _write_data(folder):
    """An IKEA-layout folder with a language pair no shipped preset has (de.fr): numbered texts, near one-hot features."""
    pair = folder / "de.fr"
    pair.mkdir(parents=True)
    for lang in ("de", "fr"):
        (pair / f"test.{lang}").write_text("".join(f"{lang} Ding {i}\n" for i in range(ITEMS)), encoding="utf-8")
    (pair / "test.images.txt").write_text("".join(f"img{i}.jpg\n" for i in range(ITEMS)))
    features = np.eye(ITEMS) + np.random.default_rng(0).random((ITEMS, ITEMS)) * 0.3
    np.save(pair / "test.image_features.npy", features.astype(np.float32))


def _write_presets(folder, data):
    folder.mkdir(parents=True)
    presets = [
        {
            "name": f"my_{src}_{tgt}_{base}",
            "base": base,
            "description": f"my data {src}->{tgt}: {base}",
            "dataset": {"loader": "ikea", "source": str(data), "split": "test"},
            "args": {"src": src, "tgt": tgt, **({} if base == "corr" else {"k": 2})},
        }
        for src, tgt in PAIRS
        for base in ("xlr", "backretrieval", "corr")
    ]
    (folder / "mine.yaml").write_text(json.dumps({"presets": presets}, indent=1))  # JSON is YAML


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same configurations run as the built-in tasks and as a user's presets (from another directory)."""
    root = tmp_path_factory.mktemp("user")
    _write_data(root / "data")
    _write_presets(root / "presets", root / "data")
    registry = build_registry(project_entry_points())
    with pytest.MonkeyPatch.context() as patch:
        elsewhere = tmp_path_factory.mktemp("elsewhere")
        patch.chdir(elsewhere)
        for encoder in ENCODERS:
            for src, tgt in PAIRS:
                common = {"seeds": 3, "registry": registry, "resamples": 0}
                harness.evaluate(
                    ["xlr", "backretrieval", "corr"],
                    encoder,
                    data_dir=str(root / "data"),
                    task_args={"src": src, "tgt": tgt, "k": 2, "split": "test"},
                    output=str(root / "builtin"),
                    **common,
                )
                harness.evaluate(
                    [f"my_{src}_{tgt}_{base}" for base in ("xlr", "backretrieval", "corr")],
                    encoder,
                    include_path=str(root / "presets"),
                    output=str(root / "preset"),
                    **common,
                )
    return root


@RUNS[0]
@RUNS[1]
def test_preset_records_carry_the_retrieval_family_and_their_base_s_role(runs):
    records, problems = harness.read_records(runs / "preset" / "results.jsonl")
    assert problems == [] and len(records) == len(ENCODERS) * len(PAIRS) * 3
    for record in records:
        base = record.task.rsplit("_", 1)[1]
        assert (record.family, record.role) == ("retrieval", base)
        assert (harness.family_of(record), harness.role_of(record)) == ("retrieval", base)
    builtin, _ = harness.read_records(runs / "builtin" / "results.jsonl")
    assert [r.metrics for r in records] == [r.metrics for r in builtin]  # the same numbers, line by line


def _meta(folder, tmp_path, capsys, *extra):
    output = tmp_path / f"meta-{folder.name}"
    assert main(["meta", str(folder), "--output", str(output), "--select", "src=de,tgt=fr", *extra]) == 0
    return capsys.readouterr().out, json.loads((output / "meta.json").read_text())


@RUNS[0]
@RUNS[1]
def test_meta_reads_preset_results_exactly_as_built_in_ones(runs, tmp_path, capsys):
    table, result = _meta(runs / "preset", tmp_path, capsys)
    builtin_table, builtin = _meta(runs / "builtin", tmp_path, capsys)
    assert table == builtin_table and result == builtin
    assert len(result["models"]) == 4 and set(result["correlations"]) == {"backretrieval", "corr"}
    assert result["signatures"]["xlr"].startswith("xlr|")  # named by the role, as the built-in's


@RUNS[0]
@RUNS[1]
def test_meta_over_both_directions_of_the_presets(runs, tmp_path, capsys):
    assert main(["meta", str(runs / "preset"), "--output", str(tmp_path / "both")]) == 0
    assert main(["meta", str(runs / "builtin"), "--output", str(tmp_path / "both-builtin")]) == 0
    assert (tmp_path / "both" / "meta.json").read_text() == (tmp_path / "both-builtin" / "meta.json").read_text()


@RUNS[0]
@RUNS[1]
def test_calibrate_fits_and_applies_on_preset_results_as_on_built_in_ones(runs, tmp_path, capsys):
    outputs = {}
    for name in ("preset", "builtin"):
        calibration = tmp_path / f"{name}.json"
        assert main(["calibrate", "fit", str(runs / name), "--output", str(calibration)]) == 0
        assert main(["calibrate", "apply", str(calibration), str(runs / name)]) == 0
        outputs[name] = (capsys.readouterr().out, json.loads(calibration.read_text()))
    (preset_out, preset_fit), (builtin_out, builtin_fit) = outputs["preset"], outputs["builtin"]
    assert preset_out == builtin_out
    assert preset_fit["map"] == builtin_fit["map"] and preset_fit["scope"] == builtin_fit["scope"]


def test_the_project_s_own_registrations_use_only_valid_keywords(project):
    assert project.warnings == []
    retrieval = project.get("family", "retrieval").spec
    assert isinstance(retrieval, FamilySpec) and retrieval.display_roles == ("xlr", "backretrieval", "corr")


def test_the_temperature_sweep_takes_the_run_s_own_options():
    import argparse

    from harness import add_run_arguments
    from harness_tasks.commute.sweep import COMMAND, DEFAULT_TASKS

    sweep, run = argparse.ArgumentParser(), argparse.ArgumentParser()
    COMMAND.add_arguments(sweep)
    add_run_arguments(run)
    run_options = {o for action in run._actions for o in action.option_strings}
    sweep_options = {o for action in sweep._actions for o in action.option_strings}
    assert run_options - sweep_options == set() and sweep_options - run_options == {"--temperatures"}
    args = sweep.parse_args(["--model", "m", "--seeds", "3", "--resume", "--shard", "1/2"])
    assert (args.tasks, args.seeds, args.resume, args.shard, args.output) == (
        DEFAULT_TASKS,
        3,
        True,
        "1/2",
        "results/temperature",
    )


@RUNS[0]
@RUNS[1]
def test_the_leaderboard_files_preset_results_under_their_family_as_built_in_ones(runs, project, tmp_path, monkeypatch):
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", project)
    readmes = {}
    for name in ("preset", "builtin"):
        assert main(["leaderboard", str(runs / name), "--output", str(tmp_path / name), "--no-plots"]) == 0
        readmes[name] = (tmp_path / name / "README.md").read_text()
    for readme in readmes.values():
        assert "Image-pivoted retrieval" in readme and "Other tasks" not in readme
    board = json.loads((tmp_path / "preset" / "leaderboard.json").read_text())
    builtin = json.loads((tmp_path / "builtin" / "leaderboard.json").read_text())
    assert json.dumps(board, sort_keys=True).count("recall@k") == json.dumps(builtin, sort_keys=True).count("recall@k")


MEMBERS_PLUGIN = '''
from harness import Task, hookimpl

FAMILY = "newer"


class Legacy(Task):
    """Declares no family: its plugin's family registration lists it."""


class Declared(Task):
    family = FAMILY  # not a literal: read by importing the class
    role = "declared_role"


class Nothing(Task):
    """Of no family."""


@hookimpl
def register_tasks(register):
    register("legacy", "members_plugin:Legacy", "")
    register("declared", "members_plugin:Declared", "")
    register("nothing", "members_plugin:Nothing", "")


@hookimpl
def register_families(register):
    register("older", "members_plugin:PLOTS", "Older", tasks=("legacy",))
'''


def test_membership_of_a_plugin_s_tasks_declared_listed_or_none(tmp_path, monkeypatch):
    registry = _plugin(tmp_path, monkeypatch, "members_plugin", MEMBERS_PLUGIN)
    assert registry.warnings == []
    assert task_membership(registry, "legacy") == harness.Membership("older", "legacy")
    assert task_membership(registry, "declared") == harness.Membership("newer", "declared_role")
    assert task_membership(registry, "nothing") == harness.Membership(None, "nothing")
