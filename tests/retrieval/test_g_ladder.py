"""``harness g-sweep --image-models``: scene relevance and scene gain by hand, and a tiny ladder of fake image models."""

from __future__ import annotations

import json
from importlib import metadata
from importlib.metadata import EntryPoint

import numpy as np
import pytest

import harness.plugins.registry
from harness.cli import main
from harness.plugins.registry import build_registry
from harness_tasks.default_benchmark.benchmark import generate
from harness_tasks.retrieval.analysis import meta
from harness_tasks.retrieval.analysis.g_ladder import relevance, scene_gain, scene_tokens

TOKENS = [frozenset("ab"), frozenset("ac"), frozenset("d"), frozenset("abc")]
# Jaccard: 0-1 1/3, 0-3 2/3, 1-3 2/3, everything with 2: 0
REL = relevance(TOKENS)


def test_relevance_is_the_jaccard_overlap_of_the_attribute_sets():
    assert (
        pytest.approx(np.array([[1, 1 / 3, 0, 2 / 3], [1 / 3, 1, 0, 2 / 3], [0, 0, 1, 0], [2 / 3, 2 / 3, 0, 1]])) == REL
    )


def test_scene_tokens_name_each_groups_attributes_by_position():
    item = generate(1, 0).items[0]
    tokens = scene_tokens(item)
    assert f"background={item.scene.background}" in tokens and f"place={item.scene.place}" in tokens
    assert len(tokens) == 2 + 4 * len(item.scene.groups)
    assert f"0.shape={item.scene.groups[0].shape}" in tokens


def test_scene_gain_by_hand():
    # random g: mean relevance of the others, per image 1/3, 1/3, 0, 4/9 -> 5/18; ideal top 1: 2/3, 2/3, 0, 2/3 -> 1/2
    good = np.array([(1.0, 0.0), (0.0, 1.0), (-1.0, -1.0), (1.0, 1.0)])
    # image 3 ties 0 and 1 (both 2/3), image 2 ties 0 and 1 (both 0): every image gets its ideal
    assert scene_gain(good, REL, k=1) == pytest.approx(1.0)
    # 2 and 3 swapped: 0 and 1 now find 2 (relevance 0), 2 ties 0 and 1 (0), 3 ties 0 and 1 (2/3): got 1/6
    bad = good[[0, 1, 3, 2]]
    assert scene_gain(bad, REL, k=1) == pytest.approx((1 / 6 - 5 / 18) / (1 / 2 - 5 / 18))  # -0.5
    # a constant g ties everything: each image's expected top 1 is the mean of the others, exactly chance
    assert scene_gain(np.ones((4, 2)), REL, k=1) == pytest.approx(0.0)


@pytest.fixture
def fake_images(monkeypatch):
    """The installed plugins and the fake image encoders of ``retrieval.fake_images``."""
    installed = list(metadata.entry_points(group="harness"))
    registry = build_registry([*installed, EntryPoint("fake-images", "retrieval.fake_images", "harness")])
    monkeypatch.setattr(harness.plugins.registry, "_REGISTRY", registry)


def test_a_tiny_ladder_end_to_end(tmp_path, capsys, fake_images):
    out = tmp_path / "ladder"
    args = ["g-sweep", "--image-models", "features,block-means:blocks=8,constant-image", "--seeds", "2", "--k", "2"]
    models = ["--model", "random-encoder", "--model", "tfidf-char", "--model", "random-encoder:seed=1"]
    assert main([*args, *models, "--task-args", "size=30", "--output", str(out)]) == 0
    table = capsys.readouterr().out
    rows = {row["condition"]: row for row in json.loads((out / "ladder.json").read_text())["image_models"]}
    assert list(rows) == ["features", "block-means:blocks=8", "constant-image"]
    assert rows["constant-image"]["scene_gain"] == pytest.approx(0.0)  # every image ties: chance by construction
    items = generate(30, 0).items
    rel = relevance([scene_tokens(item) for item in items])
    from harness_tasks.default_benchmark.benchmark import dataset

    features = np.asarray(dataset(30, 0)["image_features"])
    assert rows["features"]["scene_gain"] == pytest.approx(scene_gain(features, rel, 2))
    # each rung's correlations are harness meta's on its own results, with g from that image model
    folder = out / "block-means_blocks=8"
    records = meta.load_records([str(folder)])
    assert {r.extra["g"]["model"]["name"] for r in records if r.task == "backretrieval"} == {"block-means"}
    expected = meta.meta_evaluate(meta.group_models(records))["correlations"]
    assert rows["block-means:blocks=8"]["correlations"] == json.loads(json.dumps(expected))
    assert table.splitlines()[1].startswith("features") and "gain@2" in table.splitlines()[0]
    assert (out / "ladder.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_ladder_plot_draws_the_defined_correlations_only(tmp_path):
    from harness_tasks.retrieval.analysis.g_ladder import plot_ladder

    defined = {"backretrieval": {"pearson": {"mean": 0.9, "std": 0.01}, "spearman": {"mean": 0.8, "std": 0.02}}}
    defined["corr"] = {"pearson": {"mean": 0.5, "std": 0.1}, "spearman": {"mean": None, "std": None}}
    rows = [
        {"condition": "lite0", "scene_gain": 0.52, "correlations": defined},
        {"condition": "constant", "scene_gain": 0.0, "correlations": {"backretrieval": {"pearson": {"mean": None}}}},
    ]
    drawn = plot_ladder(rows, tmp_path / "ladder.png", k=10, title="t")
    assert drawn["backretrieval/pearson"] == [("lite0", 0.52)] and drawn["backretrieval/spearman"] == [("lite0", 0.52)]
    assert drawn["corr/pearson"] == [("lite0", 0.52)] and drawn["corr/spearman"] == []  # undefined: no point
    assert (tmp_path / "ladder.png").stat().st_size > 0


def test_the_ladder_and_the_degradations_exclude_each_other(tmp_path, capsys):
    models = ["--model", "a", "--model", "b", "--model", "c"]
    assert main(["g-sweep", *models]) == 2
    err = capsys.readouterr().err
    assert "give --data-dir or --preset (degrade that data's image features), --tasks (tasks of the roles" in err
    assert main(["g-sweep", *models, "--data-dir", str(tmp_path), "--image-models", "features"]) == 2
    assert "--image-models runs the built-in tasks on xling-shapes: give it without --data-dir" in (
        capsys.readouterr().err
    )


def test_an_empty_image_model_list_is_refused(capsys):
    models = ["--model", "random-encoder", "--model", "tfidf-char", "--model", "random-encoder:seed=1"]
    assert main(["g-sweep", "--image-models", " , ", *models]) == 2
    assert "--image-models names no image model" in capsys.readouterr().err
