"""The encoder zoo: many offline text encoders of clearly different quality, for the BackRetrieval meta-evaluation.

Registrations only (the adapters are in ``zoo_encoders``; nothing is imported until a model is used).
``ZOO`` lists every member, the packaged encoders registered elsewhere included, in a fixed order;
``benchmarks/encoder_zoo.py`` runs them all. Members, by kind:

- every layer of ``e5-small-hf`` (0-12) and ``minilm`` (0-6), mean-pooled and CLS-pooled
  (``zoo-e5-l7-mean``, ``zoo-minilm-l3-cls``); layer 0's CLS vector is the same for every text
  (the [CLS] embedding at position 0), so it is left out;
- TF-IDF over character n-grams (2-4, 1-3, 3-5, and 2-4 hashed into 1,024 dimensions) and over words
  (unigrams, uni- and bigrams);
- ``lexical-ngrams``' word vectors mean-pooled; hashed bags of words (256 and 32 dimensions);
- ``e5-small`` and its degraded presets (truncated to 48, 24, 12, 6 dimensions; Gaussian noise of
  std 0.04, 0.06, 0.08, 0.12 per dimension on the unit vector);
- two random encoders (seeds 0 and 1): chance.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ADAPTERS = "harness_models.packaged.zoo_encoders"
DEGRADED = "harness_models.packaged.baselines:DegradedEncoder"
RANDOM = "harness_models.packaged.baselines:RandomEncoder"
LAYERS = {"e5": ("e5-small-hf", 12), "minilm": ("minilm", 6)}
TFIDF = {
    "zoo-tfidf-char24": ({"analyzer": "char_wb", "ngram_min": 2, "ngram_max": 4}, "character 2-4-grams"),
    "zoo-tfidf-char13": ({"analyzer": "char_wb", "ngram_min": 1, "ngram_max": 3}, "character 1-3-grams"),
    "zoo-tfidf-char35": ({"analyzer": "char_wb", "ngram_min": 3, "ngram_max": 5}, "character 3-5-grams"),
    "zoo-tfidf-char24-d1024": (
        {"analyzer": "char_wb", "ngram_min": 2, "ngram_max": 4, "features": 1024},
        "character 2-4-grams hashed into 1,024 dimensions",
    ),
    "zoo-tfidf-word1": ({"analyzer": "word", "ngram_min": 1, "ngram_max": 1}, "words"),
    "zoo-tfidf-word12": ({"analyzer": "word", "ngram_min": 1, "ngram_max": 2}, "words and word bigrams"),
}
BAGS = {"zoo-toy-bow256": 256, "zoo-toy-bow32": 32}
ZOO_TRUNCATE = (24, 6)
ZOO_NOISE = (0.06, 0.12)
PACKAGED = (  # registered in harness_models.packaged.__init__, members of the zoo too
    "e5-small",
    "e5-small-trunc48",
    "e5-small-trunc12",
    "e5-small-noise0.04",
    "e5-small-noise0.08",
    "random-encoder",
)

Register = Callable[..., Any]


def layer_names() -> list[tuple[str, str, int, str]]:
    """(name, base, layer, pooling) of every layer preset: layers 0..L mean-pooled, 1..L CLS-pooled."""
    return [
        (f"zoo-{short}-l{layer}-{pooling}", base, layer, pooling)
        for short, (base, depth) in LAYERS.items()
        for pooling in ("mean", "cls")
        for layer in range(0 if pooling == "mean" else 1, depth + 1)
    ]


def register_zoo(register: Register) -> None:
    """Register every zoo preset that is not registered elsewhere (all run offline)."""
    for name, base, layer, pooling in layer_names():
        register(
            name,
            f"{ADAPTERS}:LayerPooled",
            f"{base} hidden_states[{layer}], {pooling}-pooled, normalised (encoder zoo).",
            preset={"base": base, "layer": layer, "pooling": pooling},
        )
    for name, (preset, what) in TFIDF.items():
        register(
            name, f"{ADAPTERS}:Tfidf", f"TF-IDF over {what}, fitted per language side (encoder zoo).", preset=preset
        )
    register(
        "zoo-lexical-ngrams",
        f"{ADAPTERS}:PooledNgrams",
        "lexical-ngrams' word vectors (hashed character 2-4-grams) mean-pooled (encoder zoo).",
    )
    for name, dim in BAGS.items():
        register(
            name,
            f"{ADAPTERS}:HashedWords",
            f"Hashed bag of words, {dim} dimensions (encoder zoo).",
            preset={"dim": dim},
        )
    for k in ZOO_TRUNCATE:
        register(
            f"zoo-e5-trunc{k}",
            DEGRADED,
            f"e5-small cut to its first {k} dimensions (encoder zoo).",
            preset={"base": "e5-small", "truncate": k},
        )
    for sigma in ZOO_NOISE:
        register(
            f"zoo-e5-noise{sigma}",
            DEGRADED,
            f"e5-small with seeded Gaussian noise (std {sigma}) added (encoder zoo).",
            preset={"base": "e5-small", "noise": sigma},
        )
    register(
        "zoo-random-seed1", RANDOM, "A fixed random unit vector per text, seed 1 (encoder zoo).", preset={"seed": 1}
    )


def zoo_names() -> list[str]:
    """Every member of the zoo, in a fixed order: the packaged encoders, then the zoo's own presets."""
    return [
        *PACKAGED,
        *(name for name, *_ in layer_names()),
        *TFIDF,
        "zoo-lexical-ngrams",
        *BAGS,
        *(f"zoo-e5-trunc{k}" for k in ZOO_TRUNCATE),
        *(f"zoo-e5-noise{sigma}" for sigma in ZOO_NOISE),
        "zoo-random-seed1",
    ]
