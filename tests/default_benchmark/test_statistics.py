"""The benchmark separates encoders: a random text encoder scores chance (k/n) on xlr and
backretrieval, a lexical one is far above, and an oracle that knows each caption's scene is
perfect on xlr; with the default pixel-statistics g, backretrieval follows text quality."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from harness.run.context import RunContext
from harness_tasks.default_benchmark.benchmark import generate
from harness_tasks.default_benchmark.loader import XlingShapesLoader
from harness_tasks.default_benchmark.scenes import (
    BACKGROUNDS,
    COLOURS,
    COUNTS,
    POSITIONS,
    RELATIONS,
    SHAPES,
    SIZES,
    Scene,
)
from harness_tasks.retrieval.tasks import BackRetrieval, Xlr

SEEDS = list(range(25))
K, N = 10, 200
PAIR = {"src": "en", "tgt": "de"}


class LookupEncoder:
    """A text encoder given as a function of (text, language), standing in for a CachedModel."""

    def __init__(self, encode):
        self.encode = encode

    def encode_texts(self, texts, lang=None):
        return np.stack([self.encode(t, lang) for t in texts]).astype(np.float32)


@pytest.fixture(scope="module")
def data():
    return XlingShapesLoader("xling-shapes").load(None, {}).data


@pytest.fixture(scope="module")
def scene_of():
    """Each caption (any language) -> its scene."""
    bench = generate(1000, 0)
    return {text: item.scene for texts in bench.captions.values() for text, item in zip(texts, bench.items)}


def attributes(scene: Scene) -> np.ndarray:
    """A bag of the scene's attribute values: what a perfect multilingual encoder would know."""
    values = [f"bg:{scene.background}", f"place:{scene.place}"]
    for role, group in zip("ab", scene.groups):
        values += [f"{role}:{group.count}", f"{role}:{group.size}", f"{role}:{group.colour}", f"{role}:{group.shape}"]
    vocabulary = (
        [f"bg:{b}" for b in BACKGROUNDS]
        + [f"place:{p}" for p in POSITIONS + RELATIONS]
        + [f"{role}:{v}" for role in "ab" for v in (*COUNTS, *SIZES, *COLOURS, *SHAPES)]
    )
    return np.isin(vocabulary, values).astype(float)


def random_vector(text: str, lang: str) -> np.ndarray:
    return np.random.default_rng(int(hashlib.sha256(f"{lang}{text}".encode()).hexdigest()[:8], 16)).standard_normal(64)


def recall(task, data, encoder) -> float:
    return float(np.mean([m["recall@k"] for m in task.evaluate(data, encoder, RunContext(SEEDS)).per_seed]))


def near_chance(value: float, chance: float, n: int) -> bool:
    return abs(value - chance) < 5 * math.sqrt(chance * (1 - chance) / (n * len(SEEDS)))


def test_random_text_encoder_scores_chance(data):
    encoder = LookupEncoder(random_vector)
    assert near_chance(recall(Xlr("xlr", {**PAIR, "n": N, "k": K}), data, encoder), K / N, N)
    assert near_chance(recall(BackRetrieval("backretrieval", {**PAIR, "n": N, "k": K}), data, encoder), K / N, N)


def test_oracle_is_perfect_on_xlr_and_lexical_overlap_is_far_above_chance(data, scene_of):
    index = {scene: i for i, scene in enumerate(dict.fromkeys(scene_of.values()))}
    one_hot = np.eye(len(index))
    oracle = LookupEncoder(lambda text, lang: one_hot[index[scene_of[text]]])
    assert recall(Xlr("xlr", {**PAIR, "n": N}), data, oracle) == 1.0
    from sklearn.feature_extraction.text import TfidfVectorizer

    texts = list(data["text_en"]) + list(data["text_fr"])
    vectors = dict(zip(texts, TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 4)).fit_transform(texts).toarray()))
    lexical = LookupEncoder(lambda text, lang: vectors[text])
    assert recall(Xlr("xlr", {"src": "en", "tgt": "fr", "n": N}), data, lexical) > 5 * K / N


def test_backretrieval_with_pixel_statistics_follows_text_quality(data, scene_of):
    task = BackRetrieval("backretrieval", {**PAIR, "n": N, "k": K})
    semantic = recall(task, data, LookupEncoder(lambda text, lang: attributes(scene_of[text])))
    blurred = recall(
        task, data, LookupEncoder(lambda text, lang: attributes(scene_of[text]) + random_vector(text, lang)[:52])
    )
    assert semantic > blurred > 1.5 * K / N and semantic > 6 * K / N
