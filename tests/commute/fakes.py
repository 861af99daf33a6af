"""Fake translation scorers and helpers shared by the CoMMuTE task tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import Capability, MixedImage
from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.run.context import RunContext


class CharScorer(ModelAdapter):
    """log p of each character c is -(ord(c) % 10) / 10 / T; images ignored; token ids are the code points."""

    capabilities = frozenset({Capability.TRANSLATION_SCORER})
    calls: list[dict] = []

    def identity(self):
        return ModelIdentity(self.name, "tests:CharScorer", args=self.args)

    def score_translations(self, requests, temperature=1.0, output="logprobs"):
        CharScorer.calls.append({"n": len(requests), "temperature": temperature, "output": output})
        if output == "token_ids":
            return [np.array([ord(c) for c in r.target]) for r in requests]
        return [np.array([-(ord(c) % 10) / 10 / temperature for c in r.target]) for r in requests]


class TextOnlyCharScorer(CharScorer):
    """CharScorer declaring that its scores cannot depend on the image."""

    uses_images = False


def red(image) -> float:
    if isinstance(image, MixedImage):
        return sum(w * red(part) for part, w in zip(image.images, image.weights))
    return image.getpixel((0, 0))[0]


class RedScorer(ModelAdapter):
    """Every token of target '...#N' gets log p = -|red(image) - N| / 100: P = exp(|red - N| / 100)."""

    capabilities = frozenset({Capability.TRANSLATION_SCORER})

    def identity(self):
        return ModelIdentity(self.name, "tests:RedScorer", args=self.args)

    def score_translations(self, requests, temperature=1.0, output="logprobs"):
        return [np.full(3, -abs(red(r.image) - int(r.target.split("#")[1])) / 100) for r in requests]


def run_task(task, data, scorer):
    return task.evaluate(data, CachedModel(scorer, cache=None), RunContext([0]))


def solid_images(folder: Path, reds: dict[str, int]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in reds.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (8, 8), (value, 0, 0)).save(folder / name, format="PNG")
    return folder
