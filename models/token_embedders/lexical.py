"""``lexical-ngrams``: a sanity-check token embedder that sees only spelling.

Units are the words of a text (``\\w+`` runs, Unicode-aware); each word's vector is its bag of
hashed character n-grams (scikit-learn's ``HashingVectorizer``, ``char_wb``), L2-normalised.
Two units are similar exactly as far as they share n-grams, so YiSi-2 with this model measures
lexical overlap (names, numbers, cognates): a floor that a real encoder should beat, and a
check that a task rewards overlap at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from harness.adapters.capabilities import Capability, TokenEmbeddings
from harness.adapters.model import ModelAdapter, ModelIdentity
from harness.params import Param

WORD = re.compile(r"\w+")


class LexicalNgramEmbedder(ModelAdapter):
    """Hashed character n-gram vectors per word (no weights, no context)."""

    capabilities = frozenset({Capability.TOKEN_EMBEDDER})
    params = {
        "ngram_min": Param(2, "shortest character n-gram", min=1),
        "ngram_max": Param(4, "longest character n-gram", min=1),
        "features": Param(2048, "number of hashed n-gram buckets (the vector size)", min=1),
        "lowercase": Param(True, "lowercase before extracting n-grams"),
    }

    def identity(self) -> ModelIdentity:
        """No weights: the identity is the parameters and the scikit-learn version."""
        import sklearn

        return ModelIdentity(self.name, self.adapter_name, "scikit-learn", sklearn.__version__, self.args, "float32")

    def card(self) -> dict[str, Any]:
        """No weights: ``features``-dimensional vectors, shipped with the harness."""
        return {**super().card(), "parameters": 0, "dimension": self.args["features"], "source": "packaged"}

    def embed_tokens(self, texts: Sequence[str], lang: str | None = None) -> list[TokenEmbeddings]:
        """Words and their n-gram vectors, per text."""
        from sklearn.feature_extraction.text import HashingVectorizer

        hashing = HashingVectorizer(
            analyzer="char_wb",
            ngram_range=(self.args["ngram_min"], self.args["ngram_max"]),
            n_features=self.args["features"],
            alternate_sign=False,
            norm="l2",
            lowercase=self.args["lowercase"],
        )
        words = [WORD.findall(text) for text in texts]
        flat = [w for text_words in words for w in text_words]
        vectors = (
            hashing.transform(flat).toarray().astype(np.float32)
            if flat
            else np.zeros((0, self.args["features"]), np.float32)
        )
        results, start = [], 0
        for text_words in words:
            results.append(TokenEmbeddings(text_words, vectors[start : start + len(text_words)]))
            start += len(text_words)
        return results
