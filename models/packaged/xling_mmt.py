"""``xling-shapes-mmt``: a small Gated Fusion model trained here on the default benchmark's captions.

Trained on first use on the CPU (a few minutes; ``harness_models.translation.shapes_recipe``)
from data the harness generates (``xling-shapes`` captions and pronoun sentences whose gender
only the image shows), then kept in the converted-models folder under a name that hashes the
recipe and the generator version. It loads as any Gated Fusion folder does. ``blank_images=true``
gives the same model with its image input blanked (``harness_models.translation.blank``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from harness.adapters.capabilities import Capability
from harness.adapters.model import ModelIdentity
from harness_models.translation.blank import BlankableGatedFusion
from harness_models.translation.shapes_recipe import Recipe, train, training_data

RECIPE_VERSION = 1
TRAINED_ARGS = ("pretrained", "text_model", "image_model", "fusion")


def recipe_key(recipe: Recipe) -> str:
    """A hash of the recipe, its version and the benchmark generator's version."""
    from harness_tasks.default_benchmark.scenes import GENERATOR_VERSION

    text = json.dumps(
        {"recipe": recipe.key(), "version": RECIPE_VERSION, "generator": GENERATOR_VERSION}, sort_keys=True
    )
    return "recipe:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def benchmark_captions(size: int, seed: int) -> tuple[list[Any], list[dict[str, str]]]:
    """The images and per-item captions (every language) of ``xling-shapes`` (size, seed)."""
    from harness_tasks.default_benchmark.benchmark import generate

    bench = generate(size, seed)
    return bench.images, [{lang: texts[i] for lang, texts in bench.captions.items()} for i in range(size)]


def build(folder: Path, recipe: Recipe) -> None:
    """Generate the training data and train the model into ``folder``."""
    from harness_tasks.default_benchmark.pronouns import training_examples

    data = training_data(recipe, benchmark_captions, training_examples)
    train(folder, recipe, data, lambda line: print(f"harness: xling-shapes-mmt {line}", file=sys.stderr, flush=True))


def folder_of(recipe: Recipe) -> Path:
    """Where the model of ``recipe`` is kept once trained (named, not trained)."""
    from harness_models.packaged.converted import converted_folder

    return converted_folder("xling-shapes-mmt", recipe_key(recipe))


def trained_folder(recipe: Recipe) -> Path:
    """The trained model's folder, trained first if it is not in the converted-models folder (or fails its manifest)."""
    from harness.artefacts import ensure_built

    return ensure_built(
        folder_of(recipe),
        lambda path: build(path, recipe),
        "training xling-shapes-mmt (Gated Fusion, one CPU thread, a few minutes)",
    )


class XlingShapesMMT(BlankableGatedFusion):
    """The trained Gated Fusion preset."""

    params = {key: value for key, value in BlankableGatedFusion.params.items() if key not in TRAINED_ARGS}
    recipe = Recipe()

    def identity(self) -> ModelIdentity:
        """The recipe's hash and the arguments (nothing is trained or loaded)."""
        key = recipe_key(self.recipe)
        return ModelIdentity(
            self.name,
            self.adapter_name,
            f"trained:xling-shapes-mmt/{key}",
            key,
            {k: self.args[k] for k in self.params},
            self.args["dtype"],
        )

    @property
    def card_facts(self) -> dict[str, Any]:  # type: ignore[override]
        """Built here, offline, from the recipe: its languages and the project's licence; once trained (a card never
        trains), the parameters of its three parts and the text model's width and length limit."""
        from harness.adapters.card import folder_card

        facts: dict[str, Any] = {
            "source": "packaged",
            "languages": ["en", "de", "fr", "es", "cs"],
            "license": "Apache-2.0",
            "control": "its images blanked (blank_images=true): what it does without seeing them"
            if self.args.get("blank_images")
            else None,
        }
        folder = folder_of(self.recipe)
        if folder.is_dir():
            text, image, fusion = (folder_card(part) for part in (folder / "text", folder / "resnet", folder))
            counts = [text["parameters"], image["parameters"], fusion["parameters"]]
            if all(isinstance(count, int) for count in counts):
                facts["parameters"] = sum(counts)
            facts.update(dimension=text["dimension"], max_length=text["max_length"])
        return facts

    def artefacts(self, capability: Capability) -> list[Path]:
        """The trained model's folder."""
        return [folder_of(self.recipe)]

    def load(self) -> None:
        """Train on first use, then load the folder as ``gated-fusion`` loads any folder."""
        from harness_models.token_embedders.hf import quiet_transformers

        self.args = {**self.args, "pretrained": str(trained_folder(self.recipe))}
        with quiet_transformers():  # no "Loading weights" bar for a folder of the harness's own making
            super().load()
