"""Preflight: every task's preconditions are checked before any inference; --dry-run prints the plan."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SHARED_DATA
from fixtures.plugins.fake import CountingEncoder, fake_data
from fixtures.registries import fixture_registry

import harness.plugins.registry
from harness.cli import main


def tiny_commute(folder: Path) -> Path:
    """Two CoMMuTE tuples in the original layout (en-fr), no images."""
    pair = folder / "en-fr"
    pair.mkdir(parents=True)
    (pair / "src.en").write_text("the bank\nthe bank\na bat\na bat\n")
    (pair / "correct.fr").write_text("la banque\nla rive\nune batte\nune chauve-souris\n")
    (pair / "incorrect.fr").write_text("la rive\nla banque\nune chauve-souris\nune batte\n")
    (pair / "img.order").write_text("1.jpg\n2.jpg\n3.jpg\n4.jpg\n")
    return folder


def test_commute_ic_without_images_fails_before_any_scoring(tmp_path, monkeypatch, capsys):
    """TC comes first and needs no images, but IC does: nothing may be scored before the refusal."""
    from harness_models.packaged.gemma import Gemma270m

    def never(self):
        raise AssertionError("weights loaded before the preflight refused the run")

    monkeypatch.setattr(Gemma270m, "load", never)
    data = (
        SHARED_DATA / "commute" if (SHARED_DATA / "commute" / "en-fr").is_dir() else tiny_commute(tmp_path / "commute")
    )
    out = tmp_path / "out"
    code = main(
        [
            "run",
            "--tasks",
            "commute_tc,commute_ic",
            "--model",
            "gemma-270m",
            "--data-dir",
            str(data),
            "--output",
            str(out),
        ]
    )
    assert code == 2
    assert "task 'commute_ic' compares images: pass --images DIR" in capsys.readouterr().err
    assert not (out / "results.jsonl").exists() or (out / "results.jsonl").read_text() == ""


@pytest.fixture
def fake(monkeypatch, fresh_cache):
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", fixture_registry("fake"))
    CountingEncoder.calls.clear()


def test_a_later_tasks_missing_data_stops_the_run_before_the_first_task_computes(fake, tmp_path, capsys):
    good = fake_data(tmp_path / "good", ["a", "b"], ["c", "d"])
    presets = tmp_path / "presets"
    presets.mkdir()
    (presets / "two.yaml").write_text(
        "presets:\n"
        f"  - {{name: first, base: mean_similarity, dataset: {{loader: line_pairs, source: '{good}'}}}}\n"
        f"  - {{name: second, base: mean_similarity, dataset: {{loader: line_pairs, source: '{tmp_path / 'absent'}'}}}}\n"
    )
    code = main(
        [
            "run",
            "--tasks",
            "first,second",
            "--model",
            "counting-encoder",
            "--include-path",
            str(presets),
            "--output",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    assert f"data folder '{tmp_path / 'absent'}' does not exist" in capsys.readouterr().err
    assert CountingEncoder.calls == []  # the first task did not run


def test_dry_run_counts_cached_and_missing_outputs_and_computes_nothing(fake, tmp_path, capsys):
    # side a has a duplicate text: 2 distinct texts in language xx, 3 in yy -> 5 distinct model outputs
    data = fake_data(tmp_path / "data", ["a b", "a b", "e f"], ["x y", "z w", "u v"])
    argv = [
        "run",
        "--tasks",
        "mean_similarity",
        "--model",
        "counting-encoder",
        "--data-dir",
        str(data),
        "--seeds",
        "2",
        "--output",
        str(tmp_path / "out"),
    ]
    assert main([*argv, "--dry-run"]) == 0
    plan = capsys.readouterr().out
    assert "task mean_similarity v1" in plan
    assert "args: scale=1.0, side_a=a, skip=0" in plan
    assert "3 examples" in plan and "seeds: [0, 1]" in plan
    assert "model outputs: 0 cached, 5 to compute" in plan
    assert "signature: mean_similarity|" in plan
    assert CountingEncoder.calls == [] and not (tmp_path / "out").exists()
    assert main(argv) == 0
    capsys.readouterr()
    assert main([*argv, "--dry-run"]) == 0
    assert "model outputs: 5 cached, 0 to compute" in capsys.readouterr().out


def test_dry_run_counts_an_output_shared_by_two_tasks_once(fake, tmp_path, capsys):
    data = fake_data(tmp_path / "data", ["a", "b"], ["c", "d"])
    presets = tmp_path / "p"
    presets.mkdir()
    (presets / "twice.yaml").write_text(
        "name: again\nbase: mean_similarity\ndataset: {loader: line_pairs}\nargs: {scale: 2}\n"
    )
    assert (
        main(
            [
                "run",
                "--tasks",
                "mean_similarity,again",
                "--model",
                "counting-encoder",
                "--data-dir",
                str(data),
                "--include-path",
                str(presets),
                "--dry-run",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.count("model outputs: 0 cached, 4 to compute") == 1
    # the second task asks for the same four, and says where they are counted (issue 36.6: not a bare "0, 0")
    assert out.count("model outputs: 0 cached, 0 to compute; 4 shared with mean_similarity (counted there)") == 1


class Vectors:
    """An MTEB-style encoder that counts its calls."""

    calls = 0

    def encode(self, texts, **kwargs):
        Vectors.calls += 1
        return [[float(len(t)), 1.0] for t in texts]


def test_an_unknown_auxiliary_model_or_an_unwritable_output_stops_the_run_before_any_encoding(tmp_path, fresh_cache):
    import harness

    Vectors.calls = 0
    with pytest.raises(
        harness.HarnessError, match=r"unknown model 'efficientnet-lite9'; did you mean [^?]*'efficientnet-lite0'"
    ):
        harness.evaluate(
            "xlr,backretrieval", Vectors(), task_args="size=20,n=5", image_model="efficientnet-lite9", output=None
        )
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(harness.HarnessError, match="is not writable"):
        harness.evaluate("xlr", Vectors(), task_args="size=20,n=5", output=blocker / "out")
    assert Vectors.calls == 0
