"""YAML task presets: read, validated with file/line/key errors, registered, run through --include-path."""

from __future__ import annotations

import json

import pytest
from fixtures.plugins.fake import CountingEncoder, fake_data
from fixtures.registries import fixture_registry

import harness.plugins.registry
from harness.cli import main
from harness.errors import HarnessError
from harness.plugins.registry import build_registry
from harness.run.presets import PresetError, include_presets, read_presets


@pytest.fixture
def fake(monkeypatch, fresh_cache):
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", fixture_registry("fake"))
    CountingEncoder.calls.clear()


def test_a_yaml_preset_in_a_temp_folder_runs_through_include_path(fake, tmp_path, capsys):
    data = fake_data(tmp_path / "data", ["a b", "c d", "e f"], ["x y", "z w", "u v"])
    folder = tmp_path / "presets"
    folder.mkdir()
    (folder / "doubled.yaml").write_text(
        "name: doubled_similarity\n"
        "base: mean_similarity\n"
        "description: Mean similarity, doubled.\n"
        "family: toy\n"
        "languages: [xx, yy]\n"
        "dataset:\n"
        f"  loader: line_pairs\n  source: {data}\n"
        "args: {scale: 2.0, skip: 1}\n"
    )
    out = tmp_path / "out"
    assert (
        main(
            [
                "run",
                "--tasks",
                "doubled_similarity",
                "--model",
                "counting-encoder",
                "--include-path",
                str(folder),
                "--output",
                str(out),
                "--seed",
                "0",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "run",
                "--tasks",
                "mean_similarity",
                "--model",
                "counting-encoder",
                "--data-dir",
                str(data),
                "--task-args",
                "skip=1",
                "--output",
                str(out),
                "--seed",
                "0",
            ]
        )
        == 0
    )
    preset, base = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert preset["task"] == "doubled_similarity" and preset["task_args"]["scale"] == 2.0
    assert preset["dataset"]["size"] == 2 and preset["dataset"]["source"] == str(data)  # skip=1 reached the loader
    assert preset["metrics"]["similarity"] == pytest.approx(2 * base["metrics"]["similarity"])
    capsys.readouterr()
    # --task-args still overrides a preset's value; --data-dir its source
    assert (
        main(
            [
                "run",
                "--tasks",
                "doubled_similarity",
                "--model",
                "counting-encoder",
                "--include-path",
                str(folder),
                "--task-args",
                "scale=1",
                "--data-dir",
                str(data),
                "--output",
                str(out),
                "--seed",
                "0",
            ]
        )
        == 0
    )
    third = json.loads((out / "results.jsonl").read_text().splitlines()[-1])
    assert third["metrics"]["similarity"] == pytest.approx(base["metrics"]["similarity"])


@pytest.mark.parametrize(
    ("text", "line", "key", "problem"),
    [
        (
            "name: x\nbase: mean_similarity\ndataset: {loader: line_pairs}\nargz: {scale: 2}\n",
            4,
            "argz",
            "unknown key: did you mean 'args'?",
        ),
        ("name: x\nbase: mean_similarity\ndataset: [line_pairs]\n", 3, "dataset", "must be a mapping"),
        (
            "name: x\nbase: mean_similarity\ndataset:\n  loader: line_pairs\n  splitt: a\n",
            5,
            "dataset.splitt",
            "unknown key: did you mean 'split'?",
        ),
        ("name: x\nname: y\n", 2, "name", "given twice"),
        ("name: x\nbase: mean_similarity\n? [a, b]\n: 1\n", 3, None, "a key must be a name, not a list"),  # issue 38.7
        ("name: x\nargs:\n  ? {k: 1}\n  : 2\n", 3, None, "a key must be a name, not a mapping"),
        ("name: x\nbase: [unclosed\n", 3, None, "not valid YAML"),
        (
            "presets:\n  - name: a\n    base: mean_similarity\n    dataset: {loader: line_pairs}\n    languages: en\n",
            5,
            "languages",
            "must be a list",
        ),
    ],
)
def test_a_bad_file_is_an_error_naming_file_line_and_key(tmp_path, text, line, key, problem):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(PresetError) as caught:
        read_presets(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line}" + (f", key {key!r}" if key else "") + ":")
    assert problem in message


