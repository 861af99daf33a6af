"""Issue 23.5: preset names and bases are validated when read, with the file and line.

On the old code a name with ``/`` lost its result at ``--log-samples``, one with ``|`` made the results line
unreadable, and a base naming itself or a cycle of bases ended in RecursionError.
"""

from __future__ import annotations

import pytest
from faults.conftest import run_cli

from harness.run.presets import PresetError, include_presets, read_presets


@pytest.mark.parametrize("name", ["a/b", "a|b", "two words", "x.y", "-dash", "é"])
def test_a_name_outside_the_task_name_grammar_is_refused_at_its_line(tmp_path, name):
    path = tmp_path / "p.yaml"
    path.write_text(f"base: mean_similarity\nname: '{name}'\ndataset: {{loader: line_pairs}}\n")
    with pytest.raises(PresetError) as caught:
        read_presets(path)
    assert str(caught.value).startswith(f"{path}, line 2, key 'name': {name!r} is not a valid task name")


def test_a_preset_that_is_its_own_base_is_refused_at_its_line(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("name: loop\nbase: loop\ndataset: {loader: line_pairs}\n")
    with pytest.raises(PresetError, match=r"p\.yaml, line 2, key 'base': a preset cannot be its own base \('loop'\)"):
        read_presets(path)


def test_a_cycle_of_bases_names_every_file_and_line(registry, tmp_path, capsys):
    (tmp_path / "a.yaml").write_text("name: a\ndataset: {loader: line_pairs}\nbase: b\n")
    (tmp_path / "b.yaml").write_text("base: c\nname: b\ndataset: {loader: line_pairs}\n")
    (tmp_path / "c.yaml").write_text("name: c\nbase: a\ndataset: {loader: line_pairs}\n")
    include_presets(registry, tmp_path)
    with pytest.raises(PresetError) as caught:
        registry.load("task", "a")
    a, b, c = (tmp_path / f"{n}.yaml" for n in "abc")
    assert str(caught.value) == (
        f"{a}, line 3, key 'base': the bases form a cycle: a ({a}, line 3) -> b ({b}, line 1) -> c ({c}, line 2) "
        f"-> a ({a}, line 3)"
    )
    code, _, err = run_cli(
        capsys, "run", "--tasks", "b", "--model", "counting-encoder", "--include-path", str(tmp_path), "--dry-run"
    )
    assert code == 2 and "the bases form a cycle: b" in err and "RecursionError" not in err


def test_a_complex_key_is_one_line_naming_file_and_line(tmp_path, capsys):
    # issue 38.7: ``? [a, b]`` made an unhashable key (TypeError) instead of an error naming the line
    path = tmp_path / "p.yaml"
    path.write_text("name: p\nbase: mean_similarity\ndataset: {loader: line_pairs}\n? [a, b]\n: 1\n")
    code, _, err = run_cli(
        capsys, "run", "--tasks", "p", "--model", "counting-encoder", "--include-path", str(tmp_path), "--dry-run"
    )
    assert (code, err) == (2, f"harness: error: {path}, line 4: a key must be a name, not a list\n")
