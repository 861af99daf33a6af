"""``xling-shapes-mmt``: the recipe on a tiny budget gives a Gated Fusion folder; the preset trains it once
and caches it; ``blank_images=true`` makes IC undefined and TC 0.5."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from harness.adapters.capabilities import ScoreRequest
from harness.cli import main
from harness.results.records import read_records
from harness_models.packaged.xling_mmt import XlingShapesMMT, build, recipe_key
from harness_models.translation.blank import BlankableGatedFusion
from harness_models.translation.gated_fusion import GatedFusionScorer
from harness_models.translation.shapes_recipe import Recipe
from harness_tasks.default_benchmark.contrastive import write_contrastive

TINY = Recipe(captions=10, pronouns=40, vision_images=40, vision_steps=3, translation_steps=3, batch=8, vocab=300)
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("xling-mmt")
    build(folder, TINY)
    return folder


@pytest.fixture(scope="module")
def contrastive(tmp_path_factory):
    return write_contrastive(tmp_path_factory.mktemp("set"), tuples=3, candidates=1, languages=("fr",))


def request(contrastive, side, target="Elle est rouge."):
    image = Image.open(contrastive / "en-fr" / "images" / f"1-{side}.png")
    return ScoreRequest("It is red.", target, image=image, image_key=side, src_lang="en", tgt_lang="fr")


def test_the_recipe_writes_a_gated_fusion_folder_that_loads_through_the_adapter(tiny_folder, contrastive):
    config = json.loads((tiny_folder / "config.json").read_text())
    assert config["model_type"] == "gated_fusion" and config["recipe"]["translation_steps"] == 3
    assert {p.name for p in tiny_folder.iterdir()} >= {"text", "resnet", "fusion.safetensors", "config.json"}
    scorer = GatedFusionScorer("gated-fusion", {"pretrained": str(tiny_folder)})
    a, b = scorer.score_translations([request(contrastive, "a"), request(contrastive, "b")])
    assert a.shape == b.shape and len(a) >= 2 and np.isfinite(a).all()
    assert np.abs(a - b).max() > 1e-6  # the image reaches the scores


def test_blank_images_gives_one_score_whatever_the_image_and_enters_the_identity(tiny_folder, contrastive):
    blank = BlankableGatedFusion("gated-fusion", {"pretrained": str(tiny_folder), "blank_images": "true"})
    plain = BlankableGatedFusion("gated-fusion", {"pretrained": str(tiny_folder)})
    assert blank.uses_images is False and plain.uses_images is True
    assert blank.identity().args["blank_images"] is True and plain.identity().args["blank_images"] is False
    a, b = blank.score_translations([request(contrastive, "a"), request(contrastive, "b")])
    assert np.array_equal(a, b)


def test_the_preset_trains_once_then_runs_offline_and_the_blanked_one_has_ic_undefined(
    tiny_folder, contrastive, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(XlingShapesMMT, "recipe", TINY)
    images = str(contrastive / "en-fr" / "images")
    run = ["run", "--tasks", "commute_tc,commute_ic", "--model", "xling-shapes-mmt", "--data-dir", str(contrastive)]
    assert main([*run, "--images", images, "--output", str(tmp_path / "plain")]) == 0
    assert "training xling-shapes-mmt" in capsys.readouterr().err
    trained = tmp_path / "models" / f"xling-shapes-mmt-{recipe_key(TINY).replace(':', '-')}"
    assert (trained / "config.json").is_file()
    records, _ = read_records(tmp_path / "plain" / "results.jsonl")
    ic = next(r for r in records if r.task == "commute_ic")
    assert ic.metrics["ic"] is not None and 0 <= ic.metrics["ic"] <= 1

    assert (
        main([*run, "--images", images, "--model-args", "blank_images=true", "--output", str(tmp_path / "blank")]) == 0
    )
    assert "training" not in capsys.readouterr().err  # cached
    records, _ = read_records(tmp_path / "blank" / "results.jsonl")
    by_task = {r.task: r for r in records}
    assert by_task["commute_ic"].metrics["ic"] is None and "commute_ic" in by_task
    assert "ic" in by_task["commute_ic"].undefined
    assert by_task["commute_tc"].metrics["tc"] == 0.5
    assert by_task["commute_tc"].model["args"]["blank_images"] is True

    from harness_tasks.default_benchmark.contrastive_figures import main as figures

    files = [str(tmp_path / run / "results.jsonl") for run in ("plain", "blank")]
    assert figures([str(tmp_path / "figures"), str(contrastive), *files]) == 0
    table = capsys.readouterr().out
    assert "| xling-shapes-mmt (blank images) | fr | 0.500 [0.50, 0.50] | undefined | - | - |" in table
    assert {p.name for p in (tmp_path / "figures").iterdir()} == {
        "commute_xling_metrics.png",
        "commute_xling_analyses.png",
        "commute_xling_examples.png",
    }


def test_training_is_deterministic(tiny_folder, tmp_path):
    build(tmp_path, TINY)
    for name in ("fusion.safetensors", "text/model.safetensors", "resnet/model.safetensors", "text/vocab.json"):
        assert (tmp_path / name).read_bytes() == (tiny_folder / name).read_bytes(), name