def test_unknown_argument_or_base_is_reported_at_its_line_when_the_task_is_built(tmp_path):
    (tmp_path / "p.yaml").write_text(
        "name: p\nbase: mean_similarity\ndataset: {loader: line_pairs}\nargs:\n  scale: 2\n  scael: 3\n"
    )
    (tmp_path / "q.yaml").write_text("name: q\nbase: mean_similarty\ndataset: {loader: line_pairs}\n")
    registry = include_presets(fixture_registry("fake"), tmp_path)
    with pytest.raises(
        PresetError, match=r"p\.yaml, line 6, key 'args\.scael': neither task 'mean_similarity' nor loader"
    ):
        registry.load("task", "p")
    with pytest.raises(PresetError, match=r"q\.yaml, line 2, key 'base': unknown task 'mean_similarty'; did you mean"):
        registry.load("task", "q")


def test_defaults_merge_key_by_key_and_a_name_from_two_folders_collides(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "many.yml").write_text(
        "defaults:\n  base: mean_similarity\n  dataset: {loader: line_pairs, source: /d}\n  args: {scale: 3}\n"
        "presets:\n  - name: one\n  - name: two\n    dataset: {split: s}\n    args: {side_a: b}\n"
    )
    one, two = read_presets(tmp_path / "a" / "many.yml")
    assert (one.name, one.base, one.source, one.args) == ("one", "mean_similarity", "/d", {"scale": 3})
    assert (two.source, two.loader_args, two.args) == ("/d", {"split": "s"}, {"scale": 3, "side_a": "b"})
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "one.yaml").write_text("name: one\nbase: mean_similarity\ndataset: {loader: line_pairs}\n")
    registry = include_presets(fixture_registry("fake"), tmp_path / "a")
    include_presets(registry, tmp_path / "a")  # the same files again: nothing new, no collision
    with pytest.raises(HarnessError, match="task 'one' is registered by both plugin 'include-path:"):
        include_presets(registry, tmp_path / "b")


