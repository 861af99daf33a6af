"""The trained xling-shapes-mmt is an offline model on the leaderboard's model table (issue 24.2): its card."""

from __future__ import annotations

import json

import numpy as np

from harness_models.packaged.converted import converted_folder
from harness_models.packaged.xling_mmt import XlingShapesMMT, recipe_key


def _safetensors(path, shapes: dict[str, list[int]]) -> None:
    """A safetensors file whose header declares ``shapes`` (float32 zeros)."""
    from safetensors.numpy import save_file

    path.parent.mkdir(parents=True, exist_ok=True)
    save_file({name: np.zeros(shape, dtype=np.float32) for name, shape in shapes.items()}, str(path))


def test_the_card_never_trains_and_counts_the_three_parts_once_trained(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_MODELS_DIR", str(tmp_path))
    model = XlingShapesMMT("xling-shapes-mmt", {})
    untrained = model.card()
    assert untrained["source"] == "packaged" and untrained["parameters"] is None
    assert untrained["languages"] == ["en", "de", "fr", "es", "cs"] and untrained["license"] == "Apache-2.0"
    assert not any(tmp_path.iterdir())  # nothing trained for a card

    folder = converted_folder("xling-shapes-mmt", recipe_key(model.recipe))
    _safetensors(folder / "text" / "model.safetensors", {"embed": [10, 4], "out": [4]})  # 44
    (folder / "text" / "config.json").write_text(json.dumps({"d_model": 4, "max_position_embeddings": 16}))
    _safetensors(folder / "resnet" / "model.safetensors", {"conv": [2, 3]})  # 6
    _safetensors(folder / "fusion.safetensors", {"gate": [4, 2], "bias": [2]})  # 10
    trained = model.card()
    assert trained["parameters"] == 44 + 6 + 10
    assert (trained["dimension"], trained["max_length"]) == (4, 16)
