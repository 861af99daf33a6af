"""From CoMMuTE tuples to perplexity tables, through the model's (cached) translation scorer.

A table maps a slot (image label, target role) to P(s, image, target) for one tuple. Images
are named by a label (``a``, ``b``, ``mix``, or a candidate index) and given as a file path, a
pair of paths (their 50/50 pixel mix) or None; targets by their role (``a``, ``b``, ``inc_a``,
``inc_b``). Tuples are scored in chunks so that only one chunk's images are open at a time.

Options reach the scorer only when they differ from plain scoring (so plain runs share the
cache): ``temperature`` divides the logits; ``prefix_removal`` asks the scorer for the scored
token ids of the tuple's four translations and drops their longest shared token prefix from
every translation of the tuple before the perplexity is taken.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from harness.adapters.cached_model import CachedModel
from harness.adapters.capabilities import MixedImage, ScoreRequest, image_content_key, model_view
from harness.errors import DataError, HarnessError
from harness_tasks.commute.metrics import perplexity

if TYPE_CHECKING:
    from PIL import Image

SOURCE_LANG = "en"
CHUNK = 64  # tuples whose images are open at once
ImageRef = str | tuple[str, str] | None  # a path, a pair to mix 50/50, or no image
Slot = tuple[str, str]  # (image label, target role)
Opened = tuple["Image.Image | MixedImage | None", "str | None"]  # an image as scorers take it, and its content key


@dataclass(frozen=True)
class TupleJob:
    """One tuple to score: its source, translations by role, images by label, and the slots needed."""

    source: str
    targets: dict[str, str]
    images: dict[str, ImageRef]
    slots: tuple[Slot, ...]


@dataclass(frozen=True)
class ScoringSettings:
    """How perplexities are computed: the target language, temperature and prefix removal."""

    tgt_lang: str
    temperature: float = 1.0
    prefix_removal: bool = False


def open_rgb(path: str) -> Image.Image:
    """A decoded RGB PIL image, or a DataError naming the file."""
    from PIL import Image

    try:
        with Image.open(path) as image:
            view = model_view(image)
            return view.copy() if view is image else view  # closing the file releases the image it opened
    except (OSError, ValueError) as exc:
        raise DataError(path, f"cannot be read as an image ({exc})") from None


class OpenImages:
    """The images of one chunk, each opened once, with their content keys."""

    def __init__(self) -> None:
        self.opened: dict[ImageRef, Opened] = {}

    def get(self, ref: ImageRef) -> Opened:
        """(image, content key) for a path, a pair to mix, or None."""
        if ref not in self.opened:
            if ref is None:
                self.opened[ref] = (None, None)
            elif isinstance(ref, tuple):
                parts = [self.get(path) for path in ref]
                keys = "+".join(str(key) for _, key in parts)
                mixed = MixedImage(tuple(image for image, _ in parts), (0.5, 0.5))
                self.opened[ref] = (mixed, "mix50:" + hashlib.sha256(keys.encode()).hexdigest())
            else:
                image = open_rgb(ref)
                self.opened[ref] = (image, image_content_key(image))
        return self.opened[ref]


def common_prefix_length(sequences: Sequence[np.ndarray]) -> int:
    """The length of the longest prefix shared by all token id arrays."""
    length = min(len(s) for s in sequences)
    for position in range(length):
        if len({int(s[position]) for s in sequences}) > 1:
            return position
    return length


def shared_prefixes(model: CachedModel, jobs: Sequence[TupleJob], settings: ScoringSettings) -> list[int]:
    """Per tuple: the number of leading scored tokens its translations all share."""
    texts = [sorted(set(job.targets.values())) for job in jobs]
    requests = [
        ScoreRequest(job.source, text, None, None, SOURCE_LANG, settings.tgt_lang)
        for job, group in zip(jobs, texts)
        for text in group
    ]
    try:
        ids = model.score_translations(requests, output="token_ids")
    except TypeError:
        raise HarnessError("prefix_removal needs a scorer that reports token ids (output='token_ids')") from None
    lengths, start = [], 0
    for group in texts:
        lengths.append(common_prefix_length(ids[start : start + len(group)]))
        start += len(group)
    return lengths


def score_tables(model: CachedModel, jobs: Sequence[TupleJob], settings: ScoringSettings) -> list[dict[Slot, float]]:
    """P(s, image, target) for every slot of every tuple, in order."""
    tables: list[dict[Slot, float]] = []
    for start in range(0, len(jobs), CHUNK):
        tables += _score_chunk(model, jobs[start : start + CHUNK], settings)
    return tables


def _score_chunk(model: CachedModel, jobs: Sequence[TupleJob], settings: ScoringSettings) -> list[dict[Slot, float]]:
    images = OpenImages()
    requests = []
    for job in jobs:
        for label, role in job.slots:
            image, key = images.get(job.images[label])
            requests.append(ScoreRequest(job.source, job.targets[role], image, key, SOURCE_LANG, settings.tgt_lang))
    options = {"temperature": settings.temperature} if settings.temperature != 1.0 else {}
    logprobs = iter(model.score_translations(requests, **options))
    skips = shared_prefixes(model, jobs, settings) if settings.prefix_removal else [0] * len(jobs)
    tables = []
    for job, skip in zip(jobs, skips):
        table = {}
        for slot in job.slots:
            kept = next(logprobs)[skip:]
            if len(kept) == 0:
                raise HarnessError(
                    f"no target tokens left to score after removing the shared prefix of {job.targets[slot[1]]!r}"
                )
            table[slot] = perplexity(kept)
        tables.append(table)
    return tables