def test_an_unset_data_variable_is_a_clear_error(fake, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("MY_DATA", raising=False)
    (tmp_path / "e.yaml").write_text(
        "name: e\nbase: mean_similarity\ndataset: {loader: line_pairs, source: '${MY_DATA}/pairs'}\n"
    )
    assert (
        main(["run", "--tasks", "e", "--model", "counting-encoder", "--include-path", str(tmp_path), "--dry-run"]) == 2
    )
    assert "task 'e' reads its data from ${MY_DATA}/pairs" in capsys.readouterr().err
    monkeypatch.setenv("MY_DATA", str(tmp_path))
    fake_data(tmp_path / "pairs", ["a"], ["b"])
    assert (
        main(["run", "--tasks", "e", "--model", "counting-encoder", "--include-path", str(tmp_path), "--dry-run"]) == 0
    )


def test_shipped_presets_build_with_their_data_sources(monkeypatch):
    registry = build_registry()
    names = registry.names("task")
    for name in (
        "ikea_en_de_xlr",
        "ikea_de_en_corr",
        "ikea_fr_en_backretrieval",
        "multi30k_en_de_yisi2_filter",
        "multi30k_en_cs_bert_sum_filter",
        "commute_en_de_ic",
        "commute_en_zh_gtc",
        "xling_shapes_en_de_xlr",
    ):
        assert name in names
        assert registry.load("task", name).params  # every shipped preset builds
    monkeypatch.setenv("HARNESS_DATA_DIR", "/data")
    ikea = registry.load("task", "ikea_de_en_xlr")("ikea_de_en_xlr")
    assert (ikea.dataset, ikea.args["src"], ikea.args["tgt"], ikea.args["split"]) == ("ikea", "de", "en", "test")
    assert ikea.data_source() == "/data/ikea"
    assert registry.load("task", "commute_en_cs_tc")("t").args["lang"] == "cs"
    assert registry.load("task", "xling_shapes_en_de_xlr").data_source() is None  # generated
    assert registry.get("task", "multi30k_en_fr_yisi2_filter").info["family"] == "yisi"


def _user_preset(folder, source: str, name: str = "mine"):
    """A preset of mean_similarity in a user's folder, reading ``source``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mine.yaml"
    path.write_text(f"name: {name}\nbase: mean_similarity\ndataset:\n  loader: line_pairs\n  source: {source}\n")
    return path


def test_a_relative_source_is_read_from_the_presets_folder_whatever_the_working_directory(
    fake, tmp_path, monkeypatch, capsys
):
    presets = tmp_path / "user" / "presets"
    data = fake_data(presets / "pairs", ["a b", "c d"], ["x y", "z w"])
    _user_preset(presets, "pairs")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    argv = ["run", "--tasks", "mine", "--model", "counting-encoder", "--seed", "0", "--output", "out"]
    assert main([*argv, "--include-path", str(presets)]) == 0
    [line] = [json.loads(text) for text in (elsewhere / "out" / "results.jsonl").read_text().splitlines()]
    assert line["dataset"]["source"] == str(data)
    monkeypatch.chdir(tmp_path / "user")  # a relative --include-path too
    assert main([*argv, "--include-path", "presets"]) == 0
    assert json.loads((tmp_path / "user" / "out" / "results.jsonl").read_text())["dataset"]["source"] == str(data)


@pytest.mark.parametrize("source", ["../../etc", "pairs/../../x", ".."])
def test_a_relative_source_that_leaves_the_presets_folder_is_refused_at_its_line(tmp_path, source):
    path = _user_preset(tmp_path / "p", source)
    with pytest.raises(PresetError) as caught:
        read_presets(path)
    assert str(caught.value).startswith(f"{path}, line 5, key 'dataset.source': {source!r} leaves the preset's folder")


def test_a_missing_source_folder_and_an_unset_variable_name_the_presets_file_and_line(
    fake, tmp_path, monkeypatch, capsys
):
    path = _user_preset(tmp_path / "p", "absent")
    assert main(["run", "--tasks", "mine", "--model", "counting-encoder", "--include-path", str(path.parent)]) == 2
    err = capsys.readouterr().err
    assert f"{path}, line 5, key 'dataset.source': data folder '{tmp_path / 'p' / 'absent'}' does not exist" in err
    monkeypatch.delenv("NOT_SET_HERE", raising=False)
    path = _user_preset(tmp_path / "q", "${NOT_SET_HERE}/x", name="other")
    argv = ["run", "--tasks", "other", "--model", "counting-encoder", "--include-path", str(path.parent)]
    assert main([*argv, "--dry-run"]) == 2
    assert f"{path}, line 5, key 'dataset.source': task 'other' reads its data from ${{NOT_SET_HERE}}/x" in (
        capsys.readouterr().err
    )


def test_a_relative_hub_id_stays_a_hub_id_and_absolute_paths_are_kept(tmp_path):
    [hub] = read_presets(_user_preset(tmp_path / "h", "some-org/some-set"))
    assert hub.resolved_source() == "some-org/some-set"  # no such folder beside the preset
    (tmp_path / "h" / "some-org" / "some-set").mkdir(parents=True)
    assert hub.resolved_source() == str(tmp_path / "h" / "some-org" / "some-set")  # the folder beside it wins
    [absolute] = read_presets(_user_preset(tmp_path / "a", str(tmp_path / "elsewhere")))
    assert absolute.resolved_source() == str(tmp_path / "elsewhere")


def test_the_preset_class_exposes_the_values_it_sets(tmp_path):
    (tmp_path / "v.yaml").write_text(
        "name: v\nbase: mean_similarity\ndataset: {loader: line_pairs, source: d}\nargs: {scale: 2, skip: '1'}\n"
    )
    cls = include_presets(fixture_registry("fake"), tmp_path).load("task", "v")
    assert cls.preset_values == {"scale": 2.0, "skip": 1}  # converted to the parameters' types
    assert cls.params["scale"].default == 2.0 and cls.data_source() == str(tmp_path / "d")


def test_a_name_in_two_included_files_names_both_files(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "one.yaml").write_text(
            f"# {folder}\nname: one\nbase: mean_similarity\ndataset: {{loader: line_pairs}}\n"
        )
    registry = include_presets(fixture_registry("fake"), tmp_path / "a")
    with pytest.raises(PresetError) as caught:
        include_presets(registry, tmp_path / "b")
    assert str(caught.value) == (
        f"{tmp_path / 'b' / 'one.yaml'}, line 2, key 'name': task 'one' is registered by both plugin "
        f"'include-path:{tmp_path / 'a'}' ({tmp_path / 'a' / 'one.yaml'}, line 2) and plugin "
        f"'include-path:{tmp_path / 'b'}' (this file): rename one"
    )
